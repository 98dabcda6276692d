package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ownCgroupDir is the directory of this process's cgroup v2: the cgroup2
// mount (from /proc/self/mountinfo: /sys/fs/cgroup, or /sys/fs/cgroup/unified
// on a hybrid system) joined with the path in /proc/self/cgroup ("0::/…").
func ownCgroupDir() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path, found := "", false
	for line := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path, found = p, true
			break
		}
	}
	if !found {
		return "", errors.New("no cgroup v2 in /proc/self/cgroup")
	}
	if strings.Contains(path, "..") || strings.HasSuffix(path, " (deleted)") {
		return "", fmt.Errorf("this process's cgroup %q is outside the cgroup namespace", path)
	}
	mounts, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer mounts.Close()
	sc := bufio.NewScanner(mounts)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional…] - fstype source super
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(f) || f[sep+1] != "cgroup2" {
			continue
		}
		root, point := unescapeMount(f[3]), unescapeMount(f[4])
		rel, ok := strings.CutPrefix(path, root)
		if !ok || (rel != "" && root != "/" && !strings.HasPrefix(rel, "/")) {
			return "", fmt.Errorf("the cgroup2 mount at %s shows %s, not this process's cgroup %s", point, root, path)
		}
		return filepath.Join(point, rel), nil
	}
	return "", errors.New("no cgroup2 mount")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupName is the name of a bot process's cgroup for the servers of one
// of its trackers, under the bot's own cgroup:
// "volcanicbot-<owner>-<pid>-<start>-<tracker id>".
func cgroupName(owner string, bot procKey, id string) string {
	return cgroupPrefix(owner) + strconv.Itoa(bot.pid) + "-" + strconv.FormatUint(bot.start, 10) + "-" + id
}

func cgroupPrefix(owner string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' {
			return r
		}
		return '_'
	}, owner)
	return "volcanicbot-" + clean + "-"
}

// parseCgroupName returns the bot process of a name of cgroupName's for
// owner.
func parseCgroupName(owner, name string) (procKey, bool) {
	rest, ok := strings.CutPrefix(name, cgroupPrefix(owner))
	if !ok {
		return procKey{}, false
	}
	p, s, ok := strings.Cut(rest, "-")
	s, _, _ = strings.Cut(s, "-")
	pid, err1 := strconv.Atoi(p)
	start, err2 := strconv.ParseUint(s, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return procKey{}, false
	}
	return procKey{pid, start}, true
}

// parseAnyCgroupName returns the bot process of a name of cgroupName's for
// any owner: "volcanicbot-…-<pid>-<start>-<id>", read from the right.
func parseAnyCgroupName(name string) (procKey, bool) {
	rest, ok := strings.CutPrefix(name, "volcanicbot-")
	f := strings.Split(rest, "-")
	if !ok || len(f) < 4 {
		return procKey{}, false
	}
	pid, err1 := strconv.Atoi(f[len(f)-3])
	start, err2 := strconv.ParseUint(f[len(f)-2], 10, 64)
	if err1 != nil || err2 != nil {
		return procKey{}, false
	}
	return procKey{pid, start}, true
}

// makeCgroup creates the cgroup dir and checks that this process may start
// children in it (write access to its cgroup.procs and to that of the
// common ancestor, the parent of the bot's tree).
func makeCgroup(dir, ancestor string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for _, d := range []string{ancestor, dir} {
		if err := unix.Access(filepath.Join(d, "cgroup.procs"), unix.W_OK); err != nil {
			_ = os.Remove(dir)
			return fmt.Errorf("%s/cgroup.procs: %w", d, err)
		}
	}
	return nil
}

// cgroupProcs lists the processes in the cgroup dir (zombies are not in
// it); nil when it is gone.
func cgroupProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for f := range bytes.FieldsSeq(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cgroupTreeProcs lists the processes in dir and every cgroup below it.
func cgroupTreeProcs(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			pids = append(pids, cgroupProcs(path)...)
		}
		return nil
	})
	return pids
}

// killCgroup kills every process in dir and below: cgroup.kill (Linux 5.14),
// or else SIGKILL to each, frozen first (cgroup.freeze) so that none forks
// a child it misses, until none is left.
func killCgroup(dir string) {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err == nil {
		return
	}
	freeze := filepath.Join(dir, "cgroup.freeze")
	frozen := os.WriteFile(freeze, []byte("1"), 0) == nil
	for range 100 {
		pids := cgroupTreeProcs(dir)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if !frozen {
			continue
		}
		// A frozen process killed still exits; the freezer only stops new
		// work, so the next look sees what is left.
		time.Sleep(10 * time.Millisecond)
	}
	if frozen {
		_ = os.WriteFile(freeze, []byte("0"), 0)
	}
}

// removeCgroup removes dir and the cgroups below it, deepest first, once
// they are empty (a killed process takes a moment to leave), waiting up
// to wait.
func removeCgroup(dir string, wait time.Duration) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	deadline := time.Now().Add(wait)
	for i := len(dirs) - 1; i >= 0; i-- {
		for {
			err := os.Remove(dirs[i])
			if err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || !time.Now().Before(deadline) {
				return err
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}
