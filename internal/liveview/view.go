package liveview

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// view is one live hand-off: its links (links.go), whether its page proved
// its user, the tab once reached, and its end.
type view struct {
	h        Handoff
	deadline time.Time
	log      *slog.Logger

	// token and session are the digests of its link and page secret,
	// guarded by links.mu.
	token, session digest

	mu         sync.Mutex
	authorized bool   // the page's initData named the user (or none is needed)
	target     Target // the tab, once reached
	casting    bool   // its screencast runs
	frames     *frames

	endOnce sync.Once
	endCh   chan struct{}
	outcome Outcome // set before endCh closes
}

func (v *view) ended() bool {
	select {
	case <-v.endCh:
		return true
	default:
		return false
	}
}

// isAuthorized reports whether the page may see and drive the tab.
func (v *view) isAuthorized() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.authorized
}

func (v *view) authorize() {
	v.mu.Lock()
	v.authorized = true
	v.mu.Unlock()
}

// connectTimeout bounds reaching the tab and starting its screencast.
const connectTimeout = 15 * time.Second

// screencast are the frames the live view asks for: JPEG at a quality
// that keeps a CAPTCHA's text readable, no larger than a phone in landscape
// needs at 2x.
var screencast = ScreencastOptions{Quality: 60, MaxWidth: 1280, MaxHeight: 1280}

// tab is the view's tab, reached (and its screencast started) on first use.
func (v *view) tab(ctx context.Context) (Target, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended() {
		return nil, errEnded
	}
	if v.target == nil {
		if v.h.Connect == nil {
			return nil, errors.New("the hand-off has no tab")
		}
		ctx, cancel := context.WithTimeout(ctx, connectTimeout)
		defer cancel()
		t, err := v.h.Connect(ctx)
		if err != nil {
			return nil, fmt.Errorf("reach the tab: %w", err)
		}
		v.target = t
	}
	if !v.casting {
		ctx, cancel := context.WithTimeout(ctx, connectTimeout)
		defer cancel()
		if err := v.target.StartScreencast(ctx, screencast, v.onFrame(v.target)); err != nil {
			return nil, fmt.Errorf("start the screencast: %w", err)
		}
		v.casting = true
	}
	return v.target, nil
}

var errEnded = errors.New("the hand-off ended")

// refresher is a Target whose frames come slowly (MCPTarget: each is a
// tool call): settle asks it for the tab as it is now, instead of
// restarting a screencast whose next frame is already on its way.
type refresher interface{ Refresh() }

// onFrame is what t's screencast delivers frames to: the view's frames,
// acking a frame nobody took when a newer one replaces it.
func (v *view) onFrame(t Target) func(Frame) {
	return func(f Frame) {
		if skipped, ok := v.frames.put(f); ok {
			actx, cancel := context.WithTimeout(context.Background(), time.Second)
			if err := t.AckFrame(actx, skipped); err != nil {
				v.log.Debug("live view: ack a skipped frame", "err", err)
			}
			cancel()
		}
	}
}

// How long the screencast may stay silent before it is started again:
// after an input (Chromium's screencast now and then sends nothing after a
// change the page shows: measured, a stall in about one of five runs of
// twenty taps) and at the start (a still page may send no first frame).
const (
	settleInput = 400 * time.Millisecond
	settleStart = time.Second
)

// settle waits up to d for a frame newer than since; when none comes it
// starts the screencast again, which sends the tab as it is now. (A
// screenshot in its place, Page.captureScreenshot, was tried: it made the
// screencast fall silent more often.)
func (v *view) settle(ctx context.Context, t Target, since uint64, d time.Duration) {
	wctx, cancel := context.WithTimeout(ctx, d)
	came := v.frames.newer(wctx, since)
	cancel()
	if came || ctx.Err() != nil || v.ended() {
		return
	}
	if r, ok := t.(refresher); ok { // frames are slow to come: ask for one, stop nothing
		r.Refresh()
		return
	}
	if err := t.StopScreencast(ctx); err != nil {
		v.log.Debug("live view: restart the screencast", "err", err)
	}
	if err := t.StartScreencast(ctx, screencast, v.onFrame(t)); err != nil {
		v.log.Debug("live view: restart the screencast", "err", err)
	}
}

// end ends the view once: its links get nothing from now on, its readers
// wake, and the tab is let go (it stays open for the model).
func (v *view) end(o Outcome, l *links) {
	v.endOnce.Do(func() {
		v.outcome = o
		close(v.endCh)
		l.drop(v)
		v.frames.close()
		v.mu.Lock()
		t, casting := v.target, v.casting
		v.target, v.casting = nil, false
		v.mu.Unlock()
		if t != nil {
			if casting {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				if err := t.StopScreencast(ctx); err != nil {
					v.log.Debug("live view: stop the screencast", "err", err)
				}
				cancel()
			}
			if err := t.Close(); err != nil {
				v.log.Debug("live view: let the tab go", "err", err)
			}
		}
		v.log.Info("live view ended", "outcome", o.String())
	})
}

// Live is a running hand-off, for the tool that started it.
type Live struct {
	v *view
	s *Server

	mu  sync.Mutex
	url string
}

// URL is the link that opens the live view, once.
func (l *Live) URL() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.url
}

// Relink gives the hand-off a new link (the old one, and a page it opened,
// get nothing from now on): for a user who closed the view and opens it
// again from the chat. Empty once the hand-off ended.
func (l *Live) Relink() string {
	if l.v.ended() {
		return ""
	}
	l.s.links.drop(l.v)
	l.v.mu.Lock()
	l.v.authorized = !l.v.h.MiniApp
	l.v.mu.Unlock()
	u := l.s.linkURL(l.s.links.add(l.v))
	l.mu.Lock()
	l.url = u
	l.mu.Unlock()
	return u
}

// Wait waits for the hand-off's end: Done (the page's, or End from the
// chat's button), ctx ending (/stop: OutcomeStopped) or the timeout.
func (l *Live) Wait(ctx context.Context) Outcome {
	t := time.NewTimer(l.v.deadline.Sub(l.s.now()))
	defer t.Stop()
	select {
	case <-l.v.endCh:
	case <-ctx.Done():
		l.s.end(l.v, OutcomeStopped)
	case <-t.C:
		l.s.end(l.v, OutcomeTimeout)
	}
	return l.v.outcome
}

// End ends the hand-off with o (the chat's own Done button: OutcomeDone).
func (l *Live) End(o Outcome) { l.s.end(l.v, o) }

// Outcome is how the hand-off ended; 0 while it runs.
func (l *Live) Outcome() Outcome {
	if !l.v.ended() {
		return 0
	}
	return l.v.outcome
}

// Done is closed when the hand-off ended.
func (l *Live) Done() <-chan struct{} { return l.v.endCh }
