package mcpclient

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// inService is the URL and the Host name of the shared process in
// service ("" when none runs).
func inService(h *harness) (url, hostName string) {
	hst := h.client.sp.hosts["shared"]
	hst.mu.Lock()
	defer hst.mu.Unlock()
	if hst.proc == nil {
		return "", ""
	}
	return hst.proc.url, hst.proc.hostName
}

// hostAnswer is the HTTP status the process at url answers an initialize
// sent with Host host (what a page's request names, or the bot's).
func hostAnswer(t *testing.T, url, host string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

var hostNameRe = regexp.MustCompile(`^vb-[0-9a-f]{32}\.invalid$`)

// A shared process that stopped answering is replaced (by the ping during
// a call, by /mcp restart from a chat on it or from one whose session
// ended) behind the same Host wall: the new process gets a fresh secret
// name of its own, which every chat's connection to it sends (their calls
// work, and it refuses every other Host), while the stopped process's name,
// the address as a page names it and localhost are refused. Neither name
// reaches the log.
func TestReplacedSharedServerKeepsTheHostWall(t *testing.T) {
	for _, tt := range []struct {
		name         string
		pinged       bool // replaced by the ping during a call; else by /mcp restart
		sessionEnded bool // the restarting chat's session ended before the stop
	}{
		{name: "replaced by the ping during a call", pinged: true},
		{name: "replaced by /mcp restart"},
		{name: "replaced by /mcp restart of a chat whose session ended", sessionEnded: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pingAfter, pingTimeout := time.Minute, time.Minute
			if tt.pinged {
				pingAfter, pingTimeout = 200*time.Millisecond, 2*time.Second
			}
			h, alice, bob, _ := wedgedHarness(t, pingAfter, pingTimeout)
			recall := h.tool("shared", fakemcp.ToolRecall)
			oldURL, oldName := inService(h)
			if !hostNameRe.MatchString(oldName) {
				t.Fatalf("the first process's host name %q", oldName)
			}
			if tt.sessionEnded {
				if err := alice.Restart("shared"); err != nil { // answering: her session only
					t.Fatal(err)
				}
			}

			stopShared(t, h)
			switch {
			case tt.pinged:
				if res := h.call(alice, recall, `{}`); !strings.Contains(res.Text(), "stopped answering") {
					t.Fatalf("the call on the stopped process: %q", res.Text())
				}
			default:
				if err := alice.Restart("shared"); err != nil {
					t.Fatal(err)
				}
			}
			for s, v := range map[*Session]string{alice: "alice", bob: "bob"} {
				if res := h.call(s, recall, `{}`); res.IsError || !strings.HasPrefix(res.Text(), "remembered: "+v) {
					t.Errorf("%s's call on the new process: %q", v, res.Text())
				}
			}

			url, name := inService(h)
			if url == "" || url == oldURL && name == oldName {
				t.Fatalf("the process in service is the stopped one (%s)", url)
			}
			if !hostNameRe.MatchString(name) || name == oldName {
				t.Errorf("the new process's host name %q (the stopped one's %q), want a fresh vb-<128 random bits>.invalid", name, oldName)
			}
			port := strings.TrimSuffix(strings.TrimPrefix(url, "http://127.0.0.1:"), "/mcp")
			for _, host := range []string{name, oldName, "127.0.0.1:" + port, "localhost:" + port, oldName + ":" + port, ""} {
				want := http.StatusForbidden
				if host == name {
					want = http.StatusOK
				}
				if got := hostAnswer(t, url, host); got != want {
					t.Errorf("the new process answers Host %q with HTTP %d, want %d", host, got, want)
				}
			}
			if h.secrets.Redact(name) != "[REDACTED]" {
				t.Error("the new host name is not a registered secret")
			}
			text := fmt.Sprintf("%+v", detailOf(t, alice, "shared"))
			for _, n := range []string{oldName, name} {
				if strings.Contains(h.logs.String(), n) || strings.Contains(text, n) {
					t.Errorf("a host name is in the log or /mcp")
				}
			}
		})
	}
}
