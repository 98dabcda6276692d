package liveview

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/volcanicbot/volcanicbot/internal/liveview/cdp"
)

// CDPOptions name the one tab a CDPTarget drives.
type CDPOptions struct {
	// Endpoint is the browser's DevTools websocket (ws://…/devtools/browser/…;
	// BrowserEndpoint finds it from an http:// one).
	Endpoint string
	// Header is sent when connecting (PLAYWRIGHT_CDP_HEADER's token).
	Header http.Header
	// TargetID is the tab's CDP target id.
	TargetID string
	// ContextID is the browser context the tab must be in (the chat's);
	// empty: not checked (a browser of the chat's own).
	ContextID string
}

// ErrWrongTarget is AttachCDP's error for a target that is not a page of
// the expected browser context: the live view refuses it.
var ErrWrongTarget = errors.New("the target is not the chat's tab")

// CDPTarget is a Target over the Chrome DevTools Protocol: one page
// target, attached (flattened) through the browser's endpoint. Every call
// goes to that target's session; nothing it offers names another.
type CDPTarget struct {
	conn     *cdp.Conn
	targetID string
	session  string

	mu      sync.Mutex
	onFrame func(Frame)
}

var _ Target = (*CDPTarget)(nil)

// AttachCDP connects to the browser and attaches to the tab o names,
// after checking it is a page of o.ContextID.
func AttachCDP(ctx context.Context, o CDPOptions) (*CDPTarget, error) {
	t := &CDPTarget{targetID: o.TargetID}
	conn, err := cdp.Dial(ctx, o.Endpoint, o.Header, t.event)
	if err != nil {
		return nil, err
	}
	t.conn = conn
	if err := t.attach(ctx, o); err != nil {
		conn.Close()
		return nil, err
	}
	return t, nil
}

type targetInfo struct {
	TargetID         string `json:"targetId"`
	Type             string `json:"type"`
	URL              string `json:"url"`
	BrowserContextID string `json:"browserContextId"`
}

func (t *CDPTarget) info(ctx context.Context) (targetInfo, error) {
	var r struct {
		TargetInfo targetInfo `json:"targetInfo"`
	}
	err := t.conn.Call(ctx, "", "Target.getTargetInfo", map[string]string{"targetId": t.targetID}, &r)
	return r.TargetInfo, err
}

func (t *CDPTarget) attach(ctx context.Context, o CDPOptions) error {
	if o.TargetID == "" {
		return fmt.Errorf("%w: no target id", ErrWrongTarget)
	}
	info, err := t.info(ctx)
	if err != nil {
		return err
	}
	if info.Type != "page" || (o.ContextID != "" && info.BrowserContextID != o.ContextID) {
		return fmt.Errorf("%w: a %s in context %s", ErrWrongTarget, info.Type, info.BrowserContextID)
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := t.conn.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": o.TargetID, "flatten": true}, &r); err != nil {
		return err
	}
	t.session = r.SessionID
	return nil
}

// event takes the tab's screencast frames off the connection's reader.
func (t *CDPTarget) event(method, session string, params json.RawMessage) {
	if session != t.session || method != "Page.screencastFrame" {
		return
	}
	var p struct {
		Data     string `json:"data"`
		Metadata struct {
			DeviceWidth  float64 `json:"deviceWidth"`
			DeviceHeight float64 `json:"deviceHeight"`
		} `json:"metadata"`
		SessionID int `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	jpeg, err := base64.StdEncoding.DecodeString(p.Data)
	if err != nil {
		return
	}
	t.mu.Lock()
	on := t.onFrame
	t.mu.Unlock()
	if on != nil {
		on(Frame{JPEG: jpeg, Size: image.Pt(int(p.Metadata.DeviceWidth), int(p.Metadata.DeviceHeight)), Ack: p.SessionID})
	}
}

func (t *CDPTarget) call(ctx context.Context, method string, params any, result any) error {
	return t.conn.Call(ctx, t.session, method, params, result)
}

func (t *CDPTarget) StartScreencast(ctx context.Context, o ScreencastOptions, onFrame func(Frame)) error {
	t.mu.Lock()
	t.onFrame = onFrame
	t.mu.Unlock()
	return t.call(ctx, "Page.startScreencast", map[string]any{"format": "jpeg", "quality": o.Quality,
		"maxWidth": o.MaxWidth, "maxHeight": o.MaxHeight, "everyNthFrame": 1}, nil)
}

func (t *CDPTarget) AckFrame(ctx context.Context, ack int) error {
	return t.conn.Notify(ctx, t.session, "Page.screencastFrameAck", map[string]int{"sessionId": ack})
}

func (t *CDPTarget) StopScreencast(ctx context.Context) error {
	t.mu.Lock()
	t.onFrame = nil
	t.mu.Unlock()
	return t.call(ctx, "Page.stopScreencast", struct{}{}, nil)
}

func (t *CDPTarget) mouse(ctx context.Context, typ string, x, y float64, extra map[string]any) error {
	p := map[string]any{"type": typ, "x": x, "y": y}
	for k, v := range extra {
		p[k] = v
	}
	return t.call(ctx, "Input.dispatchMouseEvent", p, nil)
}

func (t *CDPTarget) Tap(ctx context.Context, x, y float64) error {
	if err := t.mouse(ctx, "mouseMoved", x, y, nil); err != nil {
		return err
	}
	press := map[string]any{"button": "left", "buttons": 1, "clickCount": 1}
	if err := t.mouse(ctx, "mousePressed", x, y, press); err != nil {
		return err
	}
	press["buttons"] = 0
	return t.mouse(ctx, "mouseReleased", x, y, press)
}

func (t *CDPTarget) Touch(ctx context.Context, x, y float64) error {
	pt := []map[string]float64{{"x": x, "y": y}}
	if err := t.call(ctx, "Input.dispatchTouchEvent", map[string]any{"type": "touchStart", "touchPoints": pt}, nil); err != nil {
		return err
	}
	return t.call(ctx, "Input.dispatchTouchEvent", map[string]any{"type": "touchEnd", "touchPoints": []any{}}, nil)
}

func (t *CDPTarget) Scroll(ctx context.Context, x, y, dx, dy float64) error {
	return t.mouse(ctx, "mouseWheel", x, y, map[string]any{"deltaX": dx, "deltaY": dy})
}

func (t *CDPTarget) InsertText(ctx context.Context, text string) error {
	return t.call(ctx, "Input.insertText", map[string]string{"text": text}, nil)
}

func (t *CDPTarget) Key(ctx context.Context, key string) error {
	k, ok := keys[key]
	if !ok {
		return fmt.Errorf("key %q: %w", key, errBadInput)
	}
	down := map[string]any{"type": "keyDown", "key": key, "code": k.Code, "windowsVirtualKeyCode": k.VK,
		"nativeVirtualKeyCode": k.VK}
	if k.Text != "" {
		down["text"] = k.Text
		down["unmodifiedText"] = k.Text
	} else {
		down["type"] = "rawKeyDown"
	}
	if err := t.call(ctx, "Input.dispatchKeyEvent", down, nil); err != nil {
		return err
	}
	return t.call(ctx, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": k.Code,
		"windowsVirtualKeyCode": k.VK, "nativeVirtualKeyCode": k.VK}, nil)
}

func (t *CDPTarget) Back(ctx context.Context) error {
	var h struct {
		CurrentIndex int `json:"currentIndex"`
		Entries      []struct {
			ID int `json:"id"`
		} `json:"entries"`
	}
	if err := t.call(ctx, "Page.getNavigationHistory", struct{}{}, &h); err != nil {
		return err
	}
	if h.CurrentIndex <= 0 || h.CurrentIndex >= len(h.Entries) {
		return nil
	}
	return t.call(ctx, "Page.navigateToHistoryEntry", map[string]int{"entryId": h.Entries[h.CurrentIndex-1].ID}, nil)
}

// Screenshot captures the tab's viewport as a JPEG of the screencast's
// quality.
func (t *CDPTarget) Screenshot(ctx context.Context) (Frame, error) {
	var m struct {
		Viewport struct {
			W float64 `json:"clientWidth"`
			H float64 `json:"clientHeight"`
		} `json:"cssLayoutViewport"`
	}
	if err := t.call(ctx, "Page.getLayoutMetrics", struct{}{}, &m); err != nil {
		return Frame{}, err
	}
	var s struct {
		Data string `json:"data"`
	}
	if err := t.call(ctx, "Page.captureScreenshot", map[string]any{"format": "jpeg", "quality": screencast.Quality,
		"optimizeForSpeed": true}, &s); err != nil {
		return Frame{}, err
	}
	jpeg, err := base64.StdEncoding.DecodeString(s.Data)
	if err != nil {
		return Frame{}, fmt.Errorf("Page.captureScreenshot: %w", err)
	}
	return Frame{JPEG: jpeg, Size: image.Pt(int(m.Viewport.W), int(m.Viewport.H)), Still: true}, nil
}

// CurrentURL asks the browser, not the page (a page cannot forge it).
func (t *CDPTarget) CurrentURL(ctx context.Context) (string, error) {
	info, err := t.info(ctx)
	return info.URL, err
}

// Close detaches from the tab (which stays open) and disconnects.
func (t *CDPTarget) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	t.conn.Call(ctx, "", "Target.detachFromTarget", map[string]string{"sessionId": t.session}, nil)
	return t.conn.Close()
}

// maxVersionBody bounds /json/version's answer (a few hundred bytes).
const maxVersionBody = 64 << 10

// BrowserEndpoint is the browser's DevTools websocket for endpoint: itself
// when it is ws:// or wss://, else the webSocketDebuggerUrl that http(s)://
// endpoint's /json/version names (with the endpoint's host, which a
// browser behind a proxy misreports).
func BrowserEndpoint(ctx context.Context, client *http.Client, endpoint string, header http.Header) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("the browser's endpoint: %w", err)
	}
	if u.Scheme == "ws" || u.Scheme == "wss" {
		return endpoint, nil
	}
	version := *u
	version.Path = strings.TrimSuffix(u.Path, "/") + "/json/version"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, version.String(), nil)
	if err != nil {
		return "", fmt.Errorf("the browser's endpoint: %w", err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("the browser's endpoint: %w", err)
	}
	defer resp.Body.Close()
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxVersionBody)).Decode(&v); err != nil || v.WS == "" {
		return "", fmt.Errorf("the browser's endpoint %s answers no websocket (%s)", u.Host, resp.Status)
	}
	ws, err := url.Parse(v.WS)
	if err != nil {
		return "", fmt.Errorf("the browser's endpoint: %w", err)
	}
	ws.Scheme, ws.Host = "ws", u.Host
	if u.Scheme == "https" {
		ws.Scheme = "wss"
	}
	if ws.RawQuery == "" {
		ws.RawQuery = u.RawQuery // a token in the endpoint's query
	}
	return ws.String(), nil
}
