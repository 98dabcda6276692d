package stdio

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/store"
)

// The record of the subreaper mode: a file per bot process in the state
// directory, "<bot pid>-<bot start>.procs", rewritten (store.WriteFile)
// whenever the processes known to its trees change, touched at every scan
// otherwise, and removed by Close. A bot killed with SIGKILL leaves it
// behind, and the next start ends what it lists (reapRecords): the
// processes by pid and start time, and the members of the sessions and
// groups those processes led that started before the bot died (by then
// the record was touched no longer than a scan interval ago): a session
// whose pid was reused since then is someone else's; a rewrite's temporary
// file that a kill left beside it goes too. The header names the
// boot and the pid namespace (the pids of another mean other processes)
// and the scan interval.
//
//	volcanicbot-processes 1
//	boot <boot id>
//	pidns <pid namespace>
//	scan <seconds>
//	bot <pid> <start>
//	<pid> <start>
//	…
const recordMagic = "volcanicbot-processes 1"

// clockTicks is USER_HZ, the unit of the start times in /proc/<pid>/stat:
// 100 on every Linux architecture.
const clockTicks = 100

func recordName(bot procKey) string {
	return strconv.Itoa(bot.pid) + "-" + strconv.FormatUint(bot.start, 10) + ".procs"
}

// writeRecord writes the record if what it would hold changed. A failure
// is logged once.
func (t *Tracker) writeRecord() {
	if t.sys.record == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	procs := map[procKey]bool{}
	for _, s := range t.sys.servers {
		maps.Copy(procs, s.seen)
	}
	maps.Copy(procs, t.sys.strays)
	keys := slices.SortedFunc(maps.Keys(procs), func(a, b procKey) int { return a.pid - b.pid })
	var b strings.Builder
	self := t.sys.self
	fmt.Fprintf(&b, "%s\nboot %s\npidns %s\nscan %d\nbot %d %d\n", recordMagic, t.sys.boot, t.sys.pidns,
		int(t.o.ScanInterval.Seconds()+1), self.pid, self.start)
	for _, k := range keys {
		fmt.Fprintf(&b, "%d %d\n", k.pid, k.start)
	}
	content := b.String()
	if content == t.sys.recorded {
		now := time.Now()
		_ = os.Chtimes(t.sys.record, now, now)
		return
	}
	if err := writeFile(t.sys.record, content); err != nil {
		if !t.sys.recordErr {
			t.logger.Warn("the record of the MCP servers' processes is not written: after a SIGKILL of the bot, the next start may not end them all",
				"path", t.sys.record, "err", err)
			t.sys.recordErr = true
		}
		return
	}
	t.sys.recorded = content
}

// writeFile replaces the record at path with content (store.WriteFile),
// creating its folder (0700) first.
func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return store.WriteFile(path, []byte(content), nil)
}

type record struct {
	boot, pidns string
	scan        time.Duration
	bot         procKey
	procs       map[procKey]bool
}

func readRecord(path string) (record, bool) {
	f, err := os.Open(path)
	if err != nil {
		return record{}, false
	}
	defer f.Close()
	r := record{procs: map[procKey]bool{}}
	sc := bufio.NewScanner(f)
	if !sc.Scan() || sc.Text() != recordMagic {
		return record{}, false
	}
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "boot "); ok {
			r.boot = v
			continue
		}
		if v, ok := strings.CutPrefix(line, "pidns "); ok {
			r.pidns = v
			continue
		}
		if v, ok := strings.CutPrefix(line, "scan "); ok {
			n, _ := strconv.Atoi(v)
			r.scan = time.Duration(n) * time.Second
			continue
		}
		bot := false
		if v, ok := strings.CutPrefix(line, "bot "); ok {
			line, bot = v, true
		}
		p, s, ok := strings.Cut(line, " ")
		pid, err1 := strconv.Atoi(p)
		start, err2 := strconv.ParseUint(s, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			continue
		}
		if bot {
			r.bot = procKey{pid, start}
		} else {
			r.procs[procKey{pid, start}] = true
		}
	}
	return r, r.bot.pid > 0
}

// reapRecords ends the processes the records of dead bot processes list,
// the members of the sessions and groups they led (while that pid was not
// reused) and their descendants, and removes those records. A record of
// another boot or pid namespace is removed unread.
func (t *Tracker) reapRecords(self selfInfo) []int {
	entries, err := os.ReadDir(t.stateDir)
	if err != nil {
		return nil
	}
	boot, pidns := bootID(), pidNamespace()
	var killed []int
	for _, e := range entries {
		if bot, ok := recordTemp(e.Name()); ok {
			t.removeDeadTemp(e.Name(), bot, self)
			continue
		}
		if !strings.HasSuffix(e.Name(), ".procs") {
			continue
		}
		path := filepath.Join(t.stateDir, e.Name())
		r, ok := readRecord(path)
		if !ok || r.bot == self.procKey || spawnerAlive(r.bot.pid, r.bot.start) {
			continue
		}
		if fi, err := os.Stat(path); err == nil && r.boot == boot && r.pidns == pidns {
			// The bot died before the record's next touch was due.
			died := ticksAt(fi.ModTime().Add(r.scan + 5*time.Second))
			killed = append(killed, killAll(func() []int { return recordedTree(r, self, died) })...)
		}
		if err := os.Remove(path); err != nil {
			t.logger.Warn("a record of MCP server processes not removed", "path", path, "err", err)
		}
	}
	return killed
}

// recordTemp reports whether name is the temporary file of a rewrite of
// a record (store.WriteFile's ".<record>.tmp…"), and whose record.
func recordTemp(name string) (bot procKey, ok bool) {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return procKey{}, false
	}
	rec, _, ok := strings.Cut(rest, ".procs.tmp")
	if !ok {
		return procKey{}, false
	}
	p, s, ok := strings.Cut(rec, "-")
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(s, 10, 64)
	if !ok || err1 != nil || err2 != nil || pid <= 0 {
		return procKey{}, false
	}
	return procKey{pid, start}, true
}

// removeDeadTemp removes name, the temporary file a bot process killed
// mid-rewrite of its record left behind, unless that process still runs.
func (t *Tracker) removeDeadTemp(name string, bot procKey, self selfInfo) {
	if bot == self.procKey || spawnerAlive(bot.pid, bot.start) {
		return
	}
	path := filepath.Join(t.stateDir, name)
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		t.logger.Warn("a stray temporary record of MCP server processes not removed", "path", path, "err", err)
	}
}

// ticksAt is the time t in clock ticks after boot (0 when unknown).
func ticksAt(t time.Time) uint64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	since := up - time.Since(t).Seconds()
	if since < 0 {
		return 0
	}
	return uint64(since * clockTicks)
}

// recordedTree returns the live processes of a record's trees: those it
// lists, and those in the sessions and groups of these that started before
// died (clock ticks after boot; 0: unknown, none), with their descendants.
func recordedTree(r record, self selfInfo, died uint64) []int {
	tab := procStats()
	ids := map[int]uint64{}
	for k := range r.procs {
		ids[k.pid] = k.start
	}
	// An id is the record's while its pid is not another process's.
	trusted := func(id int) bool {
		start, ok := ids[id]
		if !ok || id == self.sid || id == self.pgid {
			return false
		}
		st, running := tab[id]
		return !running || st.start == start
	}
	set := map[int]bool{}
	for pid, st := range tab {
		if pid == self.pid || st.state == 'Z' || st.start < r.bot.start {
			continue
		}
		if r.procs[procKey{pid, st.start}] || st.start <= died && (trusted(st.sid) || trusted(st.pgid)) {
			set[pid] = true
		}
	}
	tab.closure(set)
	return slices.Collect(maps.Keys(set))
}
