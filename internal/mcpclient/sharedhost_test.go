package mcpclient

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// A Shared server with HostEnv gets, at each start, a random name as the
// only Host it serves, in its environment; the chats' connections send
// it, so they work, while a request that names the server's address as a
// browser would (127.0.0.1:<port>, localhost:<port>) is refused. The name
// is a registered secret: the server's refusal, which quotes it, reaches
// no log or text redacted.
func TestSharedServerServesOnlyItsHostName(t *testing.T) {
	cfg, _ := sharedServer(t, "shared")
	h := newHarness(t, nil, cfg)
	alice, bob := h.session(""), h.session("")
	whoami := h.tool("shared", fakemcp.ToolWhoAmI)
	for _, s := range []*Session{alice, bob} {
		if got := h.call(s, whoami, `{}`); got.IsError || got.Text() != "root: "+s.Workspace() {
			t.Fatalf("a chat's call through the wall: %+v", got)
		}
	}
	hst := h.client.sp.hosts["shared"]
	hp, err := hst.acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hst.release(hp)
	url, name := hp.url, hp.hostName
	if !regexp.MustCompile(`^vb-[0-9a-f]{32}\.invalid$`).MatchString(name) {
		t.Errorf("host name %q, want vb-<128 random bits>.invalid", name)
	}
	port := strings.TrimSuffix(strings.TrimPrefix(url, "http://127.0.0.1:"), "/mcp")
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, name + ":" + port, "", name} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := http.StatusForbidden
		if host == name {
			want = http.StatusOK
		}
		if resp.StatusCode != want {
			t.Errorf("Host %q: HTTP %d, want %d", host, resp.StatusCode, want)
		}
	}
	if h.secrets.Redact("refused: "+name) != "refused: [REDACTED]" {
		t.Error("the host name is not a registered secret")
	}
	if up := strings.ToUpper(name); h.secrets.Redact("REFUSED: "+up) != "REFUSED: [REDACTED]" {
		t.Error("the host name in upper case (a page's innerText.toUpperCase()) is not a registered secret")
	}
	text := fmt.Sprintf("%+v", detailOf(t, alice, "shared"))
	if strings.Contains(h.logs.String(), name) || strings.Contains(text, name) {
		t.Errorf("the host name is in the log or /mcp")
	}

	// Each start has a name of its own: the process dies, the next
	// call starts another, which serves only its new name.
	pid, _, _ := hst.status()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the shared process to die", 10*time.Second, func() bool { p, _, _ := hst.status(); return p == 0 })
	h.call(alice, whoami, `{}`) // reports the end
	if got := h.call(alice, whoami, `{}`); got.IsError || got.Text() != "root: "+alice.Workspace() {
		t.Fatalf("the call after a restart: %+v", got)
	}
	hp, err = hst.acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hst.release(hp)
	again := hp.hostName
	if again == name || again == "" {
		t.Errorf("the restarted server's name %q, want a new one", again)
	}
}
