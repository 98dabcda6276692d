package stdio

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The counter reads the kernel's three files alike: cgroup v2's
// memory.events, v1's memory.oom_control, the machine's /proc/vmstat.
func TestOOMCounterReadsTheKernelsFiles(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       int64
		fails      bool
	}{
		{"memory.events", "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n", 2, false},
		{"memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n", 7, false},
		{"vmstat", "nr_free_pages 12345\noom_kill 41\nnr_unstable 0\n", 41, false},
		{"an old v1 without the count", "oom_kill_disable 0\nunder_oom 0\n", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.name)
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			n, err := OOMCounter{Path: path}.Read()
			if (err != nil) != tt.fails || n != tt.want {
				t.Errorf("Read = %d, %v; want %d (fails %v)", n, err, tt.want, tt.fails)
			}
		})
	}
	c, err := FindOOMCounter()
	if err != nil {
		t.Fatalf("no counter on this machine: %v", err)
	}
	t.Logf("this process's counter: %+v", c)
}

// A real OOM kill: a server's grandchild in a memory cgroup of 64 MiB
// takes more, the kernel ends it, the cgroup's counter says so, and the
// server lives on. Needs a memory cgroup this test may make (root).
func TestOOMCounterCountsARealKill(t *testing.T) {
	dir, counter := fakemcp.MemoryCgroup(t, 64<<20)
	c := OOMCounter{Path: counter}
	if n, err := c.Read(); err != nil || n != 0 {
		t.Fatalf("a new cgroup's count: %d, %v", n, err)
	}
	log := filepath.Join(t.TempDir(), "log")
	l := fakemcp.Command(fakemcp.ModeHogGrandchild).WithLog(log).WithEnv(fakemcp.EnvMemcg, dir)
	p, err := Start(Command{Path: l.Command, Args: l.Args, Dir: t.TempDir(), Env: append(os.Environ(), l.Environ()...)},
		Options{Name: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Terminate)
	hog := fakemcp.WaitForEvents(t, log, fakemcp.EventHog, 1, 10*time.Second)[0]
	fakemcp.WaitDead(t, 30*time.Second, hog.PID)
	var n int64
	if !testkit.Until(10*time.Second, func() bool { n, err = c.Read(); return err == nil && n >= 1 }) {
		t.Fatalf("the hog is dead, the count is %d (%v)", n, err)
	}
	if p.Done() {
		t.Error("the server died with its grandchild")
	}
}

// Every server process starts with a raised oom_score_adj, which its
// children inherit: under memory pressure the kernel ends a server's
// process rather than the bot.
func TestServersAreTheOOMKillersFirstChoice(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	l := fakemcp.Command(fakemcp.ModeGrandchild).WithLog(log)
	p, err := Start(Command{Path: l.Command, Args: l.Args, Dir: t.TempDir(), Env: append(os.Environ(), l.Environ()...)},
		Options{Name: "fake", Grace: testGrace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Terminate)
	child := fakemcp.WaitForEvents(t, log, fakemcp.EventGrandchild, 1, 10*time.Second)[0]
	for _, pid := range []int{p.PID(), child.PID} {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/oom_score_adj")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(b)); got != strconv.Itoa(ServerOOMScoreAdj) {
			t.Errorf("process %d: oom_score_adj %s, want %d", pid, got, ServerOOMScoreAdj)
		}
	}
	if b, _ := os.ReadFile("/proc/self/oom_score_adj"); strings.TrimSpace(string(b)) == strconv.Itoa(ServerOOMScoreAdj) {
		t.Error("the bot's own oom_score_adj was raised too")
	}
}
