package bot

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
	"github.com/volcanicbot/volcanicbot/internal/telegram/tgformat"
)

// Question is what Ask puts to a chat: a message with inline buttons, of
// which one press is the answer.
type Question struct {
	// Text is the message: plain text, or Telegram HTML when HTML is set.
	// It must fit one message (tgformat.MaxMessageUTF16 after markup):
	// send what is longer as a document first.
	Text string
	HTML bool
	// Buttons are the choices, row by row; at least one. A button's
	// Choice is what Ask returns when it is pressed.
	Buttons [][]Button
	// MayAnswer, when set, says whether a user of the bot may press
	// (strangers never may); one it refuses gets Refusal as an alert.
	MayAnswer func(userID int64) bool
	// Refusal is the alert for a press MayAnswer refuses;
	// DefaultRefusal when empty.
	Refusal string
	// Timeout ends the wait with ErrNoAnswer; 0: until ctx ends.
	Timeout time.Duration
	// Outcome is the line that replaces the buttons once the question is
	// over (plain text): given the answer, or the error Ask returns.
	// DefaultOutcome when nil.
	Outcome func(a Answer, err error) string
	// Private: the answer is the user's business (a server's form), and
	// the log of a press leaves out which button it was.
	Private bool
	// Ends, when it closes, ends the question as a press would, with the
	// answer Answer{Choice: ChoiceEnded}: the other side settled it (a
	// server saying the page's work is done). nil: never.
	Ends <-chan struct{}
}

// ChoiceEnded is the answer's Choice when Question.Ends closed.
const ChoiceEnded = "ended\x00" // no button's: a NUL is never in callback data

// Button is one choice of a Question.
type Button struct {
	Label  string
	Choice string
	// URL makes it a link, not a choice: it opens URL (as a Telegram Mini
	// App when WebApp, which Telegram allows in private chats only).
	URL    string
	WebApp bool
}

// Answer is the press that answered a Question.
type Answer struct {
	Choice string // the Button's Choice
	Label  string // the Button's Label
	UserID int64  // who pressed
	Name   string // their first name, or @username
}

// ErrNoAnswer is what Ask returns when nobody answered within the
// question's Timeout: treat it as a refusal or a cancel.
var ErrNoAnswer = errors.New("no answer in time")

// DefaultRefusal is the alert for a press by a user the question is not
// for.
const DefaultRefusal = "This question is not yours to answer."

// Texts of the answers to presses.
const (
	expiredPress  = "This button has expired."
	strangerPress = "Sorry, you are not allowed to use this bot."
	busyPress     = "One moment, please."
)

// keptPresses is how many presses of a kept question may wait to be
// taken.
const keptPresses = 4

// DefaultOutcome is the line a question ends with: who chose what, that
// nobody answered in time, or that it was cancelled.
func DefaultOutcome(a Answer, err error) string {
	switch {
	case err == nil:
		return fmt.Sprintf("→ %s (%s)", a.Label, a.Name)
	case errors.Is(err, ErrNoAnswer):
		return "→ No answer in time."
	default:
		return "→ Cancelled."
	}
}

// Ask sends q to chat and waits for a press of one of its buttons by a
// user allowed to answer. It returns the answer; ErrNoAnswer after
// q.Timeout; ctx's error when ctx ends first (/stop, the turn ended); or
// the error that kept the question from being sent. Either way, once it
// returns, the message is being edited to show q.Outcome in place of the
// buttons (queued behind the chat's pace, not waited for), and a
// later press of them is answered "This button has expired." and changes
// nothing — as is a press of a button of a bot restarted since, one in
// another chat, or one with data the bot never made.
//
// Ask is safe for concurrent use: a chat may have several questions open.
func (c *Chat) Ask(ctx context.Context, place chat.Place, q Question) (Answer, error) {
	if err := q.check(); err != nil {
		return Answer{}, err
	}
	ps, err := c.pose(ctx, place, q, false)
	if err != nil {
		return Answer{}, err
	}
	p := ps.p
	defer c.asks.close(p)

	var timeout <-chan time.Time
	if q.Timeout > 0 {
		t := time.NewTimer(q.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var a Answer
	select {
	case a = <-p.answer:
	case <-q.Ends:
		a = Answer{Choice: ChoiceEnded}
	case <-timeout:
		err = ErrNoAnswer
	case <-ctx.Done():
		err = ctx.Err()
	}
	if late, ok := c.asks.close(p); ok && errors.Is(err, ErrNoAnswer) {
		a, err = late, nil // pressed as the time ran out
	}

	outcome := DefaultOutcome
	if q.Outcome != nil {
		outcome = q.Outcome
	}
	c.closeWith(ctx, ps, outcome(a, err))
	return a, err
}

// posed is a question sent, whose buttons are open.
type posed struct {
	p     *openQuestion
	place chat.Place
	msgID int
	text  string
	mode  models.ParseMode
}

// pose opens q and sends it. keep: a press does not close the question
// (each press is an answer on p.answer; see questions.press); the caller
// closes it.
func (c *Chat) pose(ctx context.Context, place chat.Place, q Question, keep bool) (*posed, error) {
	p := c.asks.open(place, q, keep)
	mode := models.ParseMode("")
	if q.HTML {
		mode = models.ParseModeHTML
	}
	// The question is dropped if ctx ends while it waits for the chat's
	// pace, but once on its way the send is not cut short, and its outcome
	// is waited for: a message Telegram shows but the bot never saw sent
	// could not be closed (a shutdown left its buttons live). Ask closes
	// it at once if ctx has ended meanwhile.
	var m *models.Message
	err := <-c.tg.Submit(ctx, place.Chat, "sendMessage", telegram.Paced, "", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.doneTimeout)
		defer cancel()
		sent, err := c.tg.API().SendMessage(ctx, &tgbot.SendMessageParams{
			ChatID: place.Chat, MessageThreadID: place.Topic, Text: q.Text, ParseMode: mode, LinkPreviewOptions: noPreview,
			ReplyMarkup: p.keyboard(q.Buttons),
		})
		m = sent
		return err
	})
	if err != nil {
		c.asks.close(p)
		level := slog.LevelError
		if unreachable(err) { // the user's business (a private chat never started, or blocked)
			level = slog.LevelWarn
		}
		c.log.Log(ctx, level, "question not delivered", "chat", place, "err", err.Error())
		return nil, err
	}
	c.asks.sent(p, m.ID)
	return &posed{p: p, place: place, msgID: m.ID, text: q.Text, mode: mode}, nil
}

// closeWith edits a posed question to show line (plain text) in place of
// its buttons. The question should be closed (questions.close) first.
func (c *Chat) closeWith(ctx context.Context, ps *posed, line string) {
	text := ps.text + "\n\n" + line
	if ps.mode == models.ParseModeHTML {
		text = ps.text + "\n\n<i>" + html.EscapeString(line) + "</i>"
	}
	place, msgID, mode := ps.place, ps.msgID, ps.mode
	// The turn may be over (that is why Ask returns): the buttons go
	// anyway. The edit is queued on the chat's sender, not waited for: the
	// chat's pace may hold it for a second, and what was decided goes on
	// meanwhile (what the chat is sent next comes after it).
	c.tg.Submit(context.WithoutCancel(ctx), place.Chat, "editMessageText", telegram.Paced, "", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, c.doneTimeout)
		defer cancel()
		_, err := c.tg.API().EditMessageText(ctx, &tgbot.EditMessageTextParams{
			ChatID: place.Chat, MessageID: msgID, Text: text, ParseMode: mode, LinkPreviewOptions: noPreview,
		})
		if err != nil {
			c.log.Warn("question not closed", "chat", place, "err", c.scrub(err.Error()))
		}
		return err
	})
}

func (q Question) check() error {
	if strings.TrimSpace(q.Text) == "" {
		return errors.New("ask: the question has no text")
	}
	n := 0
	for _, row := range q.Buttons {
		for _, b := range row {
			if strings.TrimSpace(b.Label) == "" {
				return errors.New("ask: a button has no label")
			}
			n++
		}
	}
	if n == 0 {
		return errors.New("ask: the question has no buttons")
	}
	if n > maxButtons {
		return fmt.Errorf("ask: %d buttons, at most %d", n, maxButtons)
	}
	plain := q.Text
	if q.HTML {
		plain = htmlText(q.Text)
	}
	if tgformat.UTF16Len(plain) > tgformat.MaxMessageUTF16-maxOutcome {
		return errors.New("ask: the question is too long for one message")
	}
	return nil
}

// htmlText is s, Telegram HTML, without its tags and with its entities
// decoded: what Telegram counts.
func htmlText(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return html.UnescapeString(b.String())
}

// readyWait bounds how long a press waits for its question's message id.
const readyWait = 10 * time.Second

// Limits of a question: Telegram takes 100 buttons; the outcome line is
// kept room for.
const (
	maxButtons = 100
	maxOutcome = 200
)

// questions are the open questions of every chat, by id. A button's
// callback data names its question and its place: "q:<id>:<n>", the id
// 128 random bits, so a press cannot be forged for a question nobody was
// shown.
type questions struct {
	mu   sync.Mutex
	byID map[string]*openQuestion
}

type openQuestion struct {
	id      string
	place   chat.Place
	msgID   int // 0 until the message is sent
	buttons []Button
	may     func(int64) bool
	refusal string
	answer  chan Answer // gets the one answer (keep: each press)
	// keep: a press answers without closing the question (a form's
	// toggles); presses beyond answer's room are told to wait.
	keep    bool
	private bool          // Question.Private
	ready   chan struct{} // closed once msgID is known, or the question is over
}

func newQuestions() *questions { return &questions{byID: map[string]*openQuestion{}} }

func (qs *questions) open(place chat.Place, q Question, keep bool) *openQuestion {
	p := &openQuestion{id: rand.Text(), place: place, may: q.MayAnswer, refusal: q.Refusal, keep: keep, private: q.Private,
		answer: make(chan Answer, keptPresses), ready: make(chan struct{})}
	if p.refusal == "" {
		p.refusal = DefaultRefusal
	}
	for _, row := range q.Buttons {
		p.buttons = append(p.buttons, row...)
	}
	qs.mu.Lock()
	qs.byID[p.id] = p
	qs.mu.Unlock()
	return p
}

// keyboard is the question's inline keyboard, q's rows with their data.
func (p *openQuestion) keyboard(rows [][]Button) *models.InlineKeyboardMarkup {
	kb := &models.InlineKeyboardMarkup{}
	n := 0
	for _, row := range rows {
		var out []models.InlineKeyboardButton
		for _, b := range row {
			switch {
			case b.URL != "" && b.WebApp:
				out = append(out, models.InlineKeyboardButton{Text: b.Label, WebApp: &models.WebAppInfo{URL: b.URL}})
			case b.URL != "":
				out = append(out, models.InlineKeyboardButton{Text: b.Label, URL: b.URL})
			default:
				out = append(out, models.InlineKeyboardButton{Text: b.Label, CallbackData: "q:" + p.id + ":" + strconv.Itoa(n)})
			}
			n++
		}
		kb.InlineKeyboard = append(kb.InlineKeyboard, out)
	}
	return kb
}

func (qs *questions) sent(p *openQuestion, msgID int) {
	qs.mu.Lock()
	p.msgID = msgID
	p.markReady()
	qs.mu.Unlock()
}

// markReady closes p.ready once; qs.mu is held.
func (p *openQuestion) markReady() {
	select {
	case <-p.ready:
	default:
		close(p.ready)
	}
}

// close ends p: presses of its buttons are expired from now on. It
// returns an answer that arrived and was not taken.
func (qs *questions) close(p *openQuestion) (Answer, bool) {
	qs.mu.Lock()
	delete(qs.byID, p.id)
	p.markReady()
	qs.mu.Unlock()
	select {
	case a := <-p.answer:
		return a, true
	default:
		return Answer{}, false
	}
}

// press settles a button press: it returns the text to answer it with
// and whether as an alert, and whether the question is private (its
// answer is not logged). allowed is the bot's allowlist. A press that
// answers its question closes it.
func (qs *questions) press(cq *models.CallbackQuery, allowed func(int64) bool) (text string, alert, private bool) {
	rest, ok := strings.CutPrefix(cq.Data, "q:")
	id, num, ok2 := strings.Cut(rest, ":")
	n, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil || strconv.Itoa(n) != num { // the data as made, not "00" or "+0"
		return expiredPress, false, false
	}
	place, msgID := pressedIn(cq)
	qs.mu.Lock()
	defer qs.mu.Unlock()
	p := qs.byID[id]
	if p != nil && p.msgID == 0 {
		// The question's message is out, but Ask has not heard which it
		// is yet: a press that quick waits for it, to be checked against it.
		qs.mu.Unlock()
		select {
		case <-p.ready:
		case <-time.After(readyWait):
		}
		qs.mu.Lock()
		p = qs.byID[id]
	}
	switch {
	case p == nil, p.place.Chat != place.Chat, p.msgID != msgID, n < 0 || n >= len(p.buttons):
		return expiredPress, false, false
	case !allowed(cq.From.ID):
		return strangerPress, true, false
	case p.may != nil && !p.may(cq.From.ID):
		return p.refusal, true, false
	}
	b := p.buttons[n]
	a := Answer{Choice: b.Choice, Label: b.Label, UserID: cq.From.ID, Name: displayName(cq.From)}
	if p.keep {
		select {
		case p.answer <- a:
			return b.Label, false, p.private
		default:
			return busyPress, false, false
		}
	}
	delete(qs.byID, id)
	p.answer <- a
	return b.Label, false, p.private
}

// pressedIn is the place and message of the pressed button: the topic the
// message is in. An inaccessible (old) message tells no topic: its chat.
func pressedIn(cq *models.CallbackQuery) (chat.Place, int) {
	switch m := cq.Message; {
	case m.Message != nil:
		return placeOf(m.Message), m.Message.ID
	case m.InaccessibleMessage != nil:
		return chat.In(m.InaccessibleMessage.Chat.ID), m.InaccessibleMessage.MessageID
	}
	return chat.In(cq.From.ID), 0
}

func displayName(u models.User) string {
	if u.FirstName != "" {
		return u.FirstName
	}
	if u.Username != "" {
		return "@" + u.Username
	}
	return strconv.FormatInt(u.ID, 10)
}

// onCallback answers a button press, from the poller: settling it takes a
// lock, and the answer is queued on the chat's sender without waiting.
// A press of a list's button (/approvals, /model, /memory) is settled
// by onListPress.
func (b *Bot) onCallback(ctx context.Context, cq *models.CallbackQuery) {
	for prefix, settle := range map[string]listPress{revokePrefix: b.revokePressed, modelPrefix: b.modelPressed, memoryPrefix: b.memoryPressed, jobPrefix: b.jobsPressed} {
		if strings.HasPrefix(cq.Data, prefix) {
			b.onListPress(cq, settle)
			return
		}
	}
	text, alert, private := b.chat.asks.press(cq, b.access.allows)
	place, _ := pressedIn(cq)
	if private {
		b.log.Debug("button pressed", "chat", place, "user", cq.From.ID)
	} else {
		b.log.Debug("button pressed", "chat", place, "user", cq.From.ID, "answer", text)
	}
	b.answerPress(ctx, place, cq.ID, text, alert)
}
