package fakemcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func TestMain(m *testing.M) {
	fakemcp.MainIfRequested()
	os.Exit(m.Run())
}

// startClient starts the fake through mcp-go's client in dir (the test's
// temp dir when empty) and initialises the connection.
func startClient(t *testing.T, l fakemcp.Launch, dir string, opts ...client.ClientOption) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	tr := transport.NewStdioWithOptions(l.Command, l.Environ(), l.Args,
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = append(os.Environ(), env...)
			cmd.Dir = dir
			return cmd, nil
		}))
	c := client.NewClient(tr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	res, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "fakemcp-test", Version: "0"},
	}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c, res
}

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func onlyText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content = %#v, want one text", res.Content)
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("content[0] = %#v, want text", res.Content[0])
	}
	return tc.Text
}

// wire is the fake started by hand, spoken to in JSON lines.
type wire struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *testkit.SyncBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // cmd.Wait's result, after done
}

// startWire starts the fake in its own process group (killed on cleanup).
func startWire(t *testing.T, l fakemcp.Launch, dir string) *wire {
	t.Helper()
	cmd := exec.Command(l.Command, l.Args...)
	cmd.Env = append(os.Environ(), l.Environ()...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w := &wire{t: t, cmd: cmd, lines: make(chan []byte, 64), stderr: &testkit.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = w.stderr
	var err error
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				w.lines <- line
			}
			if err != nil {
				break
			}
		}
		close(w.lines)
		w.err = cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-w.done
	})
	return w
}

func (w *wire) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
		w.t.Fatalf("send: %v", err)
	}
}

// recv returns the next message, failing after timeout.
func (w *wire) recv(timeout time.Duration) map[string]json.RawMessage {
	w.t.Helper()
	select {
	case line, ok := <-w.lines:
		if !ok {
			w.t.Fatalf("stdout closed; stderr: %s", w.stderr.String())
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			w.t.Fatalf("bad line %q: %v", line, err)
		}
		return m
	case <-time.After(timeout):
		w.t.Fatalf("no message after %v; stderr: %s", timeout, w.stderr.String())
		return nil
	}
}

// request sends a request and returns its response's result, or its error
// object when wantError.
func (w *wire) request(id int, method, params string) map[string]json.RawMessage {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":` + params + `}`)
	m := w.recv(10 * time.Second)
	if string(m["id"]) != strconv.Itoa(id) {
		w.t.Fatalf("response id = %s, want %d: %v", m["id"], id, m)
	}
	return m
}

func (w *wire) result(id int, method, params string) json.RawMessage {
	w.t.Helper()
	m := w.request(id, method, params)
	if m["error"] != nil {
		w.t.Fatalf("%s: error %s", method, m["error"])
	}
	return m["result"]
}

// handshake performs the 2025-11-25 initialize handshake.
func (w *wire) handshake() json.RawMessage {
	w.t.Helper()
	res := w.result(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"0"}}`)
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

// wait waits for the process to exit and returns its exit code (-1 when a
// signal ended it).
func (w *wire) wait(timeout time.Duration) int {
	w.t.Helper()
	select {
	case <-w.done:
	case <-time.After(timeout):
		w.t.Fatalf("process still running after %v; stderr: %s", timeout, w.stderr.String())
	}
	return w.cmd.ProcessState.ExitCode()
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}
