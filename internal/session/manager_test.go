package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// reAgent answers every message with "re: <text>", without tools.
func reAgent(_ context.Context, req llm.Request) (llm.Response, error) {
	return llm.Response{Text: "re: " + llmtest.LastUserText(req)}, nil
}

// await fails the test unless ch delivers within a generous deadline (a
// safety net, not a measure: the event comes at once when all is well).
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// A chat's session does its work without the manager's lock, which guards
// only the chat map: while another goroutine holds it (a slow lookup, say),
// a running chat goes on through its queue.
func TestSessionsWorkWithoutTheManagerLock(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	answer := func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if llmtest.LastUserText(req) == "first" {
			started <- struct{}{}
			<-release
		}
		return reAgent(ctx, req)
	}
	e := newEnv(t, answer, envOptions{})
	e.deliver(chat.In(21), "first")
	e.deliver(chat.In(21), "second")
	e.deliver(chat.In(21), "third")
	await(t, started, "the first turn")

	e.manager.mu.Lock()
	defer e.manager.mu.Unlock() // also when the wait below fails
	close(release)
	got, err := e.chat.awaitTexts(chat.In(21), 3)
	if err != nil {
		t.Fatalf("with the manager's lock held: %v", err)
	}
	if !slices.Equal(got, []string{"re: first", "re: second", "re: third"}) {
		t.Errorf("answers = %q", got)
	}
}

// With the shortest idle release, each chat's goroutine exits after every
// answer, just as the next message arrives: no message may be left in a
// queue without a goroutine (a lost wake-up), and a goroutine that is
// exiting must be done with the conversation before the next one opens it.
func TestIdleReleaseRacesTheNextMessage(t *testing.T) {
	e := newEnv(t, reAgent, envOptions{idleRelease: time.Nanosecond})
	const chats, messages = 6, 15
	errs := make(chan error, chats)
	var wg sync.WaitGroup
	for c := range int64(chats) {
		chat := 100 + c
		wg.Go(func() {
			for i := range messages {
				if err := e.manager.Deliver(inChat(chat), Message{Text: fmt.Sprintf("m%d", i)}); err != nil {
					errs <- err
					return
				}
				got, err := e.chat.awaitTexts(inChat(chat), i+1)
				if err != nil {
					errs <- err
					return
				}
				if want := fmt.Sprintf("re: m%d", i); got[i] != want {
					errs <- fmt.Errorf("chat %d: answer %d = %q, want %q", chat, i, got[i], want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// /new racing the manager's Close returns (done, or ErrClosed) instead of
// waiting forever for a goroutine that will never run: here Close comes
// while Reset is logging the messages it dropped.
func TestResetRacingCloseReturns(t *testing.T) {
	gate := &gateHandler{match: "dropped waiting messages", held: make(chan struct{}, 1), open: make(chan struct{})}
	started := make(chan struct{}, 1)
	answer := func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if llmtest.LastUserText(req) == "busy" {
			started <- struct{}{}
			<-ctx.Done()
			return llm.Response{}, ctx.Err()
		}
		return reAgent(ctx, req)
	}
	e := newEnv(t, answer, envOptions{logger: slog.New(gate)})
	e.deliver(chat.In(22), "busy")
	await(t, started, "the first turn")
	e.deliver(chat.In(22), "waiting")

	reset := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		reset <- e.manager.Reset(ctx, chat.In(22))
	}()
	await(t, gate.held, "Reset to drop the waiting message")
	e.close()
	close(gate.open)
	if err := await(t, reset, "Reset"); err != nil && !errors.Is(err, ErrClosed) {
		t.Errorf("Reset during Close: %v, want nil or ErrClosed", err)
	}
}

// Many chats with messages, /stop and /new arriving at once from several
// goroutines, then Close in the middle of it all: every call returns, the
// race detector stays quiet, and after Close nothing is accepted.
func TestConcurrentDeliverStopResetAndClose(t *testing.T) {
	answer := func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if llmtest.LastUserText(req) == "slow" { // ends when stopped, reset or closed
			<-ctx.Done()
			return llm.Response{}, ctx.Err()
		}
		return reAgent(ctx, req)
	}
	e := newEnv(t, answer, envOptions{idleRelease: time.Nanosecond})
	const chats, rounds = 6, 10

	// hammer delivers, stops and resets on every chat from three
	// goroutines a chat, until done or refused, and returns when all are
	// back. Any error but ErrClosed is reported.
	hammer := func() {
		t.Helper()
		errs := make(chan error, 3*chats)
		var wg sync.WaitGroup
		for c := range int64(chats) {
			chat := 200 + c
			wg.Go(func() {
				for i := range 4 * rounds {
					if err := e.manager.Deliver(inChat(chat), Message{Text: []string{"hi", "slow"}[i%2]}); err != nil {
						if !errors.Is(err, ErrClosed) {
							errs <- fmt.Errorf("Deliver: %w", err)
						}
						return
					}
				}
			})
			wg.Go(func() {
				for range 4 * rounds {
					e.manager.Stop(inChat(chat))
				}
			})
			wg.Go(func() {
				for range rounds {
					ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
					err := e.manager.Reset(ctx, inChat(chat))
					cancel()
					if err != nil {
						if !errors.Is(err, ErrClosed) {
							errs <- fmt.Errorf("Reset: %w", err)
						}
						return
					}
				}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		await(t, done, "every Deliver, Stop and Reset to return")
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}

	hammer()
	closed := make(chan struct{})
	go func() { e.close(); close(closed) }() // in the middle of the second round
	hammer()
	await(t, closed, "Close")
	if err := e.manager.Deliver(chat.In(200), Message{Text: "late"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Deliver after Close: %v", err)
	}
	if err := e.manager.Reset(context.Background(), chat.In(200)); !errors.Is(err, ErrClosed) {
		t.Errorf("Reset after Close: %v", err)
	}
}
