package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/disk"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
)

type inputKind int

const (
	inputMessage inputKind = iota
	inputReset
	inputResume // tell the chat its turn was cut off by a restart
	inputOpen   // read the conversation (openFirst); it goes first in the queue
	inputRun    // a scheduled run (scheduled.go)
	inputEnd    // end the session for now (Manager.End)
)

type input struct {
	kind  inputKind
	text  string
	files []Attachment  // inputMessage: files sent with the text
	taken func()        // inputMessage: Message.Taken, or nil
	from  int64         // inputMessage: who sent it
	done  chan error    // inputReset, inputOpen: the outcome
	run   *scheduledRun // inputRun
}

// take calls in.taken at most once.
func (in *input) take() {
	if f := in.taken; f != nil {
		in.taken = nil
		f()
	}
}

// session is one chat. Its goroutine runs while there is work and for
// IdleRelease after; it alone touches history and tr.
type session struct {
	id        chat.Place
	m         *Manager
	workspace string
	private   string // the bot's own folder of the chat (Manager.Private)
	wake      chan struct{}
	// sampling holds a token for each of the chat's servers' sampling
	// requests at the model (at most maxSampling).
	sampling chan struct{}

	// disk is the chat's disk budget (disk.go); diskReady is set once the
	// conversation's images are pinned, so that the watcher may prune;
	// watch is the watcher's own (diskwatch.go).
	disk      *disk.Tracker
	diskReady atomic.Bool
	watch     diskWatch

	// mu guards the fields below. It is the chat's own: no other chat and
	// not the manager wait on it. It is held only for short steps that do
	// no I/O, and never while taking the manager's lock.
	mu      sync.Mutex
	queue   []input
	running bool // a goroutine runs loop, counted in m.wg
	closed  bool // the manager is closing: nothing more is queued
	turn    context.CancelFunc
	// turnCtx and turnUser are the running turn's context and the user
	// who started it (for the servers' questions); nil and 0 between turns.
	turnCtx  context.Context
	turnUser int64
	mcp      MCPSession

	// owned by the goroutine
	history []llm.Message
	summary agent.Summary // the head of the requests: summary.go
	tr      *transcript
	// parked is the conversation while a scheduled run has history
	// (scheduled.go): its images stay pinned.
	parked []llm.Message

	tools *toolset          // the last one offered, to tell what vanished
	gone  map[string]string // tools offered before that vanished: see toolset.gone
}

// toolsFor resolves the chat's toolset (Manager.toolset, waiting at most
// wait for first discoveries) and notes which tools it offered before are
// gone.
func (s *session) toolsFor(ctx context.Context, wait time.Duration) *toolset {
	ts := s.m.toolset(ctx, wait)
	if s.tools != nil {
		gone := map[string]string{}
		for name, server := range s.gone {
			if _, back := ts.mcp[name]; !back {
				gone[name] = server
			}
		}
		for name, t := range s.tools.mcp {
			if _, ok := ts.mcp[name]; !ok {
				gone[name] = t.Group()
			}
		}
		s.gone = gone
	}
	ts.gone = s.gone
	s.tools = ts
	return ts
}

// enqueue queues in and starts the chat's goroutine unless it runs. A
// reset first drops the user messages still waiting (they belong to the
// conversation the user is leaving) and then cancels the running turn,
// all under one lock: no waiting message can start in between. It returns
// how many messages were dropped, or ErrClosed once the manager is closing.
func (s *session) enqueue(in input) (dropped int, err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, ErrClosed
	}
	var gone []input
	if in.kind == inputReset || in.kind == inputEnd {
		gone = s.dropQueuedMessagesLocked()
		dropped = len(gone)
		s.cancelTurnLocked()
	}
	if in.kind == inputOpen {
		s.queue = slices.Insert(s.queue, 0, in)
	} else {
		s.queue = append(s.queue, in)
	}
	start := !s.running
	if start {
		// Counted under s.mu, which Close takes (shut) before it waits:
		// its Wait sees every goroutine that starts.
		s.running = true
		s.m.wg.Add(1)
	}
	s.mu.Unlock()
	for i := range gone {
		gone[i].take() // dropped by /new: nobody needs them again
	}
	if start {
		go s.loop()
	} else {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return dropped, nil
}

// shut marks the session closing (Manager.Close): from now on enqueue
// refuses, so no goroutine starts after Close's Wait began.
func (s *session) shut() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

func (s *session) next() (input, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return input{}, false
	}
	in := s.queue[0]
	s.queue[0] = input{}
	s.queue = s.queue[1:]
	if len(s.queue) == 0 {
		s.queue = nil
	}
	return in, true
}

// dropQueuedMessagesLocked removes the user messages that have not
// started yet and returns them. s.mu is held.
func (s *session) dropQueuedMessagesLocked() []input {
	var gone []input
	kept := s.queue[:0]
	for _, in := range s.queue {
		if in.kind != inputMessage {
			kept = append(kept, in)
		} else {
			gone = append(gone, in)
		}
	}
	clear(s.queue[len(kept):])
	s.queue = kept
	return gone
}

func (s *session) cancelTurn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelTurnLocked()
}

func (s *session) cancelTurnLocked() bool {
	if s.turn == nil {
		return false
	}
	s.turn()
	return true
}

// setTurn records the running turn's cancel function (nil: none runs).
func (s *session) setTurn(cancel context.CancelFunc) {
	s.mu.Lock()
	s.turn = cancel
	if cancel == nil {
		s.turnCtx, s.turnUser = nil, 0
	}
	s.mu.Unlock()
}

// setTurnAsker records the running turn's context and its user, whom the
// servers' questions are put to.
func (s *session) setTurnAsker(ctx context.Context, user int64) {
	s.mu.Lock()
	s.turnCtx, s.turnUser = ctx, user
	s.mu.Unlock()
}

func (s *session) mcpSession() (MCPSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mcp == nil {
		ms, err := s.m.o.NewMCPSession(s.workspace, s.private) // no I/O
		if err != nil {
			return nil, err
		}
		ms.OnQueue(s.queued)
		ms.SetSampler(sampler{s})
		if ask, ok := s.m.o.Chat.(Elicitor); ok {
			ms.SetElicitor(elicitor{s: s, ask: ask})
		}
		s.mcp = ms
	}
	return s.mcp, nil
}

// queued tells the chat that a call waits for a free process of server
// (its ceiling of live processes is reached), with how many chats are
// ahead. It runs in the waiting call's goroutine.
func (s *session) queued(server string, ahead int) {
	noun := s.m.processNoun(server)
	line := "next in line"
	if ahead == 1 {
		line = "1 chat ahead"
	} else if ahead > 1 {
		line = fmt.Sprintf("%d chats ahead", ahead)
	}
	s.reply(s.m.ctx, fmt.Sprintf("Waiting for a free %s — %s.", noun, line))
}

// loop is the session goroutine: it handles queued inputs in order and
// exits (releasing the history) after IdleRelease without input, or when
// the manager closes.
func (s *session) loop() {
	m := s.m
	defer m.wg.Done()
	idle := time.NewTimer(m.o.IdleRelease)
	defer idle.Stop()
	for {
		if m.ctx.Err() != nil { // closing: queued inputs are not started
			s.release()
			s.drain(ErrClosed)
			return
		}
		if in, ok := s.next(); ok {
			s.handleSafely(in)
			idle.Reset(m.o.IdleRelease)
			continue
		}
		select {
		case <-s.wake:
		case <-m.ctx.Done():
		case <-idle.C:
			// Release first: once running is false, enqueue may start
			// another goroutine, which opens the transcript again.
			s.release()
			if s.retire() {
				return
			}
		}
	}
}

// retire ends the goroutine's claim on the session unless input arrived
// meanwhile. After it returns true the goroutine touches nothing of s.
func (s *session) retire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		return false
	}
	s.running = false
	return true
}

// drain answers queued resets when the manager closes.
func (s *session) drain(err error) {
	s.mu.Lock()
	q := s.queue
	s.queue = nil
	s.running = false
	s.mu.Unlock()
	for _, in := range q {
		if in.done != nil {
			in.done <- err
		}
		if in.run != nil {
			in.run.end(schedule.Result{}, err)
		}
	}
}

// release drops the in-memory conversation; the transcript on disk keeps
// it for the next message. What the disk budget remembers of the chat's
// folders goes too, unless a server of the chat runs (the watcher uses it).
func (s *session) release() {
	if s.tr != nil {
		if err := s.tr.close(); err != nil {
			s.m.logger.Warn("transcript close", "chat", s.id, "err", err)
		}
		s.tr = nil
	}
	s.history, s.summary = nil, agent.Summary{}
	if ms := s.startedMCP(); ms == nil || len(ms.Running()) == 0 {
		s.disk.Forget()
	}
}

// panicReply is what a chat reads when its turn ended in a panic (a bug):
// the turn is over, the chat goes on.
const panicReply = "Sorry, something went wrong with this conversation. The operator has the details in the log. " +
	"You can go on writing; /new starts a fresh conversation if this keeps happening."

// handleSafely is handle with a recover: a panic in the chat's turn (or in
// one of its tool calls, re-raised by the tool runner) is logged with its
// stack, ends the turn with panicReply, and leaves the session ready for
// the next input: the conversation is read back from disk for it.
func (s *session) handleSafely(in input) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		stack := debug.Stack()
		var tp *toolPanic
		if errors.As(asError(r), &tp) {
			r, stack = tp.value, tp.stack
		}
		s.m.logger.Error("panic in a chat's turn", "chat", s.id, "panic", fmt.Sprint(r), "stack", string(stack))
		s.setTurn(nil)
		s.release()
		in.take() // the chat is told: do not hand the message in again
		if in.done != nil {
			in.done <- errors.New("the session failed (a panic, logged)")
		}
		if in.run != nil {
			s.parked = nil
			in.run.end(schedule.Result{}, errors.New("the run failed (a panic, logged)"))
			return // nobody waits in the chat: the scheduler tells it
		}
		if s.m.ctx.Err() == nil {
			s.reply(s.m.ctx, panicReply)
		}
	}()
	s.handle(&in)
}

// toolPanic is a panic in a tool call's goroutine, carried to the turn's
// goroutine with the stack where it happened.
type toolPanic struct {
	call  string
	value any
	stack []byte
}

func (p *toolPanic) Error() string { return fmt.Sprintf("panic in tool call %s: %v", p.call, p.value) }

// asError is a recovered value as an error, for errors.As.
func asError(r any) error {
	if err, ok := r.(error); ok {
		return err
	}
	return fmt.Errorf("%v", r)
}

func (s *session) handle(in *input) {
	switch in.kind {
	case inputMessage:
		s.runTurn(in)
	case inputReset:
		in.done <- s.reset()
	case inputResume:
		s.resume()
	case inputOpen:
		in.done <- s.open()
	case inputRun:
		s.runScheduled(in)
	case inputEnd:
		s.end()
	}
}

// end stops the chat's MCP processes (its browser context with them) and
// releases the conversation from memory; the transcript, the workspace
// and the private folder stay on disk for a later message.
func (s *session) end() {
	if ms := s.startedMCP(); ms != nil {
		ms.Stop()
	}
	s.release()
	s.m.logger.Info("session ended: its servers are stopped, its files kept", "chat", s.id)
}

// openFirst has the chat's goroutine read the conversation before any
// input waiting for it (a turn that runs has read it), until ctx ends.
func (s *session) openFirst(ctx context.Context) error {
	done := make(chan error, 1)
	if _, err := s.enqueue(input{kind: inputOpen, done: done}); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// open loads the conversation from disk on the goroutine's first input.
func (s *session) open() error {
	if s.tr != nil {
		return nil
	}
	if err := s.m.ensureWorkspace(s.workspace); err != nil {
		return err
	}
	if err := ensureDir(s.private); err != nil {
		return fmt.Errorf("private folder: %w", err)
	}
	tr, history, err := openTranscript(s.private, s.m.wrapTranscript, s.m.logger.With("chat", s.id))
	if err != nil {
		return err
	}
	s.tr, s.history, s.summary = tr, history, tr.summary
	s.enforceDisk()
	return nil
}

// reset archives the conversation and stops the chat's MCP processes.
func (s *session) reset() error {
	if err := s.open(); err != nil {
		return err
	}
	if err := s.tr.archive(s.m.o.Now()); err != nil {
		return err
	}
	s.history, s.summary = nil, agent.Summary{}
	s.enforceDisk()
	if ms, err := s.mcpSession(); err == nil {
		ms.Stop()
	}
	s.m.logger.Info("new conversation", "chat", s.id)
	return nil
}

// appendMessage adds m to the history and the transcript; when it cannot
// be saved it is in neither, and the error is a *storageError.
func (s *session) appendMessage(m llm.Message) error {
	if err := s.tr.append(&m); err != nil {
		return &storageError{err: err}
	}
	s.history = append(s.history, m)
	if hasStoredImage(m.Parts) {
		// Its images are the live conversation's from now on: pinned at
		// once, or the disk watcher's prune, which runs beside the turn,
		// could take one (an image an archived conversation showed too is
		// one old file) before the next step pins it.
		s.pinImages()
	}
	return nil
}

// storageError is a chat's files failing to be written — a full disk, a
// read-only volume. The message or step was not saved (nor kept in
// memory); the user reads storageReply, the operator the error.
type storageError struct{ err error }

func (e *storageError) Error() string { return "storage: " + e.err.Error() }
func (e *storageError) Unwrap() error { return e.err }

// UserMessage is what the chat reads (chat.UserMessage).
func (e *storageError) UserMessage() string { return storageReply }

const storageReply = "Sorry, I could not save this conversation (the bot's disk may be full), so I stopped here. " +
	"The operator has the details in the log; please try again later."

// runTurn answers one user message: the agent loop. in is taken once the
// transcript holds the message, or before the chat is told it could not be
// handled; not when the manager closes first (the message is handed in
// again after the restart). While the turn runs, its mark is in the state
// dir; a turn the shutdown cut off leaves it (see Manager.Resume).
func (s *session) runTurn(in *input) {
	m := s.m
	ctx, cancelCause := context.WithCancelCause(m.ctx)
	// /stop and /new end the turn with errTurnStopped as the cause; its
	// own end with none (the servers' open questions tell them apart).
	s.setTurn(func() { cancelCause(errTurnStopped) })
	s.setTurnAsker(ctx, in.from)
	defer func() {
		s.setTurn(nil)
		cancelCause(nil)
	}()
	// Replies go out even when the turn was stopped, but not after the
	// manager closed.
	replyCtx := m.ctx

	if err := s.open(); err != nil {
		m.logger.Error("open session", "chat", s.id, "err", err)
		s.reply(replyCtx, "Sorry, I could not open this chat's storage. The operator has the details in the log.")
		in.take()
		return
	}
	s.markTurn()
	cutOff := false // by a shutdown: the mark stays, and the restart tells the chat
	defer func() {
		if !cutOff {
			s.unmarkTurn()
		}
	}()
	activity := m.o.Chat.StartActivity(ctx, s.id)
	defer activity.Done()

	err := s.agent(ctx, in, activity)
	// The turn is over before its last words: once the user reads
	// "Stopped." or an error, /stop finds nothing to stop, and the message
	// is taken (the transcript may not hold it, but the user was told).
	s.setTurn(nil)
	// What was streamed of a stopped or failed answer is in place before
	// "Stopped." or the error follows it.
	activity.Done()
	switch {
	case err == nil:
	case ctx.Err() != nil && m.ctx.Err() == nil:
		in.take()
		s.reply(replyCtx, "Stopped.")
	case m.ctx.Err() != nil:
		// Shutting down: nothing more to say. A message the transcript
		// does not hold yet is not taken: it is handed in again. An
		// answer the chat did not get is sent at the next start.
		cutOff = true
		if errors.Is(err, errUndelivered) {
			s.markUndelivered(chat.SentParts(err))
		}
	default:
		in.take()
		m.logger.Error("turn failed", "chat", s.id, "err", err)
		msg, ok := chat.UserMessage(err) // a failed model request's, a full disk's
		if !ok {
			msg = "Sorry, something went wrong while answering. The operator has the details in the log."
		}
		s.reply(replyCtx, msg)
	}
}

func (s *session) reply(ctx context.Context, text string) {
	if err := s.m.o.Chat.SendText(ctx, s.id, s.m.o.Redactor.Redact(text)); err != nil {
		s.m.logger.Warn("send reply", "chat", s.id, "err", err)
	}
}

// sendFile is the send tool.
func (s *session) sendFile(ctx context.Context, args sendArgs) (string, error) {
	f, size, err := openSendFile(s.workspace, args.Path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	file := OutgoingFile{Name: filepath.Base(args.Path), Content: f, Size: size}
	if err := s.m.o.Chat.SendFile(ctx, s.id, file, s.m.o.Redactor.Redact(args.Caption)); err != nil {
		return "", fmt.Errorf("sending %s failed: %v", args.Path, err)
	}
	return fmt.Sprintf("sent %s to the user", args.Path), nil
}

// withImages returns msgs with the image bytes of stored images loaded.
// Messages without images are shared, not copied.
func (s *session) withImages(msgs []llm.Message) ([]llm.Message, error) {
	var out []llm.Message
	for i, msg := range msgs {
		if !hasStoredImage(msg.Parts) {
			if out != nil {
				out = append(out, msg)
			}
			continue
		}
		if out == nil {
			out = append(make([]llm.Message, 0, len(msgs)), msgs[:i]...)
		}
		parts, err := s.loadParts(msg.Parts)
		if err != nil {
			return nil, err
		}
		out = append(out, llm.Message{Role: msg.Role, Parts: parts})
	}
	if out == nil {
		return msgs, nil
	}
	return out, nil
}

func hasStoredImage(parts []llm.Part) bool {
	for _, p := range parts {
		if p.Image != nil && len(p.Image.Data) == 0 && p.Image.Path != "" {
			return true
		}
		if p.ToolResult != nil && hasStoredImage(p.ToolResult.Content) {
			return true
		}
	}
	return false
}

func (s *session) loadParts(parts []llm.Part) ([]llm.Part, error) {
	out := make([]llm.Part, len(parts))
	for i, p := range parts {
		out[i] = p
		switch {
		case p.Image != nil && len(p.Image.Data) == 0 && p.Image.Path != "":
			data, err := s.tr.loadImage(p.Image)
			if err != nil {
				// A lost image file should not wedge the chat.
				out[i] = llm.Part{Kind: llm.PartText, Text: "[image no longer available]"}
				continue
			}
			img := *p.Image
			img.Data = data
			out[i].Image = &img
		case p.ToolResult != nil && hasStoredImage(p.ToolResult.Content):
			content, err := s.loadParts(p.ToolResult.Content)
			if err != nil {
				return nil, err
			}
			r := *p.ToolResult
			r.Content = content
			out[i].ToolResult = &r
		}
	}
	return out, nil
}
