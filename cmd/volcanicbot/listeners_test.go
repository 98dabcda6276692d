package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The HTTP listener's clients are bounded: a keep-alive connection left
// idle is closed within the idle timeout (before, 2,000 of 2,000 were
// open after 40 s, a file descriptor each), a header sent slowly within
// the header timeout, and an oversized header is refused.
func TestHTTPListenerClosesIdleConnections(t *testing.T) {
	addr := freeAddr(t)
	limits := defaultHTTPLimits()
	limits.Idle, limits.ReadHeader = 500*time.Millisecond, time.Second
	startDaemon(t, echoThenAnswer, daemonOptions{extra: []string{"HTTP_ADDR=" + addr},
		main: func(m *Main) { m.httpLimits = limits }})

	const n = 200
	closed := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One request, answered, then nothing: the connection idles.
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			r := bufio.NewReader(c)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				closed <- fmt.Errorf("the request: %w", err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			// Read returns when the server closes it (or after 30 s: the
			// test's own deadline, not the server's).
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, err = r.ReadByte()
			if !errors.Is(err, io.EOF) {
				err = fmt.Errorf("still open: %w", err)
			} else {
				err = nil
			}
			closed <- err
		}()
	}
	wg.Wait()
	close(closed)
	open := 0
	for err := range closed {
		if err != nil {
			open++
			if open == 1 {
				t.Errorf("an idle connection: %v", err)
			}
		}
	}
	if open > 0 {
		t.Errorf("%d of %d idle keep-alive connections left open", open, n)
	}

	// A client that sends half a header and then nothing.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n", addr)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if b, err := io.ReadAll(c); err != nil || len(b) > 0 && !strings.Contains(string(b), " 408 ") {
		t.Errorf("a header never finished: %q, %v; want the connection closed", b, err)
	}

	// A header over the limit.
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/healthz", nil)
	req.Header.Set("X-Padding", strings.Repeat("x", 64<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 64 KiB header: %s, want 431", resp.Status)
	}
}

// At most MaxConns connections are served at once: the next waits until
// one closes, rather than each client taking a file descriptor and a
// goroutine of its own.
func TestHTTPListenerLimitsConnections(t *testing.T) {
	addr := freeAddr(t)
	limits := defaultHTTPLimits()
	limits.MaxConns, limits.ReadHeader = 3, time.Minute
	startDaemon(t, echoThenAnswer, daemonOptions{extra: []string{"HTTP_ADDR=" + addr},
		main: func(m *Main) { m.httpLimits = limits }})

	var held []net.Conn
	for range limits.MaxConns {
		c, err := net.Dial("tcp", addr) // connected, silent: each holds a slot
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	served := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		served <- err
	}()
	select {
	case err := <-served:
		t.Fatalf("a request past %d held connections was served at once (%v)", limits.MaxConns, err)
	case <-time.After(300 * time.Millisecond): // a negative: nothing to wait for but time
	}
	held[0].Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the request was not served after a slot was freed")
	}
}

// /metrics is not on HTTP_ADDR, which a webhook's domain exposes to the
// internet: a post to the webhook's host gets 404 there. It is served on
// METRICS_ADDR only, and with a loopback address only from this machine.
func TestMetricsOnlyOnTheirOwnListener(t *testing.T) {
	metricsAddr := freeAddr(t)
	d := startDaemon(t, echoThenAnswer, daemonOptions{webhook: true,
		extra: []string{"METRICS_ADDR=" + metricsAddr}})
	hook := envValue(d.environ, "HTTP_ADDR")

	get := func(addr, path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(hook, "/metrics"); code != http.StatusNotFound || strings.Contains(body, "volcanicbot_") {
		t.Errorf("GET /metrics on HTTP_ADDR (the webhook's listener): %d %.80q, want 404", code, body)
	}
	// /healthz says 503 until the webhook is set: wait for that, not a time.
	testkit.WaitFor(t, "GET /healthz on HTTP_ADDR answering 200", 60*time.Second, func() bool {
		code, _ := get(hook, "/healthz")
		return code == http.StatusOK
	})
	if code, body := get(metricsAddr, "/metrics"); code != http.StatusOK || !strings.Contains(body, "volcanicbot_telegram_calls_total") {
		t.Errorf("GET /metrics on METRICS_ADDR: %d %.200q", code, body)
	}
	if code, _ := get(metricsAddr, "/healthz"); code != http.StatusNotFound {
		t.Errorf("GET /healthz on METRICS_ADDR: %d, want 404 (metrics only)", code)
	}

	// Bound to 127.0.0.1: another address of this machine does not reach it.
	_, port, _ := net.SplitHostPort(metricsAddr)
	if ip := nonLoopbackIP(); ip != "" {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, port), 5*time.Second); err == nil {
			c.Close()
			t.Errorf("METRICS_ADDR %s answered on %s", metricsAddr, ip)
		}
	} else {
		t.Log("no address but loopback on this machine: the outside is not tried")
	}
}

// Without METRICS_ADDR there is no /metrics anywhere; METRICS_ADDR equal
// to HTTP_ADDR is refused (it would put /metrics on the exposed listener).
func TestMetricsAddrSettings(t *testing.T) {
	addr := freeAddr(t)
	startDaemon(t, echoThenAnswer, daemonOptions{extra: []string{"HTTP_ADDR=" + addr}})
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on HTTP_ADDR without METRICS_ADDR: %s, want 404", resp.Status)
	}

	cfg, err := LoadConfig(lookupIn([]string{"HOME=" + t.TempDir(), "HTTP_ADDR=:8080", "METRICS_ADDR=:8080"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(false); err == nil || !strings.Contains(err.Error(), "METRICS_ADDR (metrics_addr) must differ from HTTP_ADDR") {
		t.Errorf("METRICS_ADDR = HTTP_ADDR: %v", err)
	}
}

// The image and compose.yaml serve /metrics on loopback by default, and
// HTTP_ADDR (the port a webhook's domain forwards to) somewhere else.
func TestImageKeepsMetricsOnLoopback(t *testing.T) {
	dockerfile, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	compose, err := os.ReadFile(filepath.Join("..", "..", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name, re string
		text     []byte
	}{
		{"Dockerfile", `(?m)^\s+METRICS_ADDR=(\S+)`, dockerfile},
		{"compose.yaml", `(?m)^\s+METRICS_ADDR: "?\$\{METRICS_ADDR:-([^}]+)\}`, compose},
	} {
		m := regexp.MustCompile(f.re).FindSubmatch(f.text)
		if m == nil {
			t.Errorf("%s sets no METRICS_ADDR default", f.name)
			continue
		}
		host, _, err := net.SplitHostPort(string(m[1]))
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("%s: METRICS_ADDR defaults to %s, want a loopback address", f.name, m[1])
		}
	}
}

// envValue is the value of name in an environ list ("" if absent).
func envValue(environ []string, name string) string {
	v, _ := lookupIn(environ)(name)
	return v
}

// nonLoopbackIP is an IPv4 address of this machine that is not loopback,
// or "".
func nonLoopbackIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

// An HTTP_ADDR in use ends the start with an error that names it, and with
// nothing left running: the listeners are bound before the catalogue's
// discovery, the usage journal's upkeep or the sessions start (before, Run
// returned with those goroutines running and the sessions never closed).
func TestAnAddressInUseStopsTheStartCleanly(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	tg := newTelegram(t)
	model := llmtest.NewOpenAI(t)
	agentDir := t.TempDir()
	mcpLog := filepath.Join(t.TempDir(), "fake.log")
	l := fakemcp.Command(fakemcp.ModeCountStarts).WithLog(mcpLog)
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fake": map[string]any{"command": l.Command, "env": l.Env}}})
	if err := os.WriteFile(filepath.Join(agentDir, "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &testkit.SyncBuffer{}
	m, err := NewMain(logs, []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(), "TELEGRAM_ALLOWED_USERS=1",
		"VOLCANIC_DATA_DIR=" + t.TempDir(), "VOLCANIC_AGENT_DIR=" + agentDir, "HTTP_ADDR=" + held.Addr().String(),
		"LLM_PROVIDER=openai", "LLM_MODEL=test-model", "OPENAI_API_KEY=sk-e2e-openai-0123456789", "OPENAI_BASE_URL=" + model.URL})
	if err != nil {
		t.Fatal(err)
	}
	err = m.Run(context.Background())
	m.Close()
	if err == nil || !strings.Contains(err.Error(), "HTTP_ADDR") {
		t.Fatalf("Run with HTTP_ADDR in use = %v, want an error naming HTTP_ADDR", err)
	}
	if strings.Contains(logs.String(), "MCP catalogue ready") {
		t.Errorf("the catalogue was built after the start failed:\n%s", logs.String())
	}
	if _, err := os.Stat(mcpLog); err == nil {
		t.Errorf("an MCP server was started after the start failed: %v", fakemcp.ReadLog(t, mcpLog))
	}
}
