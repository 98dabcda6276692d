package bot

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// /mcp login <name>, from an admin: the link goes to the chat, and the
// admin's next message is the login's answer (never delivered to the
// model); a failed answer says why; another user's message is theirs;
// a non-admin is refused.
func TestMCPLoginFromTheChat(t *testing.T) {
	h := startBot(t, func(o *Options) { o.Admins = []int64{alice} })
	h.fake.Message(alice, alice, "/mcp login remote")
	link := h.texts(t, alice, 1)[0]
	if !strings.Contains(link, "https://auth.example/authorize?state=s1") || !strings.Contains(link, "send it here as your next message") {
		t.Fatalf("the login's message:\n%s", link)
	}
	h.fake.Message(alice, alice, "no code here")
	if got := h.texts(t, alice, 2)[1]; !strings.HasPrefix(got, "The login failed: remote: login: no code in") {
		t.Errorf("a bad answer: %q", got)
	}
	h.fake.Message(alice, alice, "/mcp login remote")
	h.texts(t, alice, 3)
	h.fake.Message(alice, alice, "http://127.0.0.1:8976/callback?code=c1&state=s1")
	if got := h.texts(t, alice, 4)[3]; got != "remote: logged in. Its tools are offered from the next message on." {
		t.Errorf("the answer: %q", got)
	}
	h.fake.Message(alice, alice, "hello")
	h.sess.waitCalls(t, "deliver", 1)
	calls := h.sess.Calls()
	want := []string{"login remote", "finish no code here", "login remote", "finish http://127.0.0.1:8976/callback?code=c1&state=s1", "deliver 1001 hello"}
	if !slices.Equal(calls, want) {
		t.Errorf("calls %q, want %q", calls, want)
	}

	h.fake.Message(bob, bob, "/mcp login remote")
	if got := h.texts(t, bob, 1)[0]; !strings.HasPrefix(got, "Only the bot's admins") {
		t.Errorf("a non-admin: %q", got)
	}
	h.fake.Message(alice, alice, "/mcp login nope")
	if got := h.texts(t, alice, 5)[4]; !strings.Contains(got, "nope is not a server at a URL") {
		t.Errorf("a command server: %q", got)
	}
}

// With a public callback (the webhook's origin), /mcp login has the
// browser come back to the bot, which finishes the login and tells the
// chat; a replayed or unknown state is refused.
func TestMCPLoginCallback(t *testing.T) {
	const callback = "https://bot.example/mcp/oauth/callback"
	h := startBot(t, func(o *Options) { o.Admins = []int64{alice}; o.LoginCallback = callback })
	if p := h.bot.LoginCallbackPath(); p != "/mcp/oauth/callback" {
		t.Fatalf("path %q", p)
	}
	h.fake.Message(alice, alice, "/mcp login remote")
	if got := h.texts(t, alice, 1)[0]; !strings.Contains(got, "comes back to me") {
		t.Fatalf("the login's message:\n%s", got)
	}
	serve := func(query string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.bot.LoginCallbackHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/mcp/oauth/callback?"+query, nil))
		return w
	}
	if w := serve("code=c1&state=s1"); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "logged in to remote") {
		t.Errorf("the callback: %d %s", w.Code, w.Body.String())
	}
	if got := h.texts(t, alice, 2)[1]; got != "remote: logged in. Its tools are offered from the next message on." {
		t.Errorf("the chat: %q", got)
	}
	if w := serve("code=c1&state=s1"); w.Code != http.StatusBadRequest {
		t.Errorf("a replay: %d %s", w.Code, w.Body.String())
	}
	if calls := h.sess.Calls(); !slices.Contains(calls, "login remote "+callback) || !slices.Contains(calls, "finish "+callback+"?code=c1&state=s1") {
		t.Errorf("calls %q", calls)
	}
}
