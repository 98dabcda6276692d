package mcpclient

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// wedgedHarness is a Shared fake with state tools, pinged after pingAfter
// with pingTimeout to answer, and two chats that each keep a value and
// have it saved.
func wedgedHarness(t *testing.T, pingAfter, pingTimeout time.Duration) (h *harness, alice, bob *Session, logPath string) {
	t.Helper()
	cfg, logPath := sharedServer(t, "shared")
	cfg.State = &mcpconfig.StateTools{Save: fakemcp.ToolSaveState, Restore: fakemcp.ToolRestoreState, File: "state.json"}
	h = newHarness(t, nil, cfg)
	t.Cleanup(func() {
		if t.Failed() {
			for l := range strings.SplitSeq(h.logs.String(), "\n") {
				if !strings.Contains(l, "level=DEBUG") {
					t.Log(l)
				}
			}
		}
	})
	h.client.pingAfter, h.client.pingTimeout = pingAfter, pingTimeout
	h.client.sp.hosts["shared"].answerWithin = pingAfter + pingTimeout
	alice, bob = h.session(""), h.session("")
	for s, v := range map[*Session]string{alice: "alice", bob: "bob"} {
		h.call(s, h.tool("shared", fakemcp.ToolRemember), `{"value":"`+v+`"}`)
		path := filepath.Join(s.private, "state.json")
		testkit.WaitFor(t, v+"'s state saved", 10*time.Second, func() bool {
			b, _ := os.ReadFile(path)
			return strings.Contains(string(b), v)
		})
	}
	return h, alice, bob, logPath
}

// stopShared stops the shared process (SIGSTOP: it no longer reads its
// sockets) and returns its pid; the test's end lets it go on.
func stopShared(t *testing.T, h *harness) int {
	t.Helper()
	pid, _, _ := h.client.sp.hosts["shared"].status()
	if pid == 0 {
		t.Fatal("no shared process")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	// The stop is asynchronous: until every thread has stopped, the
	// process may still answer.
	testkit.WaitFor(t, "the shared process to stop", 10*time.Second, func() bool { return stopped(pid) })
	return pid
}

// stopped reports whether every thread of pid is stopped (state T).
func stopped(pid int) bool {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "stat"))
		i := strings.LastIndexByte(string(b), ')')
		if err != nil || i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return true
}

// A shared process that stops answering is found out by a ping while a
// call is in flight and replaced for every chat: the call ends at once
// saying so, not after the call timeout; every chat's next call runs on a
// new process with its saved state, and is told what was lost; the
// stopped process is ended; /mcp says it was replaced.
func TestSharedServerWedgedIsReplaced(t *testing.T) {
	h, alice, bob, logPath := wedgedHarness(t, 200*time.Millisecond, 2*time.Second)
	recall := h.tool("shared", fakemcp.ToolRecall)
	stopped := stopShared(t, h)

	start := time.Now()
	res := h.call(alice, recall, `{}`)
	took := time.Since(start)
	t.Logf("the call on the stopped process returned after %v", took.Round(10*time.Millisecond))
	if !res.IsError || !strings.Contains(res.Text(), "stopped answering") || !strings.Contains(res.Text(), "was replaced") {
		t.Errorf("the call on the stopped process: %q, want an error saying it stopped answering and was replaced", res.Text())
	}
	if took > 5*time.Second { // the call timeout is 10 s
		t.Errorf("the call on the stopped process took %v", took)
	}
	for s, v := range map[*Session]string{bob: "bob", alice: "alice"} {
		res := h.call(s, recall, `{}`)
		if res.IsError || !strings.HasPrefix(res.Text(), "remembered: "+v) {
			t.Errorf("%s's next call: %q, want her state restored on a new process", v, res.Text())
		}
		told := strings.Contains(res.Text(), "stopped answering") && strings.Contains(res.Text(), "is gone")
		if want := s == bob; told != want { // alice heard of it in the call that met it
			t.Errorf("%s's next call says %q; told of the replacement: %v, want %v", v, res.Text(), told, want)
		}
		if res := h.call(s, recall, `{}`); strings.Contains(res.Text(), "replaced") {
			t.Errorf("%s is told twice: %q", v, res.Text())
		}
	}
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 2 {
		t.Errorf("%d starts of the shared process, want 2", n)
	}
	if pid, _, _ := h.client.sp.hosts["shared"].status(); pid == stopped || pid == 0 {
		t.Errorf("the shared process is %d, want a new one (the stopped one was %d)", pid, stopped)
	}
	testkit.WaitFor(t, "the stopped process to be ended", 20*time.Second, func() bool { return gone(stopped) })
	if sh := detailOf(t, alice, "shared").Shared; sh == nil || !strings.Contains(sh.Replaced, "stopped answering") || sh.ReplacedAt.IsZero() {
		t.Errorf("/mcp shared does not say the process was replaced: %+v", sh)
	}
}

// A chat whose first call comes when the shared process no longer answers
// (its session's handshake gets no answer) has its call run on a new one.
func TestSharedServerWedgedBeforeAChatsFirstCall(t *testing.T) {
	h, _, _, _ := wedgedHarness(t, 200*time.Millisecond, 2*time.Second)
	stopped := stopShared(t, h)
	carol := h.session("")
	start := time.Now()
	res := h.call(carol, h.tool("shared", fakemcp.ToolWhoAmI), `{}`)
	if res.IsError || res.Text() != "root: "+carol.Workspace() || time.Since(start) > 5*time.Second {
		t.Errorf("a new chat's call: %q after %v, want it to run on a new process", res.Text(), time.Since(start))
	}
	if pid, _, _ := h.client.sp.hosts["shared"].status(); pid == stopped {
		t.Error("the stopped process is still in service")
	}
}

// /stop (the turn's context cancelled) ends a call on a shared process
// that stopped answering at once: the notification that tells the server
// does not hold it up.
func TestStopDuringACallOnAStoppedServer(t *testing.T) {
	h, alice, _, _ := wedgedHarness(t, time.Minute, time.Minute) // no ping: the stop alone
	stopShared(t, h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan time.Time, 1)
	go func() {
		_, _ = alice.Call(ctx, h.tool("shared", fakemcp.ToolRecall), []byte(`{}`))
		done <- time.Now()
	}()
	testkit.WaitFor(t, "the call in flight", 10*time.Second, func() bool { st, _ := alice.Status("shared"); return st.InFlight == 1 })
	stopped := time.Now()
	cancel()
	select {
	case at := <-done:
		took := at.Sub(stopped)
		t.Logf("the stopped call returned %v after /stop", took.Round(time.Millisecond))
		if took > time.Second {
			t.Errorf("the stopped call returned %v after /stop, want < 1 s", took)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stopped call did not return")
	}
}

// /mcp restart from a chat while the shared process does not answer: it
// is replaced for every chat within seconds (no save, no wait on it),
// whether the chat's session is on it (pinged) or ended since (the process
// itself asked); the chat's saved state stays as it was and is restored on
// the new process, and the other chat is told at its next call. A restart
// of a process that answers replaces the chat's session only: one chat
// cannot restart the others'.
func TestRestartReplacesAStoppedSharedServer(t *testing.T) {
	for _, tt := range []struct {
		name         string
		sessionEnded bool
	}{
		{"from a chat with its session on it", false},
		{"from a chat whose session ended", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, alice, bob, logPath := wedgedHarness(t, time.Minute, time.Minute) // no ping during calls: the restart finds it
			recall := h.tool("shared", fakemcp.ToolRecall)
			restarter, other := bob, alice
			if tt.sessionEnded {
				restarter, other = alice, bob
				running, _, _ := h.client.sp.hosts["shared"].status()
				if err := alice.Restart("shared"); err != nil {
					t.Fatal(err)
				}
				if pid, _, _ := h.client.sp.hosts["shared"].status(); pid != running {
					t.Errorf("/mcp restart of an answering shared process replaced it (%d, then %d)", running, pid)
				}
				if res := h.call(bob, recall, `{}`); res.Text() != "remembered: bob" {
					t.Errorf("bob after alice's restart: %q, want his session untouched", res.Text())
				}
			}

			stopped := stopShared(t, h)
			start := time.Now()
			if err := restarter.Restart("shared"); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			t.Logf("/mcp restart on the stopped server took %v", took.Round(10*time.Millisecond))
			if took > 5*time.Second {
				t.Errorf("/mcp restart took %v on a stopped server, want < 5 s", took)
			}
			if st := detailOf(t, restarter, "shared"); st.PID == stopped || (st.Shared != nil && st.Shared.PID == stopped) {
				t.Errorf("/mcp shared still shows the stopped process: %+v", st)
			}
			if st, _ := other.Status("shared"); st.State == StateRunning {
				t.Errorf("the other chat's /mcp says %s on the replaced process", st.State)
			}
			for s, v := range map[*Session]string{alice: "alice", bob: "bob"} {
				res := h.call(s, recall, `{}`)
				if res.IsError || !strings.HasPrefix(res.Text(), "remembered: "+v) {
					t.Errorf("%s's call after the restart: %q", v, res.Text())
				}
				if told := strings.Contains(res.Text(), "was replaced"); told != (s == other) {
					t.Errorf("%s's call after the restart says %q", v, res.Text())
				}
			}
			if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 2 {
				t.Errorf("%d starts of the shared process, want 2", n)
			}
			testkit.WaitFor(t, "the stopped process to be ended", 20*time.Second, func() bool { return gone(stopped) })
		})
	}
}

// A slow call on a shared process that answers its pings is left alone.
func TestSlowCallOnASharedServerIsNotReplaced(t *testing.T) {
	h, alice, _, logPath := wedgedHarness(t, 200*time.Millisecond, 2*time.Second)
	res := h.call(alice, h.tool("shared", fakemcp.ToolSleep), `{"ms":1500}`)
	if res.IsError || res.Text() != "slept 1500 ms" {
		t.Errorf("the slow call: %q", res.Text())
	}
	if n := len(fakemcp.Filter(fakemcp.ReadLog(t, logPath), fakemcp.EventStart)); n != 1 {
		t.Errorf("%d starts of the shared process, want 1: it answered its pings", n)
	}
}
