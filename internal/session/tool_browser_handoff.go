package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// The built-in browser_handoff tool: the model hands the chat's browser
// tab to its human (a CAPTCHA, a login, a 2FA code). The chat gets a
// message with the reason and a button that opens a live view of the tab
// (Options.Handoffs, the live view the wiring builds); the turn waits, as
// for an approval, until the user presses Done (in the view or in the
// chat), /stop, or the timeout. What the user types goes from the view to
// the browser only: never through the session, so never to the model, the
// transcript or the log.

// BrowserHandoffToolName is the built-in's name; MCP tools may not take it.
const BrowserHandoffToolName = "browser_handoff"

// maxHandoffReason bounds the reason shown to the user.
const maxHandoffReason = 500

const browserHandoffDescription = "Hand the browser's current tab to the user for what you cannot or must not do " +
	"(a CAPTCHA, a login, a 2FA code, a payment to confirm): they get a live view of it in the chat. Waits until they " +
	"are done; then take a snapshot to see the page as they left it."

var browserHandoffSchema = json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string","description":"what the user should do, shown to them"}},"required":["reason"]}`)

// Handoffs starts live views of a chat's browser tab (the wiring's, over
// internal/liveview). Nil in Options: browser_handoff is not offered (no
// browser preset, or no public address).
type Handoffs interface {
	// Begin starts a hand-off of req.Place's current tab, reached
	// through req.MCP (the chat's own MCP session) when the link is
	// opened.
	Begin(ctx context.Context, req HandoffRequest) (LiveHandoff, error)
}

// HandoffRequest is one hand-off asked for by a turn.
type HandoffRequest struct {
	Place chat.Place
	// UserID started the turn: who may open the view (in a group, an
	// admin too). The link always opens as a Telegram Mini App in a
	// private chat — a group's goes to the user's private chat with the
	// bot —, whose initData must name UserID (or in a group an admin).
	UserID int64
	// Timeout ends the hand-off with HandoffTimeout.
	Timeout time.Duration
	MCP     MCPSession
}

// LiveHandoff is a running hand-off.
type LiveHandoff interface {
	// URL is the link that opens the view once; Relink voids it (and a
	// page it opened) and gives a new one ("" once ended).
	URL() string
	Relink() string
	// End ends it with o (a no-op once ended); Done is closed once it
	// ended, and Outcome then says how.
	End(o HandoffOutcome)
	Done() <-chan struct{}
	Outcome() HandoffOutcome
}

// HandoffOutcome is how a hand-off ended.
type HandoffOutcome int

const (
	HandoffDone HandoffOutcome = iota + 1
	HandoffStopped
	HandoffTimeout
)

// HandoffChat is a Chat that can show a hand-off (the bot): the reason, the
// button that opens the view, a Done button and one for a new link. It
// returns once the hand-off ended (it ends it on ctx's end, with
// HandoffStopped, and at p.Timeout) and says how.
type HandoffChat interface {
	ShowHandoff(ctx context.Context, place chat.Place, p HandoffPrompt) (HandoffOutcome, error)
}

// HandoffPrompt is what the chat shows of a hand-off.
type HandoffPrompt struct {
	// UserID started the turn: in a group the link goes to their private
	// chat with the bot.
	UserID  int64
	Reason  string
	Timeout time.Duration
	Live    LiveHandoff
}

type browserHandoffArgs struct {
	Reason string `json:"reason"`
}

func browserHandoffArguments(raw json.RawMessage) (browserHandoffArgs, string) {
	obj, problem := callArguments(BrowserHandoffToolName, raw)
	if problem != "" {
		return browserHandoffArgs{}, problem
	}
	var a browserHandoffArgs
	bad := func(why string) (browserHandoffArgs, string) {
		return browserHandoffArgs{}, fmt.Sprintf("invalid arguments for %s: %s — send {\"reason\": \"what the user should do\"}", BrowserHandoffToolName, why)
	}
	if err := json.Unmarshal(obj, &a); err != nil {
		return bad("reason must be a string")
	}
	a.Reason = strings.TrimSpace(a.Reason)
	switch {
	case a.Reason == "":
		return bad("reason is empty")
	case utf8.RuneCountInString(a.Reason) > maxHandoffReason:
		return bad(fmt.Sprintf("reason is over %d characters", maxHandoffReason))
	}
	return a, ""
}

// browserHandoffTool is browser_handoff: one hand-off at a time.
type browserHandoffTool struct{ s *session }

func (browserHandoffTool) Spec() chat.Spec {
	return chat.Spec{Name: BrowserHandoffToolName, Description: browserHandoffDescription, Schema: browserHandoffSchema}
}

func (browserHandoffTool) Lane() string { return BrowserHandoffToolName }

// Deferred: the tool is loaded through tool_search, not in every request.
func (browserHandoffTool) Deferred() bool { return true }

func (browserHandoffTool) Check(args json.RawMessage) (json.RawMessage, error) {
	return checkWith(args, browserHandoffArguments)
}

func (t browserHandoffTool) Call(ctx context.Context, args json.RawMessage) (chat.Result, error) {
	return callWith(args, browserHandoffArguments, func(a browserHandoffArgs) (string, error) { return t.s.handOff(ctx, a) }), nil
}

// handoffOffered reports whether browser_handoff is among the chats'
// tools: with a live view, in chats that can show it.
func (m *Manager) handoffOffered() bool {
	_, ok := m.o.Chat.(HandoffChat)
	return m.o.Handoffs != nil && ok
}

// handOff hands the tab over and says how it ended.
func (s *session) handOff(ctx context.Context, a browserHandoffArgs) (string, error) {
	shower, ok := s.m.o.Chat.(HandoffChat)
	if !ok || s.m.o.Handoffs == nil {
		return "", errors.New("this chat cannot show a live view of the browser")
	}
	ms, err := s.mcpSession()
	if err != nil {
		return "", err
	}
	_, user, _ := s.currentTurn()
	req := HandoffRequest{Place: s.id, UserID: user, Timeout: s.m.o.HandoffTimeout, MCP: ms}
	if req.Timeout <= 0 {
		req.Timeout = DefaultHandoffTimeout
	}
	live, err := s.m.o.Handoffs.Begin(ctx, req)
	if err != nil {
		s.m.logger.Warn("browser_handoff: not begun", "chat", s.id, "err", err)
		return "", errors.New("the live view could not be started (too many at once, or the browser is not reachable); try again later, or ask the user in your answer")
	}
	defer live.End(HandoffStopped) // a no-op once it ended
	prompt := HandoffPrompt{UserID: user, Reason: s.m.o.Redactor.Redact(a.Reason), Timeout: req.Timeout, Live: live}
	o, err := shower.ShowHandoff(ctx, s.id, prompt)
	if err != nil && ctx.Err() == nil {
		s.m.logger.Warn("browser_handoff: not shown", "chat", s.id, "err", err)
		return "", errors.New("the live view could not be shown in the chat; ask the user in your answer instead")
	}
	return handoffResult(o, req.Timeout)
}

// DefaultHandoffTimeout is how long a hand-off waits for Done when
// Options.HandoffTimeout is zero (HANDOFF_TIMEOUT_SECONDS' default).
const DefaultHandoffTimeout = 10 * time.Minute

// handoffResult is the tool's result for how the hand-off ended.
func handoffResult(o HandoffOutcome, timeout time.Duration) (string, error) {
	const look = "take a snapshot before you go on: the page is as they left it"
	switch o {
	case HandoffDone:
		return "The user finished in the browser and pressed Done. Take a snapshot before you go on: the page is as they left it.", nil
	case HandoffTimeout:
		return "", fmt.Errorf("the user did not press Done within %s; the page may have changed: %s", DurationText(timeout), look)
	}
	return "", errors.New("the hand-off was stopped (the user stopped the turn, or the bot is stopping); " + look)
}
