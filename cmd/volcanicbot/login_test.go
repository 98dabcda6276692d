package main

import (
	"bytes"
	"context"
	"io"
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

// volcanicbot login <name> prints the authorization address, takes the
// address the browser ended on from stdin, and leaves the token in the
// data directory (0600), out of its output; check then discovers the
// server. Without a terminal it refuses.
func TestLoginOnTheTerminal(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	data := t.TempDir()
	environ := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "VOLCANIC_AGENT_DIR=" + t.TempDir(),
		"VOLCANIC_DATA_DIR=" + data, "LOG_FORMAT=json", "MCP__SERVERS__REMOTE__URL=" + o.URL + "/mcp"}

	var out, errOut testkit.SyncBuffer
	if code := run(context.Background(), []string{"check"}, &out, &errOut, environ); code == 0 ||
		!strings.Contains(out.String(), "needs login") {
		t.Errorf("check before the login: exit %d\n%s", code, out.String())
	}

	stdin, paste := io.Pipe()
	defer paste.Close()
	out, errOut = testkit.SyncBuffer{}, testkit.SyncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- runWith(context.Background(), []string{"login", "remote"}, stdin, &out, &errOut, environ)
	}()
	addr := regexp.MustCompile(`(?m)^  (http\S+/authorize\S+)$`)
	if !testkit.Until(20*time.Second, func() bool { return addr.FindStringSubmatch(out.String()) != nil }) {
		t.Fatalf("no authorization address:\n%s\n%s", out.String(), errOut.String())
	}
	back := fakemcp.Browse(t, addr.FindStringSubmatch(out.String())[1])
	if _, err := io.WriteString(paste, back+"\n"); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 || !strings.Contains(out.String(), "remote: logged in") {
		t.Fatalf("login: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	path := filepath.Join(data, "mcp-auth", "remote.json")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the token file: %v (%v)", fi, err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"access_token":"access-`) || strings.Contains(out.String()+errOut.String(), "access-1") {
		t.Errorf("the token is not in the file, or in the output:\n%s\n%s", out.String(), errOut.String())
	}

	out, errOut = testkit.SyncBuffer{}, testkit.SyncBuffer{}
	if code := run(context.Background(), []string{"check"}, &out, &errOut, environ); code != 0 || !strings.Contains(out.String(), "echo") {
		t.Errorf("check after the login: exit %d\n%s", code, out.String())
	}
	if code := run(context.Background(), []string{"login", "remote"}, &out, &errOut, environ); code == 0 ||
		!strings.Contains(errOut.String(), "needs a terminal") {
		t.Errorf("login without a terminal: exit %d\n%s", code, errOut.String())
	}
}

func TestLoginCallbackURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                               "",
		"https://bot.example/tg/hook":    "https://bot.example/mcp/oauth/callback",
		"https://bot.example:8443/x?y=1": "https://bot.example:8443/mcp/oauth/callback",
		"not a url":                      "",
	} {
		if got := loginCallbackURL(in); got != want {
			t.Errorf("loginCallbackURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A server at a URL that was never logged in is not invisible to the
// model: it offers remote_login, whose call (asked of nobody, even under
// "approval": "always") says how to log in, and the chat's user reads it.
func TestE2ELoginToolOfANeverLoggedInServer(t *testing.T) {
	o := fakemcp.NewOAuthServer(t)
	var offered bool
	var mu sync.Mutex
	reply := func(req llmtest.Request) llmtest.Reply {
		if res, ok := toolResultText(req); ok {
			return llmtest.Text("result: " + res)
		}
		mu.Lock()
		defer mu.Unlock()
		offered = bytes.Contains(req.Body, []byte(`"remote_login"`))
		return call("remote_login", `{}`)
	}
	d := startDaemon(t, reply, daemonOptions{servers: map[string]any{"remote": map[string]any{"url": o.URL + "/mcp", "approval": "always"}}})
	d.tg.Message(alice, alice, "what is in my notes?")
	d.waitText(alice, "result: ERROR: remote needs login (OAuth): an admin sends /mcp login remote")
	mu.Lock()
	defer mu.Unlock()
	if !offered {
		t.Error("the model was not offered remote_login")
	}
	for _, txt := range d.tg.Texts(alice) {
		if strings.Contains(txt, "May I run") {
			t.Errorf("the login tool asked for an approval: %q", txt)
		}
	}
}
