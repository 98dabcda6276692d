package fakemcp_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

func TestCrashOnStart(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "log")
	l := fakemcp.Command("crash-on-start", "count-starts").WithLog(log).WithEnv(fakemcp.EnvDieMessage, "database on fire")
	cmd := exec.Command(l.Command, "--some-flag", "x")
	cmd.Env = append(os.Environ(), l.Environ()...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("err = %v, want exit status 1", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q", stdout.String())
	}
	if s := stderr.String(); !strings.HasPrefix(s, "Traceback") || strings.Count(s, "\n") < 5 || !strings.Contains(s, "database on fire") {
		t.Errorf("stderr = %q", s)
	}
	if starts := fakemcp.Filter(fakemcp.ReadLog(t, log), fakemcp.EventStart); len(starts) != 1 {
		t.Errorf("starts = %+v", starts)
	}
}

func TestUnknownMode(t *testing.T) {
	t.Parallel()
	l := fakemcp.Command("normal", "no-such-mode")
	cmd := exec.Command(l.Command)
	cmd.Env = append(os.Environ(), l.Environ()...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !bytes.Contains(out, []byte("no-such-mode")) {
		t.Errorf("err = %v, output %q", err, out)
	}
}

func TestHangOnStart(t *testing.T) {
	t.Parallel()
	w := startWire(t, fakemcp.Command("hang-on-start"), t.TempDir())
	w.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	// A megabyte more goes through a 64 KiB pipe only while it is read: the
	// fake neither exited nor stopped reading.
	w.send(strings.Repeat("x", 1<<20))
	_ = w.stdin.Close()
	if code := w.wait(5 * time.Second); code != 0 {
		t.Errorf("exit code = %d", code)
	}
	for line := range w.lines { // closed at its end
		t.Errorf("hang-on-start answered %q", line)
	}
}

func TestDieAfterFirstCallAndChatter(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "log")
	l := fakemcp.Command("die-after-first-call", "stderr-chatter", "log-calls").WithLog(log).
		WithEnv(fakemcp.EnvDieMessage, "out of memory").WithEnv(fakemcp.EnvSecret, "s3cr3t-value")
	w := startWire(t, l, t.TempDir())
	w.handshake()
	w.result(2, "tools/list", `{}`) // not a call: no death
	w.result(3, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`)
	answered := time.Now()
	if code := w.wait(5 * time.Second); code != 3 {
		t.Errorf("exit code = %d, want 3", code)
	}
	if d := time.Since(answered); d < 100*time.Millisecond {
		t.Errorf("died %v after answering, want about 200ms", d)
	}
	stderr := w.stderr.String()
	for _, want := range []string{"dying: out of memory\n", "fake: call echo secret=s3cr3t-value\n", "secret=s3cr3t-value"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	calls := fakemcp.Filter(fakemcp.ReadLog(t, log), fakemcp.EventCall)
	if len(calls) != 1 || calls[0].Tool != "echo" || string(calls[0].Arguments) != `{"text":"hi"}` {
		t.Errorf("call events = %+v", calls)
	}
}

func TestGrandchildDiesWithGroup(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "log")
	w := startWire(t, fakemcp.Command("grandchild").WithLog(log), t.TempDir())
	ev := fakemcp.WaitForEvents(t, log, fakemcp.EventGrandchild, 1, 5*time.Second)[0]
	if ev.Parent != w.cmd.Process.Pid || !fakemcp.Alive(ev.PID) {
		t.Fatalf("grandchild event = %+v, fake pid %d, alive %v", ev, w.cmd.Process.Pid, fakemcp.Alive(ev.PID))
	}
	pgid, err := syscall.Getpgid(ev.PID)
	if err != nil || pgid != w.cmd.Process.Pid {
		t.Errorf("grandchild pgid = %d, %v; want the fake's group %d", pgid, err, w.cmd.Process.Pid)
	}
	if err := syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w.wait(5 * time.Second)
	fakemcp.WaitDead(t, 5*time.Second, ev.PID) // the group kill reached it
}

func TestIgnoreSIGTERM(t *testing.T) {
	t.Parallel()
	w := startWire(t, fakemcp.Command("ignore-sigterm"), t.TempDir())
	w.handshake() // it is up, its signal disposition set
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	w.result(2, "ping", `{}`) // it answers after the signal
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	w.wait(5 * time.Second)
	// Ended by the SIGKILL, not by the SIGTERM on its way when it answered.
	if ws, ok := w.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("ended by %v, want SIGKILL", w.cmd.ProcessState)
	}
}

func TestSIGTERMEndsNormalFake(t *testing.T) {
	t.Parallel()
	w := startWire(t, fakemcp.Command("normal"), t.TempDir())
	w.handshake()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	w.wait(5 * time.Second)
}
