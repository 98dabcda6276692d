package liveview

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"unicode/utf8"
)

// input is one thing the page forwards. Coordinates are fractions (0..1)
// of the frame as shown, so the phone's scale is the page's business and
// the tab's size the server's; scroll deltas are fractions of the frame's
// height and width too.
type input struct {
	Kind string  `json:"kind"` // tap, touch, scroll, text, key, back
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	DX   float64 `json:"dx"`
	DY   float64 `json:"dy"`
	Text string  `json:"text"`
	Key  string  `json:"key"`
}

// maxTextRunes bounds one text input (a pasted password or code, not a
// novel).
const maxTextRunes = 2048

// keyDef is how a named key is pressed over CDP.
type keyDef struct {
	Code string
	VK   int    // windowsVirtualKeyCode
	Text string // what it types, if anything
}

// keys are the keys the page may press: the ones an on-screen keyboard
// or the page's own buttons send beside text.
var keys = map[string]keyDef{
	"Enter":      {Code: "Enter", VK: 13, Text: "\r"},
	"Backspace":  {Code: "Backspace", VK: 8},
	"Tab":        {Code: "Tab", VK: 9},
	"Escape":     {Code: "Escape", VK: 27},
	"Delete":     {Code: "Delete", VK: 46},
	"ArrowLeft":  {Code: "ArrowLeft", VK: 37},
	"ArrowUp":    {Code: "ArrowUp", VK: 38},
	"ArrowRight": {Code: "ArrowRight", VK: 39},
	"ArrowDown":  {Code: "ArrowDown", VK: 40},
}

var errBadInput = errors.New("bad input")

func clamp01(f float64) float64 { return max(0, min(1, f)) }

// serveInput forwards one input to the tab. The log names its kind and,
// for text, its length: never what was typed.
func (s *Server) serveInput(w http.ResponseWriter, r *http.Request, v *view) {
	var in input
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxInputBody))
	if err := dec.Decode(&in); err != nil {
		http.Error(w, "bad input", http.StatusBadRequest)
		return
	}
	t, err := v.tab(r.Context())
	if err != nil {
		s.tabFailed(w, v, err)
		return
	}
	before := v.frames.since()
	if err := applyInput(r, t, in, v.frames.latest()); err != nil {
		if errors.Is(err, errBadInput) {
			http.Error(w, "bad input", http.StatusBadRequest)
			return
		}
		if r.Context().Err() != nil || v.ended() { // the page left, the hand-off ended, the bot stops
			v.log.Debug("live view input cut short", "kind", in.Kind, "err", err)
		} else {
			v.log.Warn("live view input failed", "kind", in.Kind, "err", err)
		}
		http.Error(w, "the browser tab did not take it", http.StatusBadGateway)
		return
	}
	v.log.Debug("live view input", "kind", in.Kind, "chars", utf8.RuneCountInString(in.Text))
	v.settle(r.Context(), t, before, settleInput)
	w.WriteHeader(http.StatusNoContent)
}

// applyInput does in on t, scaled to the frame f the page showed.
func applyInput(r *http.Request, t Target, in input, f Frame) error {
	ctx := r.Context()
	x, y := clamp01(in.X)*float64(f.Size.X), clamp01(in.Y)*float64(f.Size.Y)
	positional := in.Kind == "tap" || in.Kind == "touch" || in.Kind == "scroll"
	if positional && (f.Size.X <= 0 || f.Size.Y <= 0) {
		return fmt.Errorf("%w: no frame yet", errBadInput)
	}
	switch in.Kind {
	case "tap":
		return t.Tap(ctx, x, y)
	case "touch":
		return t.Touch(ctx, x, y)
	case "scroll":
		dx, dy := max(-1, min(1, in.DX))*float64(f.Size.X), max(-1, min(1, in.DY))*float64(f.Size.Y)
		return t.Scroll(ctx, x, y, dx, dy)
	case "text":
		if in.Text == "" || !utf8.ValidString(in.Text) || utf8.RuneCountInString(in.Text) > maxTextRunes {
			return fmt.Errorf("%w: text", errBadInput)
		}
		return t.InsertText(ctx, in.Text)
	case "key":
		if _, ok := keys[in.Key]; !ok {
			return fmt.Errorf("%w: key", errBadInput)
		}
		return t.Key(ctx, in.Key)
	case "back":
		return t.Back(ctx)
	}
	return fmt.Errorf("%w: kind", errBadInput)
}

// urlHeader is a URL as a header value: percent-escaped outside ASCII's
// printable range (the page decodes it), and bounded.
func urlHeader(u string) string {
	const maxURL = 4096
	if len(u) > maxURL {
		u = u[:maxURL]
	}
	return url.PathEscape(u)
}
