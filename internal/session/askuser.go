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

// The built-in ask_user tool: the model asks the chat a question with 2–8
// answers as buttons (and, when it allows, a typed answer); the press or
// the text is the tool's result. The chat port asks (UserAsker: the bot,
// with the same rules and code as approvals and forms — in a group only
// the turn's user or an admin answers); /stop, /new and the approval
// timeout end it with a result that says so.

// AskUserToolName is the built-in ask_user tool's name; MCP tools may not
// take it.
const AskUserToolName = "ask_user"

// Bounds of a question (a button's label fits Telegram's row).
const (
	minAskOptions   = 2
	maxAskOptions   = 8
	maxOptionChars  = 64
	maxQuestionChar = 1000
)

const askUserDescription = "Ask the user to pick one of 2–8 short answers (buttons; allow_text: or write one)."

var askUserSchema = json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"},"options":{"type":"array","items":{"type":"string"}},"allow_text":{"type":"boolean"}},"required":["question","options"]}`)

// UserAsker is a Chat that can put the model's questions to its users
// (ask_user). A chat without it answers the tool that it cannot ask.
type UserAsker interface {
	// AskUser asks chat q and returns the answer: ErrNoUserAnswer
	// (wrapped) when nobody answered within q.Timeout, ctx's error when
	// the turn ended, another error when it could not be asked.
	AskUser(ctx context.Context, place chat.Place, q UserQuestion) (UserAnswer, error)
}

// UserQuestion is the model's question to the chat.
type UserQuestion struct {
	// UserID sent the message that started the turn: in a group, the one
	// (with the admins) who may answer.
	UserID    int64
	Question  string
	Options   []string
	AllowText bool
	Timeout   time.Duration
}

// UserAnswer is how the chat answered: Choice, one of the options, or
// Text typed (AllowText); By names who.
type UserAnswer struct {
	Choice, Text, By string
}

// ErrNoUserAnswer is a question nobody answered in time.
var ErrNoUserAnswer = errors.New("no answer")

type askUserArgs struct {
	Question  string   `json:"question"`
	Options   []string `json:"options"`
	AllowText bool     `json:"allow_text"`
}

// askUserArguments decodes ask_user's arguments, or returns the error
// text for the model.
func askUserArguments(raw json.RawMessage) (askUserArgs, string) {
	obj, problem := callArguments(AskUserToolName, raw)
	if problem != "" {
		return askUserArgs{}, problem
	}
	bad := func(why string) (askUserArgs, string) {
		return askUserArgs{}, fmt.Sprintf("invalid arguments for %s: %s — send {\"question\": \"…\", \"options\": [\"…\", \"…\"], \"allow_text\": false}", AskUserToolName, why)
	}
	var a askUserArgs
	if err := json.Unmarshal(obj, &a); err != nil {
		return bad("question must be a string, options a list of strings, allow_text true or false")
	}
	a.Question = strings.TrimSpace(a.Question)
	switch n := len(a.Options); {
	case a.Question == "":
		return bad("question is empty")
	case utf8.RuneCountInString(a.Question) > maxQuestionChar:
		return bad(fmt.Sprintf("question is over %d characters", maxQuestionChar))
	case n < minAskOptions || n > maxAskOptions:
		return bad(fmt.Sprintf("options must hold %d to %d answers (got %d)", minAskOptions, maxAskOptions, n))
	}
	seen := map[string]bool{}
	for i, o := range a.Options {
		o = strings.Join(strings.Fields(o), " ")
		switch {
		case o == "":
			return bad(fmt.Sprintf("option %d is empty", i+1))
		case utf8.RuneCountInString(o) > maxOptionChars:
			return bad(fmt.Sprintf("option %d is over %d characters", i+1, maxOptionChars))
		case seen[strings.ToLower(o)]:
			return bad(fmt.Sprintf("option %d is given twice", i+1))
		}
		seen[strings.ToLower(o)] = true
		a.Options[i] = o
	}
	return a, ""
}

// askUserTool is ask_user: its calls keep their order (one question at a
// time).
type askUserTool struct{ s *session }

func (askUserTool) Spec() chat.Spec {
	return chat.Spec{Name: AskUserToolName, Description: askUserDescription, Schema: askUserSchema}
}

func (askUserTool) Lane() string { return AskUserToolName }

func (askUserTool) Check(args json.RawMessage) (json.RawMessage, error) {
	return checkWith(args, askUserArguments)
}

func (t askUserTool) Call(ctx context.Context, args json.RawMessage) (chat.Result, error) {
	return callWith(args, askUserArguments, func(a askUserArgs) (string, error) { return t.s.askUser(ctx, a) }), nil
}

// askUser puts a to the chat and says how it was answered.
func (s *session) askUser(ctx context.Context, a askUserArgs) (string, error) {
	asker, ok := s.m.o.Chat.(UserAsker)
	if !ok {
		return "", errors.New("this chat cannot show questions with buttons: ask in your answer instead")
	}
	_, user, _ := s.currentTurn()
	q := UserQuestion{UserID: user, Question: s.m.o.Redactor.Redact(a.Question), Options: a.Options,
		AllowText: a.AllowText, Timeout: s.m.o.ApprovalTimeout}
	ans, err := asker.AskUser(ctx, s.id, q)
	switch {
	case err == nil && ans.Text != "":
		return fmt.Sprintf("%s answered in their own words: %q", ans.By, ans.Text), nil
	case err == nil:
		return fmt.Sprintf("%s chose %q.", ans.By, ans.Choice), nil
	case errors.Is(err, ErrNoUserAnswer):
		return "", fmt.Errorf("nobody answered within %s; go on without the answer, or ask in your reply", DurationText(q.Timeout))
	case ctx.Err() != nil:
		return "", errors.New("the question was cancelled: the user stopped the turn or started a new conversation")
	}
	s.m.logger.Warn("ask_user: the question was not asked", "chat", s.id, "err", err)
	return "", errors.New("the question could not be shown in the chat; ask in your answer instead")
}
