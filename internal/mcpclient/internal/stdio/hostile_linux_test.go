package stdio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// hostileModes make the fake leave the five kinds of escaping descendant
// at start, none with the mark, none ending on SIGTERM: a grandchild in
// its group, one that calls setsid() on SIGTERM, a double-forked daemon, a
// dodger (a cgroup of its own below the server's where it may, a new pid
// every 100 ms) and an escaper (out of every cgroup of the bot's where it
// may, a session of its own, reparented).
var hostileModes = []string{fakemcp.ModeGrandchild, fakemcp.ModeSetsidOnSIGTERM, fakemcp.ModeDaemon, fakemcp.ModeDodge,
	fakemcp.ModeEscape, fakemcp.ModeClearEnv, fakemcp.ModeStubborn}

// startHostile starts the fake in hostileModes and waits until each of
// its escapers is out; it returns the process and its log.
func startHostile(t *testing.T, o Options) (*Process, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "log")
	t.Cleanup(func() { fakemcp.KillSurvivors(log) })
	l := fakemcp.Command(hostileModes...).WithLog(log)
	p, err := Start(Command{Path: l.Command, Args: l.Args, Dir: t.TempDir(), Env: append(os.Environ(), l.Environ()...)}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Terminate)
	fakemcp.WaitForEvents(t, log, fakemcp.EventGrandchild, 2, 20*time.Second)
	fakemcp.WaitForEvents(t, log, fakemcp.EventDaemon, 1, 20*time.Second)
	dodge := fakemcp.WaitForEvents(t, log, fakemcp.EventDodge, 1, 20*time.Second)[0]
	escape := fakemcp.WaitForEvents(t, log, fakemcp.EventEscape, 1, 20*time.Second)[0]
	if o.Tracker.Mode() == TrackCgroup {
		// Where the bot may make cgroups, a server may too (root): the
		// dodger and the escaper really left the server's cgroup.
		if !strings.HasPrefix(dodge.Reason, "/") || escape.Reason != "/" {
			t.Fatalf("the dodger is in %q, the escaper in %q: they did not leave the server's cgroup", dodge.Reason, escape.Reason)
		}
	}
	t.Logf("dodger in %s, escaper in %s; helpers alive: %v", dodge.Reason, escape.Reason, fakemcp.Survivors(log))
	return p, log
}

// Terminate ends every escaper of a server, the hostile ones too, and
// does not give them the server's grace: the grace is the server's, to shut
// down (a browser server closes its browser); once the server has exited
// what it left is ended at once. Here the grace is far longer than the
// wait: escapers that live out the grace fail the test.
func TestTerminateEndsHostileEscapersAtOnce(t *testing.T) {
	for _, mode := range trackingModes(t) {
		t.Run(mode.String(), func(t *testing.T) {
			tr := openTracker(t, mode, "test-hostile", "")
			p, log := startHostile(t, Options{Name: "fake", Mark: Mark("test-hostile"), Tracker: tr, Grace: time.Minute})
			done := make(chan struct{})
			go func() {
				p.Terminate()
				close(done)
			}()
			fakemcp.WaitNoSurvivors(t, 15*time.Second, log)
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("Terminate still waits, with nothing of the server left")
			}
		})
	}
}

// A server that crashes takes its hostile escapers with it, before any
// Terminate, and without waiting out the grace.
func TestCrashEndsHostileEscapers(t *testing.T) {
	for _, mode := range trackingModes(t) {
		t.Run(mode.String(), func(t *testing.T) {
			tr := openTracker(t, mode, "test-hostile", "")
			p, log := startHostile(t, Options{Name: "fake", Mark: Mark("test-hostile"), Tracker: tr, Grace: time.Minute})
			killForGood(p.PID())
			fakemcp.WaitNoSurvivors(t, 15*time.Second, log)
		})
	}
}

// The tracker's Close ends what the servers left, the hostile escapers
// too, whatever Terminate did not.
func TestTrackerCloseEndsHostileEscapers(t *testing.T) {
	for _, mode := range trackingModes(t) {
		t.Run(mode.String(), func(t *testing.T) {
			tr := openTracker(t, mode, "test-hostile", "")
			_, log := startHostile(t, Options{Name: "fake", Mark: Mark("test-hostile"), Tracker: tr, Grace: time.Minute})
			tr.Close()
			fakemcp.WaitNoSurvivors(t, 15*time.Second, log)
		})
	}
}
