package liveview

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview/liveviewtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// stdioMCP is just enough of an MCP client over stdio for the test: one
// request at a time.
type stdioMCP struct {
	in  io.Writer
	out *bufio.Scanner
	id  int
}

func (c *stdioMCP) call(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	c.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	for c.out.Scan() {
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(c.out.Bytes(), &m) == nil && m.ID == c.id {
			if m.Error != nil {
				t.Fatalf("%s: %s", method, m.Error)
			}
			return m.Result
		}
	}
	t.Fatalf("%s: the server closed its output (%v)", method, c.out.Err())
	return nil
}

func (c *stdioMCP) tool(t *testing.T, name string, args any) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(c.call(t, "tools/call", map[string]any{"name": name, "arguments": args}), &r); err != nil || r.IsError || len(r.Content) == 0 {
		t.Fatalf("%s: %+v, %v", name, r, err)
	}
	return r.Content[0].Text
}

// TestRemoteModeLocatesTheChatsTab: the remote browser mode end to end —
// the pinned @playwright/mcp drives a browser at a CDP endpoint (as
// PLAYWRIGHT_CDP_ENDPOINT makes it), the bot asks the chat's session which
// target its tab is (LocateCode), and AttachCDP reaches exactly that tab.
func TestRemoteModeLocatesTheChatsTab(t *testing.T) {
	ws := liveviewtest.StartChromium(t)
	bin := testkit.NPMBin(t, "playwright-mcp")
	site := liveviewtest.NewSite(t)
	cmd := exec.Command(bin, "--cdp-endpoint", ws, "--isolated", "--output-dir", t.TempDir())
	cmd.Dir = t.TempDir() // its snapshot files go there, not into the package
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	c := &stdioMCP{in: stdin, out: sc}
	c.call(t, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "liveview-test", "version": "0"}})
	stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	c.tool(t, "browser_navigate", map[string]string{"url": site.URL})
	site.WaitHit(t, "/")

	answer := c.tool(t, LocateTool, map[string]string{"code": LocateCode})
	target, bctx, err := ParseLocate(answer)
	if err != nil || bctx == "" {
		t.Fatalf("ParseLocate: %q %q %v\n%s", target, bctx, err, answer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	tab, err := AttachCDP(ctx, CDPOptions{Endpoint: ws, TargetID: target, ContextID: bctx})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if u, err := tab.CurrentURL(ctx); err != nil || u != site.URL+"/" {
		t.Fatalf("the located tab is at %q (%v), want the chat's %q", u, err, site.URL+"/")
	}
	if err := tab.Tap(ctx, 100, 50); err != nil {
		t.Fatal(err)
	}
	site.WaitHit(t, "/tap")
	if _, err := AttachCDP(ctx, CDPOptions{Endpoint: ws, TargetID: target, ContextID: "another-chat"}); !errors.Is(err, ErrWrongTarget) {
		t.Fatalf("the tab under another chat's context: %v", err)
	}
}

func TestParseLocate(t *testing.T) {
	cases := []struct{ text, target string }{
		{"### Result\n{\"targetId\":\"T1\",\"browserContextId\":\"C1\"}\n### Ran Playwright code\n```js\n...\n```", "T1"},
		{"### Result\n\"a string\"\n", ""},
		{"### Error\nboom", ""},
		{strings.Repeat("x", maxLocateAnswer+1), ""},
	}
	for _, c := range cases {
		got, _, err := ParseLocate(c.text)
		if got != c.target || (c.target == "") != errors.Is(err, ErrLocate) {
			t.Errorf("ParseLocate(%.30q) = %q, %v; want %q", c.text, got, err, c.target)
		}
	}
}
