package fakemcp_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// The modes that leave the fake's tree do what they say: a daemon in no
// group or session of the fake's, and no longer its descendant; a
// grandchild that leaves on SIGTERM; clear-env's processes without the
// rest of the environment.
func TestEscapeModes(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	for _, tt := range []struct {
		modes    []string
		event    string
		clearEnv bool
	}{
		{[]string{fakemcp.ModeDaemon}, fakemcp.EventDaemon, false},
		{[]string{fakemcp.ModeDaemon, fakemcp.ModeClearEnv}, fakemcp.EventDaemon, true},
		{[]string{fakemcp.ModeSetsidOnSIGTERM}, fakemcp.EventGrandchild, false},
		{[]string{fakemcp.ModeGrandchild, fakemcp.ModeClearEnv}, fakemcp.EventGrandchild, true},
	} {
		t.Run(strings.Join(tt.modes, "+"), func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "log")
			w := startWire(t, fakemcp.Command(tt.modes...).WithLog(log).WithEnv("FAKEMCP_TEST_MARKER", "inherited"), t.TempDir())
			ev := fakemcp.WaitForEvents(t, log, tt.event, 1, 5*time.Second)[0]
			t.Cleanup(func() { _ = syscall.Kill(ev.PID, syscall.SIGKILL) })
			fake := w.cmd.Process.Pid
			if ev.Parent != fake || !fakemcp.Alive(ev.PID) {
				t.Fatalf("event %+v, fake %d, alive %v", ev, fake, fakemcp.Alive(ev.PID))
			}
			env, err := os.ReadFile("/proc/" + strconv.Itoa(ev.PID) + "/environ")
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(env, []byte("FAKEMCP_TEST_MARKER=inherited")); got == tt.clearEnv {
				t.Errorf("environment %q: inherited %v, want %v", env, got, !tt.clearEnv)
			}
			pgid, _ := unix.Getpgid(ev.PID)
			sid, _ := unix.Getsid(ev.PID)
			fakeSid, _ := unix.Getsid(fake)
			switch tt.event {
			case fakemcp.EventDaemon:
				w.handshake() // served only after the intermediate exited
				if pgid == fake || sid == fakeSid || parentOf(t, ev.PID) == fake {
					t.Errorf("daemon pgid %d sid %d parent %d: still in the fake's tree (pid %d, sid %d)",
						pgid, sid, parentOf(t, ev.PID), fake, fakeSid)
				}
			default:
				if pgid != fake {
					t.Errorf("grandchild pgid %d, want the fake's %d", pgid, fake)
				}
			}
			if !slices.Contains(tt.modes, fakemcp.ModeSetsidOnSIGTERM) {
				return
			}
			if err := syscall.Kill(-fake, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			w.wait(5 * time.Second)
			fakemcp.WaitForEvents(t, log, fakemcp.EventSetsid, 1, 5*time.Second)
			if sid, _ := unix.Getsid(ev.PID); sid != ev.PID || !fakemcp.Alive(ev.PID) {
				t.Errorf("after SIGTERM: sid %d, alive %v; want a session of its own (%d), alive", sid, fakemcp.Alive(ev.PID), ev.PID)
			}
			_ = syscall.Kill(ev.PID, syscall.SIGTERM) // ignored from now on
			if err := syscall.Kill(-fake, 0); err == nil {
				t.Errorf("the fake's group %d still has members", fake)
			}
		})
	}
}

func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	ppid, _ := strconv.Atoi(string(f[1]))
	return ppid
}
