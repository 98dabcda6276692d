package liveview

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"strings"
	"sync"
	"time"
)

// RunCode runs a Playwright function `async (page) => …` on the chat's
// current tab, in the chat's own @playwright/mcp session (LocateTool with
// {"code": code}), and gives the tool's text answer. The answer echoes the
// code, and the code carries what the user types: neither may be logged.
type RunCode func(ctx context.Context, code string) (string, error)

// MCPTarget is a Target for the browsers that run here (the shared one and
// one per chat): Playwright launches them over --remote-debugging-pipe, so
// there is no DevTools port to reach, and none is opened. Everything goes
// through the chat's own MCP session (RunCode) on its current tab: no other
// chat's tab, and no port a page could reach.
//
// Frames and inputs go through a pump (pump.go, relay.go): one call starts
// it in the browser server's process, where it streams the tab's
// screencast (through Playwright's CDP session) to the bot and does the
// inputs, each without a tool call. Where the pump cannot start (the
// server does not share the bot's 127.0.0.1), frames are screenshots
// taken while the viewer takes them — the next one after the last was
// taken, sent only when the tab changed, polled every mcpFrameEvery while
// it does not — and every input is a call: each of them waits the server's
// settle time (half a second) before it answers.
type MCPTarget struct {
	run     RunCode
	noRelay bool // screenshots only (the measurement's "before")

	mu     sync.Mutex
	stop   context.CancelFunc // the frame loop's
	relay  *relay             // the pump's, while it runs
	loopWG sync.WaitGroup
	acks   chan int
	url    string // the tab's URL at the last frame
	force  bool   // the next screenshot is sent even if unchanged
}

var _ Target = (*MCPTarget)(nil)

// NewMCPTarget is the tab run reaches; it does no I/O.
func NewMCPTarget(run RunCode) *MCPTarget {
	return &MCPTarget{run: run, acks: make(chan int, 1)}
}

// How often an unchanged tab is looked at again while the viewer takes
// frames, and how long a screenshot may take.
const (
	mcpFrameEvery   = 250 * time.Millisecond
	mcpShotTimeout  = 10 * time.Second
	mcpErrorBackoff = time.Second
)

// js is v as a JavaScript literal (JSON is one; Go escapes U+2028/9).
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

// result reads the function's JSON value from an answer: @playwright/mcp
// 0.0.83 puts JSON.stringify(value) on the line after "### Result".
func result(answer string, into any) error {
	_, rest, ok := strings.Cut(answer, "### Result\n")
	if !ok {
		return errors.New("the browser tool gave no result")
	}
	line, _, _ := strings.Cut(rest, "\n")
	if err := json.Unmarshal([]byte(line), into); err != nil {
		return errors.New("the browser tool's result is not what was asked")
	}
	return nil
}

// act runs code for an input; its error names what, never the code's text
// (what the user typed) nor the answer.
func (t *MCPTarget) act(ctx context.Context, what, code string) error {
	if _, err := t.run(ctx, code); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
		return fmt.Errorf("%s: the browser tool failed", what)
	}
	return nil
}

// StartScreencast starts the pump, or where it cannot start, the
// screenshot loop.
func (t *MCPTarget) StartScreencast(ctx context.Context, o ScreencastOptions, onFrame func(Frame)) error {
	t.StopScreencast(context.Background())
	var r *relay
	if !t.noRelay {
		r, _ = startPump(ctx, t.run, o, onFrame, t.setURL) // nil: screenshots
	}
	loop, cancel := context.WithCancel(context.Background())
	t.mu.Lock()
	t.stop, t.relay = cancel, r
	t.mu.Unlock()
	for len(t.acks) > 0 {
		<-t.acks
	}
	t.loopWG.Add(1)
	go func() {
		defer t.loopWG.Done()
		if r != nil {
			r = t.pumps(loop, r, o, onFrame)
		}
		if r == nil && loop.Err() == nil {
			t.frames(loop, o, onFrame)
		}
	}()
	return nil
}

// pumps watches the pump r until ctx ends (then it stops it). A pump that
// ended on its own — its tab closed, or it lost the relay — is replaced
// by one on the chat's current tab; when none starts, pumps gives nil and
// the screenshots take over.
func (t *MCPTarget) pumps(ctx context.Context, r *relay, o ScreencastOptions, onFrame func(Frame)) *relay {
	for {
		select {
		case <-ctx.Done():
			r.stop()
			return r
		case <-r.endCh:
		}
		r.stop()
		if !sleepCtx(ctx, mcpErrorBackoff) {
			return r
		}
		next, _ := startPump(ctx, t.run, o, onFrame, t.setURL)
		t.mu.Lock()
		if ctx.Err() != nil { // stopped meanwhile: StopScreencast cancels ctx under t.mu
			t.mu.Unlock()
			if next != nil {
				next.stop()
			}
			return r
		}
		t.relay = next
		t.mu.Unlock()
		if next == nil {
			return nil
		}
		r = next
	}
}

// frames is the frame loop: a screenshot, delivered when it differs from
// the last one (the first always), then the wait for its ack.
func (t *MCPTarget) frames(ctx context.Context, o ScreencastOptions, onFrame func(Frame)) {
	var last [sha256.Size]byte
	seq := 0
	for ctx.Err() == nil {
		f, err := t.shot(ctx, o.Quality)
		wait := mcpFrameEvery
		switch sum := sha256.Sum256(f.JPEG); {
		case err != nil:
			wait = mcpErrorBackoff
		case seq == 0 || sum != last || t.forced():
			last, seq = sum, seq+1
			f.Ack, f.Still = seq, false
			onFrame(f)
			if !t.waitAck(ctx, seq) {
				return
			}
		}
		if !sleepCtx(ctx, wait) {
			return
		}
	}
}

// Refresh has the next frame sent even if the tab looks unchanged.
func (t *MCPTarget) Refresh() {
	if r := t.relayed(); r != nil {
		r.askRefresh()
		return
	}
	t.mu.Lock()
	t.force = true
	t.mu.Unlock()
}

// relayed is the pump's relay while it runs, else nil.
func (t *MCPTarget) relayed() *relay {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.relay
}

func (t *MCPTarget) setURL(u string) {
	t.mu.Lock()
	t.url = u
	t.mu.Unlock()
}

func (t *MCPTarget) forced() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.force
	t.force = false
	return f
}

func (t *MCPTarget) waitAck(ctx context.Context, seq int) bool {
	for {
		select {
		case a := <-t.acks:
			if a >= seq {
				return true
			}
		case <-ctx.Done():
			return false
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// AckFrame lets the pump send its next frame, or the frame loop take the
// next screenshot; it never blocks.
func (t *MCPTarget) AckFrame(_ context.Context, ack int) error {
	if r := t.relayed(); r != nil {
		r.ack(ack)
		return nil
	}
	for {
		select {
		case t.acks <- ack:
			return nil
		default:
		}
		select { // a newer ack replaces an untaken one
		case <-t.acks:
		default:
		}
	}
}

// StopScreencast stops the pump (its screencast and CDP session end, see
// relay.stop) or the frame loop, and waits for it.
func (t *MCPTarget) StopScreencast(context.Context) error {
	t.mu.Lock()
	if t.stop != nil {
		t.stop() // under t.mu: pumps checks it there before it installs a new relay
	}
	t.stop, t.relay = nil, nil
	t.mu.Unlock()
	t.loopWG.Wait() // pumps stops its relay
	return nil
}

// shotCode takes the tab's viewport as a JPEG at CSS-pixel scale (the
// frame's size is then its viewport's), caret shown.
const shotCode = `async (page) => {
  const vp = page.viewportSize() || await page.evaluate(() => ({ width: innerWidth, height: innerHeight }));
  const b = await page.screenshot({ type: 'jpeg', quality: %d, scale: 'css', caret: 'initial', timeout: %d });
  return { w: vp.width, h: vp.height, u: page.url(), d: b.toString('base64') };
}`

func (t *MCPTarget) shot(ctx context.Context, quality int) (Frame, error) {
	ctx, cancel := context.WithTimeout(ctx, mcpShotTimeout)
	defer cancel()
	answer, err := t.run(ctx, fmt.Sprintf(shotCode, quality, mcpShotTimeout.Milliseconds()-500))
	if err != nil {
		return Frame{}, fmt.Errorf("screenshot: %w", err)
	}
	var r struct {
		W, H int
		U, D string
	}
	if err := result(answer, &r); err != nil {
		return Frame{}, fmt.Errorf("screenshot: %w", err)
	}
	jpeg, err := base64.StdEncoding.DecodeString(r.D)
	if err != nil || len(jpeg) == 0 {
		return Frame{}, errors.New("screenshot: not a JPEG")
	}
	t.setURL(r.U)
	return Frame{JPEG: jpeg, Size: image.Pt(r.W, r.H)}, nil
}

func (t *MCPTarget) Screenshot(ctx context.Context) (Frame, error) {
	f, err := t.shot(ctx, screencast.Quality)
	f.Still = true
	return f, err
}

// input has the pump do c when it runs (else false).
func (t *MCPTarget) input(ctx context.Context, what string, c relayCmd) (bool, error) {
	r := t.relayed()
	if r == nil {
		return false, nil
	}
	if err := r.do(ctx, c); err != nil {
		if ctx.Err() != nil {
			return true, fmt.Errorf("%s: %w", what, ctx.Err())
		}
		return true, fmt.Errorf("%s: %w", what, err)
	}
	return true, nil
}

func (t *MCPTarget) Tap(ctx context.Context, x, y float64) error {
	if ok, err := t.input(ctx, "tap", relayCmd{Op: "tap", X: x, Y: y}); ok {
		return err
	}
	return t.act(ctx, "tap", fmt.Sprintf(`async (page) => { await page.mouse.click(%s, %s); }`, js(x), js(y)))
}

// Touch taps with a touch point where the context has touch, else clicks.
func (t *MCPTarget) Touch(ctx context.Context, x, y float64) error {
	if ok, err := t.input(ctx, "touch", relayCmd{Op: "touch", X: x, Y: y}); ok {
		return err
	}
	return t.act(ctx, "touch", fmt.Sprintf(`async (page) => {
  try { await page.touchscreen.tap(%[1]s, %[2]s); } catch { await page.mouse.click(%[1]s, %[2]s); }
}`, js(x), js(y)))
}

func (t *MCPTarget) Scroll(ctx context.Context, x, y, dx, dy float64) error {
	if ok, err := t.input(ctx, "scroll", relayCmd{Op: "scroll", X: x, Y: y, DX: dx, DY: dy}); ok {
		return err
	}
	return t.act(ctx, "scroll", fmt.Sprintf(`async (page) => { await page.mouse.move(%s, %s); await page.mouse.wheel(%s, %s); }`,
		js(x), js(y), js(dx), js(dy)))
}

// InsertText types text as an IME commit: through the pump's relay, or
// in the code of a call, whose echo in the answer is dropped unread.
func (t *MCPTarget) InsertText(ctx context.Context, text string) error {
	if ok, err := t.input(ctx, "type text", relayCmd{Op: "text", Text: text}); ok {
		return err
	}
	return t.act(ctx, "type text", `async (page) => { await page.keyboard.insertText(`+js(text)+`); }`)
}

func (t *MCPTarget) Key(ctx context.Context, key string) error {
	if _, ok := keys[key]; !ok {
		return fmt.Errorf("key %q: %w", key, errBadInput)
	}
	if ok, err := t.input(ctx, "key", relayCmd{Op: "key", Key: key}); ok {
		return err
	}
	return t.act(ctx, "key", `async (page) => { await page.keyboard.press(`+js(key)+`); }`)
}

func (t *MCPTarget) Back(ctx context.Context) error {
	if ok, err := t.input(ctx, "back", relayCmd{Op: "back"}); ok {
		return err
	}
	return t.act(ctx, "back", `async (page) => { await page.goBack({ timeout: 10000 }).catch(() => null); }`)
}

// CurrentURL is Playwright's URL of the tab (its main frame's, as the
// browser reported its navigations) at the last frame, which it goes with.
func (t *MCPTarget) CurrentURL(ctx context.Context) (string, error) {
	t.mu.Lock()
	u := t.url
	t.mu.Unlock()
	if u != "" {
		return u, nil
	}
	answer, err := t.run(ctx, `async (page) => page.url()`)
	if err != nil {
		return "", errors.New("the tab's URL: the browser tool failed")
	}
	err = result(answer, &u)
	return u, err
}

// Close ends the frame loop; the tab stays open for the model.
func (t *MCPTarget) Close() error { return t.StopScreencast(context.Background()) }
