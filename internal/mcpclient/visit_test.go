package mcpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// visitingUser answers a URL-mode elicitation the way a person does who
// opens the page and never presses Done: it visits the page, then waits
// for the server to report the interaction complete (accept), or gives
// up (cancel). pressDone answers accept at once instead, before visiting.
type visitingUser struct {
	t         *testing.T
	pressDone bool
	mu        sync.Mutex
	asked     []chat.Elicitation
	completed int // questions the server's completion ended
}

func (u *visitingUser) Elicit(ctx context.Context, e chat.Elicitation) (chat.ElicitResult, error) {
	u.mu.Lock()
	u.asked = append(u.asked, e)
	u.mu.Unlock()
	if e.Mode != chat.ElicitURL || e.Completed == nil {
		u.t.Errorf("asked %+v: want a URL elicitation with a completion channel", e)
		return chat.ElicitResult{Action: chat.ElicitCancel}, nil
	}
	if u.pressDone {
		return chat.ElicitResult{Action: chat.ElicitAccept}, nil
	}
	visit(u.t, e.URL)
	select {
	case <-e.Completed:
		u.mu.Lock()
		u.completed++
		u.mu.Unlock()
		return chat.ElicitResult{Action: chat.ElicitAccept}, nil
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		u.t.Error("the server's completion never ended the question")
	}
	return chat.ElicitResult{Action: chat.ElicitCancel}, nil
}

func visit(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", url, resp.Status)
	}
}

// visitServers is the ask fake at 2025-11-25 on both transports, and the
// log of each.
func visitServers(t *testing.T) map[string]struct {
	cfg mcpconfig.ServerConfig
	log string
} {
	t.Helper()
	stdio, stdioLog := fakeServer(t, "ask", fakemcp.ModeAsk)
	httpLog := t.TempDir() + "/http.log"
	web := httptest.NewServer(fakemcp.HTTPHandler(httpLog, fakemcp.ModeAsk))
	t.Cleanup(web.Close)
	web2 := httpConfig("ask", web.URL+"/mcp", nil)
	out := map[string]struct {
		cfg mcpconfig.ServerConfig
		log string
	}{}
	for name, s := range map[string]mcpconfig.ServerConfig{"stdio": stdio, "http": web2} {
		s.ProtocolVersion = "2025-11-25"
		log := stdioLog
		if name == "http" {
			log = httpLog
		}
		out[name] = struct {
			cfg mcpconfig.ServerConfig
			log string
		}{s, log}
	}
	return out
}

// A server's notifications/elicitation/complete ends the URL question it
// names while it is open (the Elicitor's Completed is closed; it answers
// accept); one for an id no question has — another's, or a question
// already answered — is ignored, and nothing is answered twice.
func TestURLElicitationCompleted(t *testing.T) {
	for name, srv := range visitServers(t) {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil, srv.cfg)
			user := &visitingUser{t: t}
			s := h.session("")
			s.SetElicitor(user)
			elicitURL := h.tool("ask", fakemcp.ToolElicitURL)
			if res := h.call(s, elicitURL, `{"visit":true}`); res.IsError || !strings.HasPrefix(res.Text(), "accept") {
				t.Fatalf("elicit_url: %q (error %v)", res.Text(), res.IsError)
			}
			if user.completed != 1 {
				t.Fatalf("%d questions ended by the server's completion, want 1", user.completed)
			}
			page := user.asked[0].URL
			if user.asked[0].ID != "visit-1" || !strings.HasSuffix(page, "/visit/visit-1") {
				t.Errorf("asked %+v", user.asked[0])
			}

			// Already answered, and unknown: ignored.
			visit(t, page)
			visit(t, page[:strings.LastIndex(page, "/")+1]+"someone-elses")
			fakemcp.WaitForEvents(t, srv.log, fakemcp.EventVisited, 3, 10*time.Second)
			testkit.WaitFor(t, "the ignored completions", 10*time.Second, func() bool {
				return strings.Count(h.logs.String(), "MCP elicitation completion ignored") >= 2
			})
			if !strings.Contains(h.logs.String(), "elicitation=someone-elses") {
				t.Errorf("the unknown id is not in the log:\n%s", h.logs.String())
			}

			// Done pressed first: the completion that follows finds no
			// question.
			user.pressDone = true
			if res := h.call(s, elicitURL, `{"visit":true}`); res.Text() != "accept {}" && res.Text() != "accept null" {
				t.Fatalf("elicit_url, Done pressed: %q", res.Text())
			}
			visit(t, user.asked[1].URL)
			testkit.WaitFor(t, "the late completion ignored", 10*time.Second, func() bool {
				return strings.Count(h.logs.String(), "MCP elicitation completion ignored") >= 3
			})
			if user.completed != 1 || len(user.asked) != 2 {
				t.Errorf("asked %d times, %d ended by completions; want 2 and 1", len(user.asked), user.completed)
			}
		})
	}
}

// A tools/call the server answers URLElicitationRequiredError (-32042)
// puts the page it names to the user as a URL elicitation, and once they
// have been there the call is sent again; a user who declines gets the
// call's error saying so; a session nobody answers for gets the server's
// error as it is.
func TestURLElicitationRequired(t *testing.T) {
	for name, srv := range visitServers(t) {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil, srv.cfg)
			needs := h.tool("ask", fakemcp.ToolNeedsVisit)

			bare := h.session("")
			if res := h.call(bare, needs, `{}`); !res.IsError || !strings.Contains(res.Text(), "-32042") {
				t.Errorf("without an Elicitor: %q (error %v)", res.Text(), res.IsError)
			}

			decliner := h.session("")
			decliner.SetElicitor(&scriptedUser{answer: func(chat.Elicitation) chat.ElicitResult { return chat.ElicitResult{Action: chat.ElicitDecline} }})
			if res := h.call(decliner, needs, `{}`); !res.IsError || !strings.Contains(res.Text(), "needs the user to open a page on 127.0.0.1") ||
				!strings.Contains(res.Text(), "answered decline") {
				t.Errorf("declined: %q (error %v)", res.Text(), res.IsError)
			}

			user := &visitingUser{t: t}
			s := h.session("")
			s.SetElicitor(user)
			if res := h.call(s, needs, `{}`); res.IsError || res.Text() != "connected" {
				t.Fatalf("after the visit: %q (error %v)", res.Text(), res.IsError)
			}
			if len(user.asked) != 1 || user.asked[0].ID != fakemcp.NeedsVisitID || user.asked[0].Message != "Connect your account first" {
				t.Errorf("asked %+v", user.asked)
			}
		})
	}
}
