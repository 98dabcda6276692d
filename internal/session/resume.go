package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// A restart cuts off the turn that was running: the bot was killed, or
// shut down, while the model or a tool worked on a message. The chat is
// told so once after the restart, without a model call, so that the user
// does not wait for an answer that will never come. A turn leaves a mark
// (turn, in the chat's private folder) while it runs; Manager.Resume finds
// the marks at start.

// turnMark is the file a running turn leaves in the private folder.
const turnMark = "turn"

// RestartNotice is what a chat whose turn a restart cut off is told.
const RestartNotice = "I was restarted while working on your last message; say \"continue\" to let me go on."

func turnMarkPath(private string) string { return filepath.Join(private, turnMark) }

// undeliveredMark is what the mark holds when the turn's answer is in the
// transcript but the shutdown kept it from the chat; when its first parts
// (messages) reached the chat, a line "sent <n>" follows.
const undeliveredMark = "answer not delivered\n"

// undeliveredText is the mark of an answer of which sent parts reached
// the chat.
func undeliveredText(sent int) string {
	if sent <= 0 {
		return undeliveredMark
	}
	return undeliveredMark + "sent " + strconv.Itoa(sent) + "\n"
}

// parseUndelivered reads a mark: whether it is an undelivered answer's,
// and how many of its parts reached the chat.
func parseUndelivered(mark string) (sent int, ok bool) {
	rest, ok := strings.CutPrefix(mark, undeliveredMark)
	if !ok {
		return 0, false
	}
	if n, found := strings.CutPrefix(rest, "sent "); found {
		sent, _ = strconv.Atoi(strings.TrimSuffix(n, "\n"))
	}
	return max(sent, 0), true
}

// errUndelivered ends a turn whose answer the shutdown kept from the chat.
var errUndelivered = errors.New("the answer was not delivered: the bot is shutting down")

// deliverAnswer sends the turn's answer, streamed or as a message. A
// shutdown does not cut it off: it may take AnswerGrace more (as what was
// streamed of an answer is kept). One the shutdown still kept from the
// chat is errUndelivered (the transcript holds it: the next start sends
// what the chat did not get, chat.SentParts of the error); one Telegram
// refused is logged.
func (s *session) deliverAnswer(streamer StreamingActivity, text string) error {
	ctx, cancel := context.WithCancel(context.WithoutCancel(s.m.ctx))
	defer cancel()
	stop := context.AfterFunc(s.m.ctx, func() {
		t := time.AfterFunc(s.m.o.AnswerGrace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})
	defer stop()
	var err error
	if streamer != nil {
		err = streamer.Answer(ctx, text)
	} else {
		err = s.m.o.Chat.SendText(ctx, s.id, s.m.o.Redactor.Redact(text))
	}
	switch {
	case err == nil:
	case s.m.ctx.Err() != nil:
		return fmt.Errorf("%w: %w", errUndelivered, err)
	default:
		s.m.logger.Warn("send reply", "chat", s.id, "err", err)
	}
	return nil
}

// markUndelivered says in the turn's mark that its answer is still to be
// sent, but for the first sent parts, which reached the chat. The mark's
// content decides, at the next start, whether (and from where) the answer
// is sent: it is replaced whole (store.WriteFile), never left empty or
// short by a crash.
func (s *session) markUndelivered(sent int) {
	if err := store.WriteFile(turnMarkPath(s.private), []byte(undeliveredText(sent)), nil); err != nil {
		s.m.logger.Warn("mark the undelivered answer", "chat", s.id, "err", err)
		return
	}
	s.m.logger.Info("the answer is in the transcript; the chat gets it at the next start", "chat", s.id)
}

// markTurn leaves the mark of a running turn. Losing it (a full disk) only
// loses the notice after a restart.
func (s *session) markTurn() {
	if err := os.WriteFile(turnMarkPath(s.private), nil, 0o600); err != nil {
		s.m.logger.Warn("mark the running turn", "chat", s.id, "err", err)
	}
}

// unmarkTurn removes the mark: the turn ended and the chat was answered.
func (s *session) unmarkTurn() {
	if err := os.Remove(turnMarkPath(s.private)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.m.logger.Warn("unmark the turn", "chat", s.id, "err", err)
	}
}

// resume tells the chat its turn was cut off when its conversation ends
// without an answer, and removes the mark. The notice goes into the
// transcript too: the model sees what the user was told, and the
// conversation ends with an answer, so the chat is told only once.
func (s *session) resume() {
	if err := s.open(); err != nil {
		s.m.logger.Error("open session", "chat", s.id, "err", err)
		return
	}
	if !interrupted(s.history) {
		mark, _ := os.ReadFile(turnMarkPath(s.private))
		if sent, ok := parseUndelivered(string(mark)); ok {
			s.sendKeptAnswer(sent)
			return
		}
		s.unmarkTurn()
		s.m.logger.Debug("the turn a restart found had ended: nothing to tell", "chat", s.id)
		return
	}
	s.m.logger.Info("telling the chat its turn was cut off by a restart", "chat", s.id)
	notice := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartText, Text: RestartNotice}}}
	if err := s.appendMessage(notice); err != nil {
		s.m.logger.Warn("save the restart notice", "chat", s.id, "err", err)
	}
	s.unmarkTurn()
	s.reply(s.m.ctx, RestartNotice)
}

// interrupted reports whether a conversation ends without the answer to
// its last message: with the user's message, tool results, or an
// assistant message that asks for tools.
func interrupted(history []llm.Message) bool {
	if len(history) == 0 {
		return false
	}
	last := history[len(history)-1]
	if last.Role != llm.RoleAssistant {
		return true
	}
	for _, p := range last.Parts {
		if p.Kind == llm.PartToolCall {
			return true
		}
	}
	return false
}

// sendKeptAnswer sends the conversation's last answer, which a shutdown
// kept from the chat — from its part sent on when the chat can send a part
// (ResumingChat): the first ones reached it — and removes the mark once it
// went out (a shutdown again keeps it for the start after).
func (s *session) sendKeptAnswer(sent int) {
	if len(s.history) == 0 {
		s.unmarkTurn()
		return
	}
	var text []string
	for _, p := range s.history[len(s.history)-1].Parts {
		if p.Kind == llm.PartText {
			text = append(text, p.Text)
		}
	}
	s.m.logger.Info("sending the answer a restart kept from the chat", "chat", s.id, "parts_sent_before", sent)
	answer := s.m.o.Redactor.Redact(strings.Join(text, "\n\n"))
	var err error
	if rc, ok := s.m.o.Chat.(ResumingChat); ok && sent > 0 {
		err = rc.SendTextFrom(s.m.ctx, s.id, answer, sent)
	} else {
		err = s.m.o.Chat.SendText(s.m.ctx, s.id, answer)
	}
	if err != nil && s.m.ctx.Err() != nil {
		return
	}
	if err != nil {
		s.m.logger.Warn("send the kept answer", "chat", s.id, "err", err)
	}
	s.unmarkTurn()
}
