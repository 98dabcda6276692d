package stdio

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// escapeCases are servers with a descendant that leaves the server's
// process group: a double-forked daemon, a grandchild that calls setsid()
// on SIGTERM, either with its environment (and so the mark) cleared, and a
// grandchild with a cleared environment that stays in the group.
var escapeCases = []struct {
	modes []string
	event string // the event naming the escaper
}{
	{[]string{fakemcp.ModeDaemon}, fakemcp.EventDaemon},
	{[]string{fakemcp.ModeDaemon, fakemcp.ModeClearEnv}, fakemcp.EventDaemon},
	{[]string{fakemcp.ModeSetsidOnSIGTERM}, fakemcp.EventGrandchild},
	{[]string{fakemcp.ModeSetsidOnSIGTERM, fakemcp.ModeClearEnv}, fakemcp.EventGrandchild},
	{[]string{fakemcp.ModeGrandchild, fakemcp.ModeClearEnv}, fakemcp.EventGrandchild},
}

func caseName(modes []string) string { return strings.Join(modes, "+") }

// trackingModes are the modes to test on this machine: the cgroup mode
// when it may create cgroups (root, or a delegated cgroup), and the
// subreaper mode, forced.
func trackingModes(t *testing.T) []TrackMode {
	t.Helper()
	probe := NewTracker(TrackerOptions{Owner: "probe"})
	defer probe.Close()
	if _, err := probe.Open(TrackCgroup, ""); err != nil {
		t.Logf("cgroup mode not available here: %v", err)
		return []TrackMode{TrackSubreaper}
	}
	return []TrackMode{TrackCgroup, TrackSubreaper}
}

// openTracker opens a tracker in mode for the test. Its periodic scan is
// off: what a test sees ended, Terminate, Close or ReapOrphans ended.
func openTracker(t *testing.T, mode TrackMode, owner, stateDir string) *Tracker {
	t.Helper()
	tr := NewTracker(TrackerOptions{Owner: owner, ScanInterval: time.Hour})
	got, err := tr.Open(mode, stateDir)
	if err != nil || got != mode {
		t.Fatalf("Open(%v) = %v, %v", mode, got, err)
	}
	t.Cleanup(tr.Close)
	return tr
}

// startEscaper starts the fake in modes and returns it and the pid of the
// process that leaves its tree, killed on cleanup whatever happens.
func startEscaper(t *testing.T, o Options, modes []string, event string) (*Process, int) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "log")
	l := fakemcp.Command(modes...).WithLog(log)
	p, err := Start(Command{Path: l.Command, Args: l.Args, Dir: t.TempDir(), Env: append(os.Environ(), l.Environ()...)}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Terminate)
	ev := fakemcp.WaitForEvents(t, log, event, 1, 10*time.Second)[0]
	t.Cleanup(func() { killForGood(ev.PID) })
	return p, ev.PID
}

func killForGood(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// Terminate ends the descendants that left the server's process group, in
// each mode.
func TestTerminateEndsEscapedDescendants(t *testing.T) {
	for _, mode := range trackingModes(t) {
		for _, tt := range escapeCases {
			t.Run(mode.String()+"/"+caseName(tt.modes), func(t *testing.T) {
				tr := openTracker(t, mode, "test-escape", "")
				p, escaper := startEscaper(t, Options{Name: "fake", Mark: Mark("test-escape"), Tracker: tr, Grace: testGrace}, tt.modes, tt.event)
				p.Terminate()
				fakemcp.WaitDead(t, 5*time.Second, p.PID(), escaper)
			})
		}
	}
}

// A server that crashes takes its escapers with it, before any Terminate.
func TestCrashEndsEscapedDescendants(t *testing.T) {
	for _, mode := range trackingModes(t) {
		for _, modes := range [][]string{
			{fakemcp.ModeDaemon, fakemcp.ModeCrashOnStart},
			{fakemcp.ModeDaemon, fakemcp.ModeClearEnv, fakemcp.ModeCrashOnStart},
		} {
			t.Run(mode.String()+"/"+caseName(modes), func(t *testing.T) {
				tr := openTracker(t, mode, "test-escape", "")
				p, escaper := startEscaper(t, Options{Name: "fake", Mark: Mark("test-escape"), Tracker: tr, Grace: testGrace},
					modes, fakemcp.EventDaemon)
				fakemcp.WaitDead(t, 10*time.Second, p.PID(), escaper)
			})
		}
	}
}

// A server's Terminate ends its own escapers, not another server's; the
// escapers of servers that were all terminated together end, and the
// Tracker's Close ends whatever is left and leaves no zombie behind.
func TestTrackerEndsOnlyItsServersEscapers(t *testing.T) {
	for _, mode := range trackingModes(t) {
		t.Run(mode.String(), func(t *testing.T) {
			tr := openTracker(t, mode, "test-escape", "")
			o := Options{Name: "fake", Mark: Mark("test-escape"), Tracker: tr, Grace: testGrace}
			daemon := []string{fakemcp.ModeDaemon, fakemcp.ModeClearEnv}
			a, escA := startEscaper(t, o, daemon, fakemcp.EventDaemon)
			b, escB := startEscaper(t, o, daemon, fakemcp.EventDaemon)
			c, escC := startEscaper(t, o, []string{fakemcp.ModeDaemon}, fakemcp.EventDaemon)
			a.Terminate()
			fakemcp.WaitDead(t, 5*time.Second, a.PID(), escA)
			for _, pid := range []int{escB, escC} {
				if !fakemcp.Alive(pid) {
					t.Fatalf("escaper %d of another server ended with the first", pid)
				}
			}

			// As the Client's Close: every server at once, then the tracker.
			var all []int
			var procs []*Process
			for _, tt := range escapeCases {
				p, esc := startEscaper(t, o, tt.modes, tt.event)
				procs = append(procs, p)
				all = append(all, p.PID(), esc)
			}
			procs = append(procs, b, c)
			all = append(all, b.PID(), escB, c.PID(), escC)
			var wg sync.WaitGroup
			for _, p := range procs {
				wg.Go(p.Terminate)
			}
			wg.Wait()
			tr.Close()
			fakemcp.WaitDead(t, 5*time.Second, all...)
			if z := zombieChildren(); len(z) > 0 {
				t.Errorf("zombie children left: %v", z)
			}
		})
	}
}

// zombieChildren are this process's children that exited and were not
// reaped.
func zombieChildren() []string {
	var out []string
	for pid, st := range procStats() {
		if st.ppid == os.Getpid() && st.state == 'Z' {
			out = append(out, fmt.Sprintf("%d (group %d, session %d)", pid, st.pgid, st.sid))
		}
	}
	return out
}

// The bot's own children started elsewhere (os/exec) are still its to wait
// for while the subreaper reaps, and a server's exit status is its own.
func TestSubreaperLeavesOwnChildrenAlone(t *testing.T) {
	tr := openTracker(t, TrackSubreaper, "test-escape", "")
	p, esc := startEscaper(t, Options{Name: "fake", Tracker: tr}, []string{fakemcp.ModeDaemon, fakemcp.ModeClearEnv}, fakemcp.EventDaemon)
	var cmds []*exec.Cmd
	for range 5 {
		cmd := exec.Command("sh", "-c", "exit 7")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	killForGood(esc) // an adopted process exits: SIGCHLD, the reaper runs
	fakemcp.WaitDead(t, 5*time.Second, esc)
	for _, cmd := range cmds {
		err := cmd.Wait()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 7 {
			t.Errorf("wait for the bot's own child: %v", err)
		}
	}
	crash, err := Start(Command{Path: fakemcp.Command().Command, Dir: t.TempDir(),
		Env: append(os.Environ(), fakemcp.Command(fakemcp.ModeCrashOnStart).Environ()...)}, Options{Name: "crash", Tracker: tr})
	if err != nil {
		t.Fatal(err)
	}
	if !crash.WaitExit(10*time.Second) || crash.ExitDescription() != "1" {
		t.Errorf("crashed server: exited %v, %q; want exit 1", crash.Done(), crash.ExitDescription())
	}
	crash.Terminate()
	p.Terminate()
}

// A bot killed with SIGKILL leaves its servers' escapers behind, those with
// a cleared environment (no mark) too; the next start ends them all by
// the trees: the cgroups of the dead bot, or the record it kept.
func TestReapOrphansEndsTreesOfAKilledBot(t *testing.T) {
	for _, mode := range trackingModes(t) {
		t.Run(mode.String(), func(t *testing.T) {
			owner := fmt.Sprintf("test-killed-%d", time.Now().UnixNano())
			state := t.TempDir()
			var logs []string
			for i := range escapeCases {
				logs = append(logs, filepath.Join(t.TempDir(), "log"+strconv.Itoa(i)))
			}
			bot := exec.Command(os.Args[0], "-test.run=^TestHelperBot$")
			bot.Env = append(os.Environ(), "STDIO_TEST_BOT="+strings.Join([]string{strconv.Itoa(int(mode)), owner, state, strings.Join(logs, ",")}, ";"))
			out, err := bot.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			bot.Stderr = os.Stderr
			if err := bot.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				killForGood(bot.Process.Pid)
				_ = bot.Wait()
			})
			if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "ready" {
				t.Fatalf("helper bot: %q", line)
			}
			var escapers []int
			for i, tt := range escapeCases {
				ev := fakemcp.WaitForEvents(t, logs[i], tt.event, 1, 10*time.Second)[0]
				escapers = append(escapers, ev.PID)
				t.Cleanup(func() { killForGood(ev.PID) })
			}
			killForGood(bot.Process.Pid)
			_ = bot.Wait()
			for _, pid := range escapers {
				if !fakemcp.Alive(pid) {
					t.Fatalf("escaper %d did not survive the SIGKILL: nothing to test", pid)
				}
			}

			next := openTracker(t, mode, owner, state)
			reaped := next.ReapOrphans()
			fakemcp.WaitDead(t, 5*time.Second, escapers...)
			fakemcp.WaitDead(t, 5*time.Second, reaped...) // SIGKILLed, but a moment from exiting
			t.Logf("reaped %v", reaped)
			if again := next.ReapOrphans(); len(again) != 0 {
				t.Errorf("second reap killed %v", again)
			}
			if entries, _ := os.ReadDir(state); len(entries) != 0 {
				t.Errorf("records left: %v", entries)
			}
		})
	}
}

// TestHelperBot is the bot of TestReapOrphansEndsTreesOfAKilledBot: with
// STDIO_TEST_BOT="<mode>;<owner>;<state dir>;<log>,<log>…" it opens a
// tracker, starts a server per escape case, waits for their escapers,
// looks at the trees as its periodic scan would, writes "ready" and waits
// to be killed.
func TestHelperBot(t *testing.T) {
	spec := os.Getenv("STDIO_TEST_BOT")
	if spec == "" {
		t.Skip("the helper of TestReapOrphansEndsTreesOfAKilledBot")
	}
	f := strings.Split(spec, ";")
	mode, _ := strconv.Atoi(f[0])
	tr := NewTracker(TrackerOptions{Owner: f[1], ScanInterval: time.Hour})
	if _, err := tr.Open(TrackMode(mode), f[2]); err != nil {
		t.Fatal(err)
	}
	for i, log := range strings.Split(f[3], ",") {
		l := fakemcp.Command(escapeCases[i].modes...).WithLog(log)
		if _, err := Start(Command{Path: l.Command, Args: l.Args, Dir: t.TempDir(), Env: append(os.Environ(), l.Environ()...)},
			Options{Name: "fake", Mark: Mark(f[1]), Tracker: tr}); err != nil {
			t.Fatal(err)
		}
		fakemcp.WaitForEvents(t, log, escapeCases[i].event, 1, 10*time.Second)
	}
	if tr.Mode() == TrackSubreaper {
		tr.scanAll()
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

// testGrace is a shorter grace: the escapers ignore it anyway.
const testGrace = 500 * time.Millisecond

// A tracker nobody opened opens itself at the first start, in the best
// mode available (a check has no start-up of its own), and its Close ends
// what its servers left.
func TestTrackerOpensAtFirstStart(t *testing.T) {
	tr := NewTracker(TrackerOptions{Owner: "test-escape", ScanInterval: time.Hour})
	t.Cleanup(tr.Close)
	if m := tr.Mode(); m != TrackGroups {
		t.Fatalf("mode before the first start: %v", m)
	}
	p, esc := startEscaper(t, Options{Name: "fake", Tracker: tr, Grace: testGrace},
		[]string{fakemcp.ModeDaemon, fakemcp.ModeClearEnv}, fakemcp.EventDaemon)
	if m, want := tr.Mode(), trackingModes(t)[0]; m != want {
		t.Errorf("mode after the first start: %v, want %v", m, want)
	}
	p.Terminate()
	tr.Close()
	fakemcp.WaitDead(t, 5*time.Second, esc)
}

// In the cgroup mode a server starts in a cgroup of its own, directly
// (clone3) or, where clone3 is refused, moved in at once; either way its
// escapers end with it and the cgroup is removed.
func TestCgroupModeStartsServersInTheirCgroup(t *testing.T) {
	if trackingModes(t)[0] != TrackCgroup {
		t.Skip("no cgroup mode here")
	}
	for _, noClone3 := range []bool{false, true} {
		t.Run(fmt.Sprintf("noClone3=%v", noClone3), func(t *testing.T) {
			tr := openTracker(t, TrackCgroup, "test-escape", "")
			tr.sys.noClone3 = noClone3
			p, esc := startEscaper(t, Options{Name: "fake", Tracker: tr, Grace: testGrace},
				[]string{fakemcp.ModeDaemon, fakemcp.ModeClearEnv}, fakemcp.EventDaemon)
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p.PID()))
			if err != nil {
				t.Fatal(err)
			}
			dir := p.tree.(*cgroupTree).dir
			_, v2, _ := strings.Cut(string(b), "0::")
			if v2 = strings.TrimSpace(v2); !strings.Contains(v2, "/server-") || !strings.HasSuffix(dir, v2) {
				t.Errorf("server in cgroup %q, want %s", v2, dir)
			}
			p.Terminate()
			fakemcp.WaitDead(t, 5*time.Second, esc)
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the server's cgroup %s is still there: %v", dir, err)
			}
		})
	}
}

// A record's sessions are trusted only for what started before its bot
// died, and only while the pid that names them is not another process's:
// a session whose leader's pid was reused is someone else's.
func TestRecordedTreeTrustsOnlyItsSessions(t *testing.T) {
	dead, deadStart := deadSpawner(t) // the bot, started before its trees
	sh := exec.Command("sh", "-c", "sleep 60 </dev/null >/dev/null 2>&1 & echo $!")
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := sh.Output() // the session's leader exits, its child stays in the session
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	t.Cleanup(func() { killForGood(child) })
	st, ok := readStat(child)
	if !ok || st.sid != sh.Process.Pid {
		t.Fatalf("child %d: %+v, want it in session %d", child, st, sh.Process.Pid)
	}
	leaderStart := st.start // about when the leader started
	self := readSelf()
	rec := record{bot: procKey{dead, deadStart}, procs: map[procKey]bool{{sh.Process.Pid, leaderStart}: true}}
	for _, tt := range []struct {
		name string
		died uint64
		want bool
	}{
		{"started before the bot died", st.start, true},
		{"started after", st.start - 1, false},
	} {
		got := slices.Contains(recordedTree(rec, self, tt.died), child)
		if got != tt.want {
			t.Errorf("%s: the session's member is in the tree: %v, want %v", tt.name, got, tt.want)
		}
	}
	// A session whose pid names another process than the record's (its
	// start time differs): not the record's.
	other := exec.Command("sleep", "60")
	other.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killForGood(other.Process.Pid)
		_ = other.Wait()
	})
	ost, _ := readStat(other.Process.Pid)
	for _, tt := range []struct {
		start uint64
		want  bool
	}{{ost.start, true}, {ost.start + 1, false}} {
		r := record{bot: rec.bot, procs: map[procKey]bool{{other.Process.Pid, tt.start}: true}}
		if got := slices.Contains(recordedTree(r, self, ^uint64(0)), other.Process.Pid); got != tt.want {
			t.Errorf("recorded start %d of the process %d (start %d): in the tree %v, want %v",
				tt.start, other.Process.Pid, ost.start, got, tt.want)
		}
	}
}

func TestCgroupNames(t *testing.T) {
	bot := procKey{123, 4567}
	name := cgroupName("ab-c.d", bot, "9f0e")
	if got, ok := parseCgroupName("ab-c.d", name); !ok || got != bot {
		t.Errorf("parseCgroupName(%q) = %v, %v", name, got, ok)
	}
	if _, ok := parseCgroupName("ab", name); ok {
		t.Errorf("%q taken for owner ab's", name)
	}
	if got, ok := parseAnyCgroupName(name); !ok || got != bot {
		t.Errorf("parseAnyCgroupName(%q) = %v, %v", name, got, ok)
	}
	for _, bad := range []string{"volcanicbot-x", "volcanicbot-a-b-c-d", "other-1-2-3"} {
		if _, ok := parseAnyCgroupName(bad); ok {
			t.Errorf("parseAnyCgroupName(%q) ok", bad)
		}
	}
}

// Where neither clone3 nor tracing is allowed, a server is still moved
// into its cgroup (right after its start), and stopping it removes the
// cgroup.
func TestCgroupModeWithoutClone3OrTracing(t *testing.T) {
	if trackingModes(t)[0] != TrackCgroup {
		t.Skip("no cgroup mode here")
	}
	tr := openTracker(t, TrackCgroup, "test-escape", "")
	tr.sys.noClone3, tr.sys.noPtrace = true, true
	log := filepath.Join(t.TempDir(), "log")
	l := fakemcp.Command(fakemcp.ModeNormal).WithLog(log)
	p, err := Start(Command{Path: l.Command, Args: l.Args, Dir: t.TempDir(), Env: append(os.Environ(), l.Environ()...)},
		Options{Name: "fake", Tracker: tr, Grace: testGrace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Terminate)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p.PID()))
	if err != nil {
		t.Fatal(err)
	}
	dir := p.tree.(*cgroupTree).dir
	if _, v2, _ := strings.Cut(string(b), "0::"); !strings.HasSuffix(dir, strings.TrimSpace(v2)) {
		t.Errorf("server in cgroup %q, want %s", strings.TrimSpace(v2), dir)
	}
	if st, _ := readStat(p.PID()); st.state == 't' || st.state == 'T' {
		t.Errorf("the server is stopped (%c): traced although tracing is off", st.state)
	}
	p.Terminate()
	fakemcp.WaitDead(t, 5*time.Second, p.PID())
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the server's cgroup %s is still there: %v", dir, err)
	}
}
