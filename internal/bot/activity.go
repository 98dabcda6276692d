package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// maxProgressLines is how many tool calls the progress message lists (the
// latest ones).
const maxProgressLines = 15

// StartActivity shows that a turn is running: the typing action, renewed
// every ~4 s until the turn ends, and, once a tool is called, one progress
// message listing the calls, edited in place at most once a second and
// deleted by Done. No tool call, no progress message. The activity is a
// session.StreamingActivity: it shows the answer while it is written (see
// stream.go).
func (c *Chat) StartActivity(ctx context.Context, place chat.Place) session.Activity {
	a := &activity{
		c:          c,
		place:      place,
		parent:     ctx,
		wake:       make(chan struct{}, 1),
		streamWake: make(chan struct{}, 1),
		answers:    make(chan *answerReq),
		done:       make(chan struct{}),
		finished:   make(chan struct{}),
	}
	a.ctx, a.cancel = context.WithCancel(ctx)
	go a.loop()
	return a
}

var (
	_ session.StreamingActivity = (*activity)(nil)
	_ session.NoticeActivity    = (*activity)(nil)
)

// activity is one turn's typing and progress message. Its goroutine owns
// the message; ToolCall only appends a line and wakes it.
type activity struct {
	c      *Chat
	place  chat.Place
	parent context.Context
	ctx    context.Context // the turn's, also cancelled by Done
	cancel context.CancelFunc

	mu       sync.Mutex
	lines    []string
	total    int
	ended    bool
	streamed string // the answer so far (Stream)

	wake       chan struct{}
	streamWake chan struct{}
	answers    chan *answerReq
	done       chan struct{}
	once       sync.Once
	finished   chan struct{}
}

// ToolCall adds a line for a tool call; safe for concurrent use.
func (a *activity) ToolCall(name string, args json.RawMessage) {
	a.addLine(toolLine(name, args, a.c.scrub))
}

// Notice adds a line of the turn's own (a summary was made) among the
// tool calls; safe for concurrent use.
func (a *activity) Notice(text string) {
	a.addLine(a.c.scrub(text))
}

// addLine adds line to the progress message and wakes the loop to show it.
func (a *activity) addLine(line string) {
	a.mu.Lock()
	if a.ended {
		a.mu.Unlock()
		return
	}
	a.lines = append(a.lines, line)
	if len(a.lines) > maxProgressLines {
		a.lines = a.lines[len(a.lines)-maxProgressLines:]
	}
	a.total++
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Stream shows text as the answer so far; "" takes it down. Safe for
// concurrent use; it does not wait.
func (a *activity) Stream(text string) {
	a.mu.Lock()
	a.streamed = text
	a.mu.Unlock()
	select {
	case a.streamWake <- struct{}{}:
	default:
	}
}

func (a *activity) streamText() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.streamed
}

// Answer sends the final answer, in place of what was streamed (as
// SendText once the activity is done).
func (a *activity) Answer(ctx context.Context, markdown string) error {
	r := &answerReq{ctx: ctx, markdown: markdown, done: make(chan error, 1)}
	select {
	case a.answers <- r:
	case <-a.finished:
		return a.c.SendText(ctx, a.place, markdown)
	case <-ctx.Done():
		return ctx.Err()
	}
	// The loop has it: its sending ends with ctx, and its error says how
	// much went out (chat.PartlySentError) — wait for it.
	return <-r.done
}

// Done ends the activity: typing stops and the progress message, if any,
// is deleted. It returns when that is done (bounded by doneTimeout).
func (a *activity) Done() {
	a.once.Do(func() {
		a.end()
		close(a.done)
	})
	<-a.finished
}

// isEnded reports whether the turn ended (stopped, answered, done): the
// progress message is then only deleted.
func (a *activity) isEnded() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ended
}

func (a *activity) text() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	if earlier := a.total - len(a.lines); earlier > 0 {
		fmt.Fprintf(&b, "… %d earlier\n", earlier)
	}
	b.WriteString(strings.Join(a.lines, "\n"))
	return b.String()
}

func (a *activity) loop() {
	defer close(a.finished)
	defer a.cancel()
	c := a.c
	typing := time.NewTicker(c.typingEvery)
	defer typing.Stop()
	a.typing()

	p := &progressMsg{a: a}
	var (
		pending  *time.Timer
		flushDue <-chan time.Time
	)
	defer func() {
		if pending != nil {
			pending.Stop()
		}
	}()

	answer := newLive(a)
	defer answer.stop()

	turnDone := a.ctx.Done()
loop:
	for {
		select {
		case <-a.done:
			break loop
		case <-a.streamWake:
			answer.changed()
		case <-answer.due:
			answer.show()
		case err := <-answer.result:
			answer.outcome(err)
		case r := <-a.answers:
			// The answer ends the progress message's life: it is only
			// deleted now. An edit scheduled for it would come after the
			// answer (a wasted paced call, and Done held back by it).
			a.end()
			if pending != nil {
				pending.Stop()
			}
			flushDue = nil
			r.done <- answer.answer(r.ctx, r.markdown)
		case <-turnDone:
			// The turn was stopped: no more typing or edits; the message
			// goes when Done is called.
			typing.Stop()
			turnDone, flushDue = nil, nil
			a.end()
		case <-typing.C:
			a.typing()
		case <-a.wake:
			if a.ctx.Err() != nil || flushDue != nil {
				continue // an edit is already scheduled: it takes this line too
			}
			if wait := c.progressEvery - time.Since(p.last); p.msgID != 0 && wait > 0 {
				pending = time.NewTimer(wait)
				flushDue = pending.C
				continue
			}
			p.flush()
		case <-flushDue:
			flushDue = nil
			p.flush()
		}
	}
	a.cancel()
	answer.finish()
	p.remove()
}

// end marks the progress message's life over: no more sends or edits.
func (a *activity) end() {
	a.mu.Lock()
	a.ended = true
	a.mu.Unlock()
}

// progressMsg is a turn's progress message: sent with the first line,
// edited with newer ones, deleted when the turn ends. Only the activity's
// loop uses it.
type progressMsg struct {
	a     *activity
	msgID int
	shown string
	last  time.Time // of the last send or edit
}

// flush shows the lines as they are now, unless they are shown already
// or the message's life is over.
func (p *progressMsg) flush() {
	a, c := p.a, p.a.c
	text := a.text()
	if text == "" || text == p.shown || a.isEnded() {
		return
	}
	p.last = time.Now()
	if p.msgID == 0 {
		// Neither /stop nor Done may cut the send short: a message
		// sent but not seen to be sent could not be deleted.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(a.parent), c.doneTimeout)
		m, err := c.sendMessage(ctx, a.place, text, "")
		cancel()
		if err != nil {
			c.log.Debug("progress message not sent", "chat", a.place, "err", err.Error())
			return
		}
		p.msgID, p.shown = m.ID, text
		return
	}
	_, err := telegram.Send(a.ctx, c.tg, a.place.Chat, "editMessageText", telegram.Paced, func(ctx context.Context) (*models.Message, error) {
		return c.tg.API().EditMessageText(ctx, &tgbot.EditMessageTextParams{
			ChatID: a.place.Chat, MessageID: p.msgID, Text: text, LinkPreviewOptions: noPreview,
		})
	})
	if err != nil {
		c.log.Debug("progress message not edited", "chat", a.place, "err", err.Error())
		return
	}
	p.shown = text
}

// remove deletes the message, if one was sent; the turn's end may not cut
// that short.
func (p *progressMsg) remove() {
	a, c := p.a, p.a.c
	if p.msgID == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.parent), c.doneTimeout)
	defer cancel()
	if _, err := telegram.Send(ctx, c.tg, a.place.Chat, "deleteMessage", telegram.Unpaced, func(ctx context.Context) (bool, error) {
		return c.tg.API().DeleteMessage(ctx, &tgbot.DeleteMessageParams{ChatID: a.place.Chat, MessageID: p.msgID})
	}); err != nil {
		c.log.Warn("progress message not deleted", "chat", a.place, "err", err.Error())
	}
}

// typing sends the typing action once (no retry: the next tick renews it).
func (a *activity) typing() {
	err := a.c.tg.DoOnce(a.ctx, a.place.Chat, "sendChatAction", telegram.Unpaced, func(ctx context.Context) error {
		_, err := a.c.tg.API().SendChatAction(ctx, &tgbot.SendChatActionParams{ChatID: a.place.Chat, MessageThreadID: a.place.Topic, Action: models.ChatActionTyping})
		return err
	})
	if err != nil && a.ctx.Err() == nil {
		a.c.log.Debug("typing not sent", "chat", a.place, "err", err.Error())
	}
}
