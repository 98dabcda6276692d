package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// approvals records the approval requests and answers them from a script.
type approvals struct {
	mu       sync.Mutex
	requests []ApprovalRequest
	decide   func(req ApprovalRequest) (Approval, error)
}

func (a *approvals) approve(_ context.Context, req ApprovalRequest) (Approval, error) {
	a.mu.Lock()
	a.requests = append(a.requests, req)
	a.mu.Unlock()
	return a.decide(req)
}

func (a *approvals) all() []ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ApprovalRequest(nil), a.requests...)
}

// callThenReport calls tool with args, then answers with what the call
// returned.
func callThenReport(tool, args string) func(context.Context, llm.Request) (llm.Response, error) {
	return func(_ context.Context, req llm.Request) (llm.Response, error) {
		if res := llmtest.LastToolResults(req); len(res) > 0 {
			return llm.Response{Text: "result: " + llmtest.ResultText(res[0])}, nil
		}
		return toolCall("c1", tool, args), nil
	}
}

func TestApprovals(t *testing.T) {
	const sleepArgs = `{"ms":1,"token":"sk-approval-secret-42"}`
	approve := func(ApprovalRequest) (Approval, error) { return Approved, nil }
	tests := []struct {
		name     string
		approval mcpconfig.Approval
		auto     []string
		always   []string
		noAsker  bool
		tool     string
		decide   func(ApprovalRequest) (Approval, error)
		asked    bool
		offer    bool // OfferAlways
		result   string
	}{
		{name: "never asks by default", tool: "sleep", result: "result: slept 1 ms"},
		{name: "writes: read-only runs", approval: mcpconfig.ApprovalWrites, tool: "echo", result: "result: "},
		{name: "writes: approved", approval: mcpconfig.ApprovalWrites, tool: "sleep", decide: approve, asked: true, offer: true,
			result: "result: slept 1 ms"},
		{name: "denied", approval: mcpconfig.ApprovalWrites, tool: "sleep", asked: true, offer: true,
			decide: func(ApprovalRequest) (Approval, error) { return Denied, nil }, result: "result: The user denied this call."},
		{name: "no answer in time", approval: mcpconfig.ApprovalAlways, tool: "echo", asked: true, offer: true,
			decide: func(ApprovalRequest) (Approval, error) { return Denied, fmt.Errorf("%w within 5m", ErrNoApproval) },
			result: "result: The user denied this call: nobody approved it within 7 seconds."},
		{name: "could not ask", approval: mcpconfig.ApprovalAlways, tool: "echo", asked: true, offer: true,
			decide: func(ApprovalRequest) (Approval, error) { return Denied, fmt.Errorf("sendMessage: 403 Forbidden") },
			result: "result: " + cannotAskResult},
		{name: "a chat that cannot ask runs nothing", approval: mcpconfig.ApprovalWrites, tool: "sleep", noAsker: true,
			result: "result: " + cannotAskResult},
		{name: "autoApprove", approval: mcpconfig.ApprovalAlways, auto: []string{"sl*"}, tool: "sleep", result: "result: slept 1 ms"},
		{name: "alwaysAsk wins, without always", auto: []string{"*"}, always: []string{"sleep"}, tool: "sleep", decide: approve,
			asked: true, result: "result: slept 1 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &approvals{decide: tt.decide}
			o := envOptions{approvalTimeout: 7 * time.Second, secrets: []string{"sk-approval-secret-42"},
				server: func(c *mcpconfig.ServerConfig) {
					c.Approval, c.AutoApprove, c.AlwaysAsk = tt.approval, tt.auto, tt.always
				}}
			if !tt.noAsker {
				o.approve = a.approve
			}
			args := sleepArgs
			if tt.tool == "echo" {
				args = `{"text":""}`
			}
			e := newEnv(t, callThenReport(tt.tool, args), o)
			if err := e.manager.Deliver(chat.In(7), Message{Text: "go", From: 4242}); err != nil {
				t.Fatal(err)
			}
			if got := e.chat.waitTexts(t, chat.In(7), 1); got[0] != tt.result {
				t.Errorf("answer %q, want %q", got[0], tt.result)
			}
			reqs := a.all()
			if (len(reqs) > 0) != tt.asked {
				t.Fatalf("asked %d times, want asked=%v", len(reqs), tt.asked)
			}
			if !tt.asked {
				return
			}
			r := reqs[0]
			if r.UserID != 4242 || r.Server != "fake" || r.Tool != tt.tool || r.OfferAlways != tt.offer || r.Timeout != 7*time.Second {
				t.Errorf("request %+v", r)
			}
			if tt.tool == "sleep" && (strings.Contains(string(r.Arguments), "sk-approval") || !strings.Contains(string(r.Arguments), `"ms":1`)) {
				t.Errorf("arguments %s: want them, redacted", r.Arguments)
			}
		})
	}
}

// "Always in this chat" holds for the tool in that chat, across restarts,
// and nowhere else.
func TestApprovedAlways(t *testing.T) {
	dir := t.TempDir()
	a := &approvals{decide: func(ApprovalRequest) (Approval, error) { return ApprovedAlways, nil }}
	o := envOptions{dataDir: dir, approve: a.approve,
		server: func(c *mcpconfig.ServerConfig) { c.Approval = mcpconfig.ApprovalWrites }}
	e := newEnv(t, callThenReport("sleep", `{"ms":1}`), o)
	e.deliver(chat.In(7), "first")
	e.chat.waitTexts(t, chat.In(7), 1)
	e.deliver(chat.In(7), "second")
	if got := e.chat.waitTexts(t, chat.In(7), 2); got[1] != "result: slept 1 ms" {
		t.Errorf("second answer %q", got[1])
	}
	if n := len(a.all()); n != 1 {
		t.Fatalf("asked %d times, want once", n)
	}
	// Kept in the data directory, out of reach of the chat's own servers,
	// which may write to its workspace.
	if fi, err := os.Stat(filepath.Join(dir, "approvals", "7.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the grants' file: %v, %v", fi, err)
	}
	e.close()

	e = newEnv(t, callThenReport("sleep", `{"ms":1}`), o)
	e.deliver(chat.In(7), "after a restart")
	e.chat.waitTexts(t, chat.In(7), 1)
	e.deliver(chat.In(8), "another chat")
	e.chat.waitTexts(t, chat.In(8), 1)
	if n := len(a.all()); n != 2 {
		t.Errorf("asked %d times in all, want once more: for the other chat only", n)
	}
}

// /stop while a call waits for approval ends the turn; the call is not
// run.
func TestStopDeniesAWaitingApproval(t *testing.T) {
	asked := make(chan struct{})
	o := envOptions{approve: func(ctx context.Context, _ ApprovalRequest) (Approval, error) {
		close(asked)
		<-ctx.Done()
		return Denied, ctx.Err()
	}, server: func(c *mcpconfig.ServerConfig) { c.Approval = mcpconfig.ApprovalAlways }}
	e := newEnv(t, callThenReport("sleep", `{"ms":1}`), o)
	e.deliver(chat.In(7), "go")
	<-asked
	if !e.manager.Stop(chat.In(7)) {
		t.Fatal("Stop found no turn")
	}
	if got := e.chat.waitTexts(t, chat.In(7), 1); got[0] != "Stopped." {
		t.Errorf("texts %q", got)
	}
	for _, req := range e.model.Requests() {
		for _, r := range llmtest.LastToolResults(req) {
			t.Errorf("the model was called again with %q", llmtest.ResultText(r))
		}
	}
}
