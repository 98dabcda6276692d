package stdio

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// deadSpawner returns the pid and start time of a process that has exited:
// the bot that "left" the orphans.
func deadSpawner(t *testing.T) (int, uint64) {
	t.Helper()
	cmd := exec.Command("sleep", "0.2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid, start := cmd.Process.Pid, startTime(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return pid, start
}

// A bot killed with SIGKILL leaves its servers' descendants behind; the next
// start finds them by the mark and ends them — only them: the processes of
// a bot process still running (this one), and of another owner, stay.
func TestReapOrphans(t *testing.T) {
	owner := "test-" + time.Now().Format("150405.000000")
	pid, start := deadSpawner(t)
	start2 := func(mark string) (*Process, int) {
		log := filepath.Join(t.TempDir(), "log")
		l := fakemcp.Command(fakemcp.ModeGrandchild).WithLog(log)
		p, err := Start(Command{Path: l.Command, Args: l.Args, Dir: t.TempDir(), Env: append(os.Environ(), l.Environ()...)},
			Options{Name: "fake", Mark: mark})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Terminate)
		ev := fakemcp.WaitForEvents(t, log, fakemcp.EventGrandchild, 1, 5*time.Second)[0]
		return p, ev.PID
	}
	orphan, orphanChild := start2(owner + ":" + strconv.Itoa(pid) + ":" + strconv.FormatUint(start, 10))
	old, oldChild := start2(owner) // a mark written before marks named their bot
	live, liveChild := start2(Mark(owner))
	other, otherChild := start2("someone-else:" + strconv.Itoa(pid) + ":" + strconv.FormatUint(start, 10))

	killed := ReapOrphans(owner)
	slices.Sort(killed)
	want := []int{orphan.PID(), orphanChild, old.PID(), oldChild}
	slices.Sort(want)
	if !slices.Equal(killed, want) {
		t.Errorf("reaped %v, want %v (the dead bot's processes)", killed, want)
	}
	for _, p := range []int{live.PID(), liveChild, other.PID(), otherChild} {
		if !fakemcp.Alive(p) {
			t.Errorf("process %d was killed: it belongs to a live bot or another owner", p)
		}
	}
	<-orphan.Exited()
	<-old.Exited()
	fakemcp.WaitDead(t, 5*time.Second, killed...) // SIGKILLed, but a moment from exiting
	if again := ReapOrphans(owner); len(again) != 0 {
		t.Errorf("second reap killed %v", again)
	}
}

func TestParseMark(t *testing.T) {
	for _, tt := range []struct {
		mark string
		want markInfo
	}{
		{"abc:12:345", markInfo{owner: "abc", spawner: 12, start: 345}},
		{"abc:12:345:9f.3", markInfo{owner: "abc", spawner: 12, start: 345, instance: "9f.3"}},
		{"abc", markInfo{owner: "abc"}},
		{"abc:x:y", markInfo{owner: "abc"}},
	} {
		if got := parseMark(tt.mark); got != tt.want {
			t.Errorf("parseMark(%q) = %+v, want %+v", tt.mark, got, tt.want)
		}
	}
	if !spawnerAlive(os.Getpid(), startTime(os.Getpid())) || spawnerAlive(os.Getpid(), startTime(os.Getpid())+1) {
		t.Error("spawnerAlive does not tell this process from one with another start time")
	}
}
