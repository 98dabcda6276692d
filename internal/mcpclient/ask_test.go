package mcpclient

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// scriptedUser answers elicitations with answer and records what it was
// asked.
type scriptedUser struct {
	mu     sync.Mutex
	asked  []chat.Elicitation
	answer func(chat.Elicitation) chat.ElicitResult
}

func (u *scriptedUser) Elicit(_ context.Context, e chat.Elicitation) (chat.ElicitResult, error) {
	u.mu.Lock()
	u.asked = append(u.asked, e)
	u.mu.Unlock()
	return u.answer(e), nil
}

func (u *scriptedUser) last() chat.Elicitation {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.asked) == 0 {
		return chat.Elicitation{}
	}
	return u.asked[len(u.asked)-1]
}

type scriptedModel struct {
	mu   sync.Mutex
	seen []chat.SamplingRequest
}

func (m *scriptedModel) Sample(_ context.Context, r chat.SamplingRequest) (chat.SamplingResult, error) {
	m.mu.Lock()
	m.seen = append(m.seen, r)
	m.mu.Unlock()
	return chat.SamplingResult{Model: "bot-model", Text: "forty-two"}, nil
}

// askServers is the ask fake on each transport and protocol era.
func askServers(t *testing.T) map[string]mcpconfig.ServerConfig {
	t.Helper()
	stdio, _ := fakeServer(t, "ask", fakemcp.ModeAsk)
	stdio.Roots = true // as for every command, by default
	web := httptest.NewServer(fakemcp.HTTPHandler("", fakemcp.ModeAsk))
	t.Cleanup(web.Close)
	http := httpConfig("ask", web.URL+"/mcp", nil)
	out := map[string]mcpconfig.ServerConfig{}
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		s, h := stdio, http
		s.ProtocolVersion, h.ProtocolVersion = v, v
		out["stdio "+v] = s
		out["http "+v] = h
	}
	return out
}

// A server's elicitation reaches the session's Elicitor as a parsed form,
// on both eras (a server request, or an input_required result) and both
// transports; the accepted answer goes back with the defaults of the
// fields left out; decline and cancel go back as they are; a form the
// client cannot ask, or a session with no Elicitor, is refused with a
// reason; sampling reaches the Sampler only when the entry allows it.
func TestServersAsk(t *testing.T) {
	for name, cfg := range askServers(t) {
		t.Run(name, func(t *testing.T) {
			sampling := cfg
			sampling.Name, sampling.Sampling = "asks", true
			h := newHarness(t, nil, cfg, sampling)
			user := &scriptedUser{answer: func(e chat.Elicitation) chat.ElicitResult {
				if e.Mode == chat.ElicitURL {
					return chat.ElicitResult{Action: chat.ElicitAccept}
				}
				if strings.Contains(e.Message, "decline") {
					return chat.ElicitResult{Action: chat.ElicitDecline}
				}
				return chat.ElicitResult{Action: chat.ElicitAccept, Content: map[string]any{"name": "Ada", "subscribe": true}}
			}}
			model := &scriptedModel{}
			s := h.session("")
			s.SetElicitor(user)
			s.SetSampler(model)
			elicit := h.tool("ask", fakemcp.ToolElicit)

			res := h.call(s, elicit, `{"message":"Who are you?"}`)
			if want := `accept {"age":30,"name":"Ada","subscribe":true}`; res.IsError || res.Text() != want {
				t.Errorf("elicit: %q (error %v), want %q", res.Text(), res.IsError, want)
			}
			e := user.last()
			if e.Server != "ask" || e.Mode != chat.ElicitForm || e.Message != "Who are you?" || len(e.Form.Fields) != 4 {
				t.Fatalf("asked %+v", e)
			}
			// (mcp-go's server re-encodes the form of a server request: the
			// order of its fields is not the fake's.)
			fields := map[string]chat.ElicitField{}
			for _, f := range e.Form.Fields {
				fields[f.Name] = f
			}
			if f := fields; !f["name"].Required || f["name"].Title != "Your name" || f["age"].Default != int64(30) ||
				f["subscribe"].Kind != chat.FieldBoolean || f["color"].Kind != chat.FieldChoice ||
				f["color"].Options[1] != (chat.ElicitOption{Value: "green", Label: "Green"}) {
				t.Errorf("form fields %+v", f)
			}

			if res := h.call(s, elicit, `{"message":"decline this"}`); res.Text() != "decline" {
				t.Errorf("declined: %q", res.Text())
			}
			if res := h.call(s, h.tool("ask", fakemcp.ToolElicitURL), `{"url":"https://example.com/login"}`); res.Text() != "accept {}" && res.Text() != "accept null" {
				t.Errorf("url mode: %q", res.Text())
			} else if e := user.last(); e.Mode != chat.ElicitURL || e.URL != "https://example.com/login" || e.ID != "e-1" {
				t.Errorf("url mode asked %+v", e)
			}

			nested := `{"schema":{"type":"object","properties":{"address":{"type":"object","properties":{"city":{"type":"string"}}}}}}`
			if res := h.call(s, elicit, nested); !res.IsError || !strings.Contains(res.Text(), `property "address": a nested object`) {
				t.Errorf("nested form: %q (error %v)", res.Text(), res.IsError)
			}

			// Sampling: refused without "sampling": true, answered by the
			// Sampler with it.
			if res := h.call(s, h.tool("ask", fakemcp.ToolSample), `{"prompt":"the answer?"}`); !res.IsError {
				t.Errorf("sampling without the entry's consent: %q", res.Text())
			}
			if res := h.call(s, h.tool("asks", fakemcp.ToolSample), `{"prompt":"the answer?"}`); res.IsError || res.Text() != "model bot-model: forty-two" {
				t.Errorf("sampling: %q (error %v)", res.Text(), res.IsError)
			}
			model.mu.Lock()
			if len(model.seen) != 1 || model.seen[0].Server != "asks" || model.seen[0].SystemPrompt != "Answer briefly." ||
				model.seen[0].Messages[0].Content[0].Text != "the answer?" {
				t.Errorf("the model saw %+v", model.seen)
			}
			model.mu.Unlock()

			// roots: a command's is its chat's workspace; a url declares
			// none unless its entry says so.
			rootsRes := h.call(s, h.tool("ask", fakemcp.ToolRoots), `{}`)
			if strings.HasPrefix(name, "stdio") {
				if want := "roots: file://" + s.Workspace(); rootsRes.Text() != want {
					t.Errorf("roots: %q, want %q", rootsRes.Text(), want)
				}
			} else if !rootsRes.IsError {
				t.Errorf("roots of a url server: %q", rootsRes.Text())
			}

			// A session nobody answers for declares no elicitation.
			bare := h.session("")
			if res := h.call(bare, elicit, `{}`); !res.IsError {
				t.Errorf("elicitation with no Elicitor: %q", res.Text())
			}
		})
	}
}

// A command's roots/list is answered with the chat's workspace, whenever
// the server asks: here right after the handshake, outside any call (as
// server-filesystem does), which the idle reader of the stdio transport
// reads. "roots": false declares none: the server is told it cannot ask.
func TestRootsAskedOutsideACall(t *testing.T) {
	for _, roots := range []bool{true, false} {
		t.Run(fmt.Sprint("roots ", roots), func(t *testing.T) {
			cfg, log := fakeServer(t, "fs", fakemcp.ModeRootsOnInit)
			cfg.Roots = roots
			h := newHarness(t, nil, cfg)
			ws := t.TempDir()
			s := h.session(ws)
			s.Prewarm("fs") // started, and no call follows
			ev := fakemcp.WaitForEvents(t, log, fakemcp.EventRoots, 1, 10*time.Second)[0]
			want := "file://" + ws
			if !roots {
				want = "error: "
			}
			if !strings.HasPrefix(ev.Reason, want) || (roots && ev.Reason != want) {
				t.Errorf("the server got %q, want %q", ev.Reason, want)
			}
		})
	}
}
