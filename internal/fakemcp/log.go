package fakemcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// Event names in the log.
const (
	// EventStart is logged once per process start in count-starts mode.
	EventStart = "start"
	// EventGrandchild is logged by grandchild mode; PID is the grandchild's.
	EventGrandchild = "grandchild"
	// EventCancelled is logged when slow or sleep ends because the client
	// sent notifications/cancelled for its request.
	EventCancelled = "cancelled"
	// EventInterrupted is logged when slow or sleep ends because the
	// connection ended (stdin closed) without a notifications/cancelled.
	EventInterrupted = "interrupted"
	// EventCall is logged per tools/call in log-calls mode.
	EventCall = "call"
	// EventDaemon is logged by daemon mode once its intermediate process
	// has exited: PID is the double-forked sleeper's, Parent the fake's.
	EventDaemon = "daemon"
	// EventSetsid is logged by setsid-on-sigterm's grandchild when SIGTERM
	// made it call setsid(); PID is its pid, Parent the fake's.
	EventSetsid = "setsid"
	// EventRoots is logged by roots-on-init mode when the client answered
	// its roots/list: Reason holds the roots' URIs, comma-separated, or
	// "error: …".
	EventRoots = "roots"
	// EventElicited is an answer to elicit (mode ask): Reason is the
	// action, Arguments the content.
	EventElicited = "elicited"
)

// Event is one line of the fake's log.
type Event struct {
	Event string `json:"event"`
	// PID is the fake's pid; for a grandchild, daemon or setsid event,
	// the pid of that process.
	PID int `json:"pid,omitempty"`
	// Parent is the fake's pid in a grandchild, daemon or setsid event.
	Parent int `json:"parent,omitempty"`
	// Cwd, Args (argv without the program), Modes and Env (only with mode
	// env) describe a start.
	Cwd   string   `json:"cwd,omitempty"`
	Args  []string `json:"args,omitempty"`
	Modes []string `json:"modes,omitempty"`
	Env   []string `json:"env,omitempty"`
	// Tool is the tool of a cancelled, interrupted or call event.
	Tool string `json:"tool,omitempty"`
	// RequestID is the JSON-RPC id of the cancelled call, as text.
	RequestID string `json:"requestId,omitempty"`
	// Reason is the reason the client gave in notifications/cancelled.
	Reason string `json:"reason,omitempty"`
	// Arguments are a call event's arguments.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// eventLog appends events to the file named by EnvLog. Each event is one
// write(2) to a file opened with O_APPEND, so processes sharing a log don't
// interleave lines.
type eventLog struct{ path string }

func (l eventLog) add(ev Event) {
	if l.path == "" {
		return
	}
	if ev.PID == 0 {
		ev.PID = os.Getpid()
	}
	line, err := json.Marshal(ev)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: encode event: %v\n", err)
		return
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: open log: %v\n", err)
		return
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: write log: %v\n", err)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: close log: %v\n", err)
	}
}

// ParseLog parses the event log at path. A missing file is an empty log; an
// unfinished last line (being written) is ignored.
func ParseLog(path string) ([]Event, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		data = nil
	}
	var events []Event
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n+1, err)
		}
		events = append(events, ev)
	}
	return events, nil
}

// ReadLog parses the event log at path, failing the test on a malformed
// line. A missing file is an empty log.
func ReadLog(t testing.TB, path string) []Event {
	t.Helper()
	events, err := ParseLog(path)
	if err != nil {
		t.Fatalf("fakemcp: read log: %v", err)
	}
	return events
}

// Filter returns the events named name.
func Filter(events []Event, name string) []Event {
	var out []Event
	for _, ev := range events {
		if ev.Event == name {
			out = append(out, ev)
		}
	}
	return out
}

// WaitForEvents polls the log at path until it holds at least n events named
// name, and returns those events. It fails the test after timeout.
func WaitForEvents(t testing.TB, path, name string, n int, timeout time.Duration) []Event {
	t.Helper()
	var events []Event
	if !testkit.Until(timeout, func() bool {
		events = Filter(ReadLog(t, path), name)
		return len(events) >= n
	}) {
		t.Fatalf("fakemcp: %d %q events in %s after %v, want %d; log: %+v",
			len(events), name, path, timeout, n, ReadLog(t, path))
	}
	return events
}

// Alive reports whether the process pid exists and is not a zombie. (A
// killed grandchild whose parent died too may stay a zombie for a while in a
// container whose init doesn't reap, and kill(pid, 0) still succeeds on it.)
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, perr := os.Stat("/proc/self"); perr != nil {
			return true // no procfs: trust kill(pid, 0)
		}
		return false // exited between the two checks
	}
	// The state follows the parenthesised command name: "pid (comm) S …".
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		switch s[i+2] {
		case 'Z', 'X':
			return false
		}
	}
	return true
}
