package fakemcp

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The hostile escapers: descendants that try harder to outlive the fake's
// tree than daemon and setsid-on-sigterm do. With stubborn, every helper
// of the fake (grandchild, setsid-on-sigterm's, daemon's, dodge's and
// escape's) ignores SIGTERM, SIGINT and SIGHUP: only SIGKILL ends them.
const (
	// ModeStubborn makes the helpers ignore SIGTERM, SIGINT and SIGHUP.
	ModeStubborn = "stubborn"
	// ModeDodge starts a dodger at start: in a session of its own, it
	// moves (where it may) into a cgroup it creates below its own — the
	// server's cgroup.procs no longer lists it — ignores SIGTERM, and every
	// 100 ms starts its next generation and exits: its pid keeps changing,
	// so a kill by a list of pids misses it. The fake logs a "dodge" event
	// with the first generation's pid once it has moved (Reason: the
	// cgroup it moved to, or why it did not).
	ModeDodge = "dodge"
	// ModeEscape starts an escaper at start: an intermediate process that
	// moves (where it may: root) into the root cgroup of the cgroup2
	// mount — out of the server's and the bot's cgroups — calls setsid(),
	// starts a sleeper and exits, so the sleeper is reparented, in no
	// cgroup, group or session of the server's. The fake logs an "escape"
	// event with the sleeper's pid (Reason: the cgroup it is in, or why it
	// did not move).
	ModeEscape = "escape"

	// ModeHogGrandchild starts a grandchild at start that moves into the
	// memory cgroup named by EnvMemcg (a directory, v1 or v2), if any, and
	// then takes memory, 1 MiB a millisecond up to 4 GiB, until it is
	// killed: under a memory limit, the kernel's OOM killer ends it. The
	// fake logs a "hog" event with its pid and serves on.
	ModeHogGrandchild = "hog-grandchild"
	// EnvMemcg names the memory cgroup of hog-grandchild's grandchild.
	EnvMemcg = "FAKE_MCP_MEMCG"

	modeDodger  = "dodger"
	modeEscaper = "escaper"
	modeHog     = "hog"

	// EventDodge is logged by dodge mode; PID is the first generation's.
	EventDodge = "dodge"
	// EventEscape is logged by escape mode; PID is the sleeper's.
	EventEscape = "escape"
	// EventHog is logged by hog-grandchild mode; PID is the grandchild's.
	EventHog = "hog"
)

// argMemcg passes EnvMemcg to the hog (helpers get no FAKE_MCP_ variable).
const argMemcg = "--fakemcp-memcg="

// startHog starts hog-grandchild's grandchild and logs it.
func startHog(log eventLog, modes map[string]bool) error {
	cmd, err := helper(log, modes, modeHog)
	if err != nil {
		return err
	}
	cmd.Args = append(cmd.Args, argMemcg+os.Getenv(EnvMemcg))
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	log.add(Event{Event: EventHog, PID: cmd.Process.Pid, Parent: os.Getpid()})
	return nil
}

// hog is hog-grandchild's grandchild: into its memory cgroup, then memory
// taken and touched until it is killed.
func hog(args []string) int {
	for _, a := range args {
		if dir, ok := strings.CutPrefix(a, argMemcg); ok && dir != "" {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
				fmt.Fprintf(os.Stderr, "fakemcp: hog: %v\n", err)
				return 1
			}
		}
	}
	var held [][]byte
	for range 4 << 10 {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
		time.Sleep(time.Millisecond)
	}
	time.Sleep(5 * time.Minute)
	runtime.KeepAlive(held)
	return 0
}

// ignoreIfStubborn makes a helper ignore the polite signals in stubborn
// mode.
func ignoreIfStubborn(modes map[string]bool) {
	if modes[ModeStubborn] {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	}
}

// startDodger starts dodge's first generation in a session of its own and
// waits until it says it has moved (a line on its stdout: where to).
func startDodger(log eventLog, modes map[string]bool) error {
	cmd, err := helper(log, modes, modeDodger)
	if err != nil {
		return err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	where, _ := bufio.NewReader(out).ReadString('\n')
	log.add(Event{Event: EventDodge, PID: cmd.Process.Pid, Parent: os.Getpid(), Reason: strings.TrimSpace(where)})
	return nil
}

// dodger is one generation of dodge: the first moves into a cgroup below
// its own and says where on stdout; each starts the next after 100 ms and
// exits.
func dodger(modes map[string]bool, args []string) int {
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	log, _ := helperArgs(args)
	if !hasArg(args, argNext) {
		where := "stayed: "
		if dir, err := moveBelowOwnCgroup(); err != nil {
			where += err.Error()
		} else {
			where = dir
		}
		fmt.Println(where)
		os.Stdout.Close()
	}
	time.Sleep(100 * time.Millisecond)
	next, err := helper(log, modes, modeDodger)
	if err != nil {
		return 1
	}
	next.Args = append(next.Args, argNext)
	if err := next.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: dodger: %v\n", err)
		return 1
	}
	return 0
}

// startEscape runs escape's intermediate process and waits for it to
// exit; then it logs the escape event with the pid and the cgroup the
// intermediate wrote.
func startEscape(log eventLog, modes map[string]bool) error {
	cmd, err := helper(log, modes, modeEscaper)
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%w: %s", err, stderr.String())
	}
	pidText, where, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return fmt.Errorf("escaper wrote %q", out)
	}
	log.add(Event{Event: EventEscape, PID: pid, Parent: os.Getpid(), Reason: where})
	return nil
}

// escaper is escape's intermediate process: out of its cgroup, into a
// session of its own, a sleeper started, "<pid> <where>" written, gone.
func escaper(modes map[string]bool, args []string) int {
	log, _ := helperArgs(args)
	where := "stayed: "
	if dir, err := moveToRootCgroup(); err != nil {
		where += err.Error()
	} else {
		where = dir
	}
	if _, err := syscall.Setsid(); err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: escaper: setsid: %v\n", err)
		return 1
	}
	cmd, err := helper(log, modes, modeSleeper)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: escaper: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: escaper: %v\n", err)
		return 1
	}
	fmt.Println(cmd.Process.Pid, strings.ReplaceAll(where, " ", "_"))
	return 0
}

// argNext marks a dodger that is not the first generation.
const argNext = "--fakemcp-next"

func hasArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}

// cgroup2 returns the cgroup2 mount point and this process's cgroup path
// in it ("/…").
func cgroup2() (mount, path string, err error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", "", err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if path == "" {
		return "", "", errors.New("no cgroup v2")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	for line := range strings.SplitSeq(string(mi), "\n") {
		f := strings.Fields(line)
		for i, x := range f {
			if x == "-" && i+1 < len(f) && f[i+1] == "cgroup2" && f[3] == "/" {
				return f[4], path, nil
			}
		}
	}
	return "", "", errors.New("no cgroup2 mount")
}

// moveBelowOwnCgroup creates a cgroup below this process's and moves the
// process into it.
func moveBelowOwnCgroup() (string, error) {
	mount, path, err := cgroup2()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(mount, path, "dodge-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		_ = os.Remove(dir)
		return "", err
	}
	return filepath.Join(path, filepath.Base(dir)), nil
}

// moveToRootCgroup moves this process into the root cgroup of the cgroup2
// mount.
func moveToRootCgroup() (string, error) {
	mount, _, err := cgroup2()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(mount, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		return "", err
	}
	return "/", nil
}

// Survivors returns the live processes (not zombies) among the fake's
// helpers that log to log — grandchildren, daemons, dodgers of every
// generation, escapers — found by the log's path in their arguments. It
// needs /proc; elsewhere it returns nil.
func Survivors(log string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(argLog + log + "\x00")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), string(want)) || !Alive(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// WaitNoSurvivors polls until no helper of the fake that logs to log is
// alive (see Survivors), and fails the test naming them after timeout.
func WaitNoSurvivors(t testing.TB, timeout time.Duration, log string) {
	t.Helper()
	var left []int
	if !testkit.Until(timeout, func() bool { left = Survivors(log); return len(left) == 0 }) {
		t.Fatalf("fakemcp: helpers %v of %s still alive after %v", left, log, timeout)
	}
}

// KillSurvivors ends every helper that logs to log, for a test's clean-up:
// the dodgers are stopped first, so that none starts another generation.
func KillSurvivors(log string) {
	testkit.Until(time.Second, func() bool {
		left := Survivors(log)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGSTOP)
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return len(left) == 0
	})
}
