package liveview

import (
	"context"
	"image"
	"time"
)

// Handoff is one hand-off of a chat's tab to its human, as the session's
// browser_handoff tool asks for it.
type Handoff struct {
	// Chat and Topic are the chat (and forum topic) whose tab is handed.
	Chat  int64
	Topic int
	// User is the user whose turn asked for it: the one who may open it
	// (in a group an admin too, see Options.IsAdmin).
	User int64
	// Group says the chat is a group: admins may open its hand-off.
	Group bool
	// MiniApp says the link opens as a Telegram Mini App (a web_app
	// button): the page must then post initData that names User (or, in a
	// group, an admin) before it shows anything. Without it the single-use
	// link alone lets its first opener in: the bot always sets it (a
	// group's link goes to the user's private chat, where Telegram allows
	// Mini App buttons).
	MiniApp bool
	// Timeout ends the hand-off (OutcomeTimeout); zero: DefaultTimeout.
	Timeout time.Duration
	// Connect reaches the chat's current tab when the link is opened; the
	// view closes what it returns when it ends. It must reach that tab
	// alone (see cdptarget.go and the package's report for each browser
	// mode).
	Connect func(ctx context.Context) (Target, error)
}

// DefaultTimeout is a hand-off's timeout when Handoff.Timeout is zero
// (HANDOFF_TIMEOUT_SECONDS' default).
const DefaultTimeout = 10 * time.Minute

// Outcome is how a hand-off ended, for the tool's result.
type Outcome int

const (
	// OutcomeDone: the user pressed Done (in the page or in the chat).
	OutcomeDone Outcome = iota + 1
	// OutcomeStopped: the turn was stopped (/stop), or the bot stops.
	OutcomeStopped
	// OutcomeTimeout: nobody pressed Done within the timeout.
	OutcomeTimeout
)

func (o Outcome) String() string {
	switch o {
	case OutcomeDone:
		return "done"
	case OutcomeStopped:
		return "stopped"
	case OutcomeTimeout:
		return "timeout"
	}
	return "unknown"
}

// Target is one browser tab, as the live view drives it. Nothing in it
// names another target: an implementation is bound to its tab when it is
// made. Coordinates are the page's CSS pixels (Frame.Size).
type Target interface {
	// StartScreencast starts frames; each is delivered to onFrame (which
	// must not block) and the next comes after AckFrame of it.
	StartScreencast(ctx context.Context, opt ScreencastOptions, onFrame func(Frame)) error
	// AckFrame tells the browser a frame was taken (or skipped), so it
	// sends the next. It must not wait for the browser's answer: it is
	// called from onFrame too.
	AckFrame(ctx context.Context, ack int) error
	StopScreencast(ctx context.Context) error
	// Tap presses and releases the left mouse button at (x, y).
	Tap(ctx context.Context, x, y float64) error
	// Touch taps at (x, y) with a touch point, for pages that listen to
	// touch events only.
	Touch(ctx context.Context, x, y float64) error
	// Scroll turns the wheel by (dx, dy) at (x, y).
	Scroll(ctx context.Context, x, y, dx, dy float64) error
	// InsertText types text into the focused element as an IME commit
	// (paste and non-Latin text alike).
	InsertText(ctx context.Context, text string) error
	// Key presses and releases one named key (Keys).
	Key(ctx context.Context, key string) error
	// Back goes one entry back in the tab's history (nothing at its start).
	Back(ctx context.Context) error
	// Screenshot is the tab as it is now, for when the screencast sends
	// nothing after an input (Chromium's sometimes does not, though the page
	// changed) or at the start. Its Frame has Still set.
	Screenshot(ctx context.Context) (Frame, error)
	// CurrentURL is the tab's URL, as the browser (not the page) says.
	CurrentURL(ctx context.Context) (string, error)
	// Close lets the tab go (the tab stays open for the model).
	Close() error
}

// ScreencastOptions size and encode the frames.
type ScreencastOptions struct {
	Quality             int // JPEG quality 1..100
	MaxWidth, MaxHeight int // device pixels
}

// Frame is one JPEG of the tab.
type Frame struct {
	JPEG []byte
	// Size is the page's viewport in CSS pixels (what input coordinates
	// are in), from the frame's metadata.
	Size image.Point
	// Ack is what AckFrame takes.
	Ack int
	// Still marks a screenshot: nothing to ack.
	Still bool
}
