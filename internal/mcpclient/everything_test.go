package mcpclient

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// Integration tests against the real @modelcontextprotocol/server-everything,
// pinned in tools/npm and installed by `make test` (VOLCANIC_TEST_NPM_BIN
// points at its .bin folder). Outside CI a missing install skips them; in CI
// it fails them.

func everythingServer(t *testing.T, wrap string) mcpconfig.ServerConfig {
	t.Helper()
	bin := testkit.NPMBin(t, "mcp-server-everything")
	cfg := mcpconfig.ServerConfig{
		Name: "everything", Source: mcpconfig.SourceSettings, Command: bin, Args: []string{"stdio"},
		Enabled: true, StartupTimeout: 60 * time.Second, CallTimeout: 60 * time.Second,
	}
	if wrap != "" {
		// Record what the client writes to the server's stdin.
		cfg.Command = "/bin/sh"
		cfg.Args = []string{"-c", `tee -a "$1" | "$2" stdio`, "sh", wrap, bin}
	}
	return cfg
}

func TestEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	host := []string{
		"OPENAI_API_KEY=sk-everything-test-0123456789",
		"TELEGRAM_BOT_TOKEN=42:everything-telegram-secret",
		"GITHUB_TOKEN=ghp_everything_0123456789",
	}
	wire := filepath.Join(t.TempDir(), "stdin.jsonl")
	h := newHarness(t, host, everythingServer(t, wire))
	s := h.session("")
	tool := func(name string) Tool { return h.tool("everything", name) }

	t.Run("get-env shows no secret", func(t *testing.T) {
		res := h.call(s, tool("get-env"), `{}`)
		if res.IsError {
			t.Fatal(res.Text())
		}
		out := res.Text()
		if !strings.Contains(out, "PATH") {
			t.Fatalf("get-env shows no PATH:\n%.500s", out)
		}
		for _, secret := range []string{"sk-everything", "everything-telegram-secret", "ghp_everything", "OPENAI_API_KEY", "GITHUB_TOKEN"} {
			if strings.Contains(out, secret) {
				t.Errorf("get-env shows %q", secret)
			}
		}
	})
	t.Run("get-tiny-image maps to an image", func(t *testing.T) {
		res := h.call(s, tool("get-tiny-image"), `{}`)
		if res.Images != 1 {
			t.Fatalf("images = %d: %+v", res.Images, res)
		}
		for _, c := range res.Content {
			if c.Kind == chat.ImagePart && (c.MIMEType != "image/png" || len(c.Data) < 8 || string(c.Data[1:4]) != "PNG") {
				t.Errorf("image part: %s, %d bytes", c.MIMEType, len(c.Data))
			}
		}
	})
	t.Run("get-resource-links", func(t *testing.T) {
		res := h.call(s, tool("get-resource-links"), `{"count":3}`)
		if n := strings.Count(res.Text(), "Resource link: "); n != 3 {
			t.Errorf("%d resource links in:\n%s", n, res.Text())
		}
	})
	t.Run("get-structured-content", func(t *testing.T) {
		res := h.call(s, tool("get-structured-content"), `{"location":"New York"}`)
		if res.IsError || !strings.Contains(res.Text(), "temperature") {
			t.Errorf("structured content: %+v", res)
		}
	})
	t.Run("trigger-long-running-operation is cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel)
		start := time.Now()
		_, err := s.Call(ctx, tool("trigger-long-running-operation"), []byte(`{"duration":30,"steps":10}`))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("cancel took %v", d)
		}
		testkit.WaitFor(t, "notifications/cancelled on the wire", 5*time.Second, func() bool {
			b, _ := os.ReadFile(wire)
			return strings.Contains(string(b), `"method":"notifications/cancelled"`)
		})
		if res := h.call(s, tool("echo"), `{"message":"still here"}`); !strings.Contains(res.Text(), "still here") {
			t.Errorf("after the cancel: %+v", res)
		}
	})
}

// startEverythingHTTP starts `mcp-server-everything streamableHttp` on
// port and waits until it listens; the returned func stops it.
func startEverythingHTTP(t *testing.T, port string) (stop func()) {
	t.Helper()
	bin := testkit.NPMBin(t, "mcp-server-everything")
	cmd := exec.Command(bin, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	testkit.WaitFor(t, "the HTTP server to listen", 30*time.Second, func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return stop
}

func testPort(t *testing.T) string {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(port)
}

// The same server over streamable HTTP (`mcp-server-everything
// streamableHttp`), as a remote server: echo, an image, and a cancelled
// long operation.
func TestEverythingOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	port := testPort(t)
	startEverythingHTTP(t, port)

	cfg := mcpconfig.ServerConfig{Name: "everything", Source: mcpconfig.SourceSettings, URL: "http://127.0.0.1:" + port + "/mcp",
		Enabled: true, StartupTimeout: 30 * time.Second, CallTimeout: 30 * time.Second}
	h := newHarness(t, nil, cfg)
	s := h.session("")
	tool := func(name string) Tool { return h.tool("everything", name) }

	if res := h.call(s, tool("echo"), `{"message":"over http"}`); res.IsError || !strings.Contains(res.Text(), "over http") {
		t.Errorf("echo: %+v", res)
	}
	if res := h.call(s, tool("get-tiny-image"), `{}`); res.Images != 1 {
		t.Errorf("get-tiny-image: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	if _, err := s.Call(ctx, tool("trigger-long-running-operation"), []byte(`{"duration":30,"steps":10}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
	if res := h.call(s, tool("echo"), `{"message":"still here"}`); !strings.Contains(res.Text(), "still here") {
		t.Errorf("after the cancel: %+v", res)
	}
}

// The real server restarted between two calls answers the old session with
// HTTP 400 "No valid session ID provided" (the TypeScript SDK's answer):
// the call that finds out fails, and the next one reconnects — before, every
// call failed until /mcp restart.
func TestEverythingOverHTTPSurvivesAServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	port := testPort(t)
	stop := startEverythingHTTP(t, port)
	cfg := mcpconfig.ServerConfig{Name: "everything", Source: mcpconfig.SourceSettings, URL: "http://127.0.0.1:" + port + "/mcp",
		Enabled: true, StartupTimeout: 30 * time.Second, CallTimeout: 30 * time.Second}
	h := newHarness(t, nil, cfg)
	s := h.session("")
	echo := h.tool("everything", "echo")
	if res := h.call(s, echo, `{"message":"before"}`); res.IsError || !strings.Contains(res.Text(), "before") {
		t.Fatalf("echo: %+v", res)
	}
	stop()
	startEverythingHTTP(t, port)
	res := h.call(s, echo, `{"message":"lost"}`)
	if !res.IsError || !strings.Contains(res.Text(), "reconnects on the next call") {
		t.Errorf("the call after the restart = %q", res.Text())
	}
	for _, msg := range []string{"after", "again"} {
		if res := h.call(s, echo, `{"message":"`+msg+`"}`); res.IsError || !strings.Contains(res.Text(), msg) {
			t.Errorf("echo %s after the reconnect: %q", msg, res.Text())
		}
	}
}
