package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// A result's structuredContent is for programs, its content for people and
// models; the protocol asks a server to put the structured content's JSON
// in a text part too, and many do, but not all: go-sdk's memory server
// answers read_graph with "Graph read successfully" and the graph only as
// structured content. So the model gets the structured content as JSON
// text after the content, unless a text part already carries it.

const (
	// maxCarryScan bounds the text searched for the structured content's
	// values; a longer text is only compared with it as JSON.
	maxCarryScan = 256 << 10
	// maxCarryLeaves bounds the values looked for in the text.
	maxCarryLeaves = 1000
)

// structuredHeading introduces the structured content after the content.
const structuredHeading = "Structured content:\n"

// appendStructured adds structuredContent as JSON text: its bytes verbatim
// when the result has no other content; compacted, after the content, when
// no text part carries it (carriesStructured). The result's caps apply to
// it as to any text.
func appendStructured(out []chat.Part, sc json.RawMessage) []chat.Part {
	s := bytes.TrimSpace(sc)
	if len(s) == 0 || bytes.Equal(s, []byte("null")) {
		return out
	}
	if len(out) == 0 {
		return append(out, textContent(validUTF8(s)))
	}
	v, err := decodeNumbers(s)
	if err != nil || carriesStructured(out, v) {
		return out
	}
	var b bytes.Buffer
	if json.Compact(&b, s) == nil {
		s = b.Bytes()
	}
	return append(out, textContent(structuredHeading+validUTF8(s)))
}

// carriesStructured reports whether the text parts carry the structured
// content v: one of them is the same JSON (whatever its spacing and key
// order), or the text holds every value of it (a string or a number;
// a server that prints the data its own way), up to maxCarryLeaves of them.
func carriesStructured(parts []chat.Part, v any) bool {
	var texts []string
	size := 0
	for _, c := range parts {
		if c.Kind != chat.TextPart {
			continue
		}
		texts = append(texts, c.Text)
		size += len(c.Text)
		if t := strings.TrimSpace(c.Text); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
			if tv, err := decodeNumbers([]byte(t)); err == nil && reflect.DeepEqual(tv, v) {
				return true
			}
		}
	}
	if size > maxCarryScan || len(texts) == 0 {
		return false
	}
	joined := strings.Join(texts, "\n")
	found, missing := 0, false
	walkLeaves(v, func(leaf string) bool {
		if !strings.Contains(joined, leaf) {
			missing = true
			return false
		}
		found++
		return found < maxCarryLeaves
	})
	return found > 0 && !missing
}

// walkLeaves calls f with each string and number of v, in order, until f
// returns false; it reports whether f asked to go on.
func walkLeaves(v any, f func(string) bool) bool {
	switch x := v.(type) {
	case string:
		return x == "" || f(x)
	case json.Number:
		return f(x.String())
	case []any:
		for _, e := range x {
			if !walkLeaves(e, f) {
				return false
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) { // the same leaves each time, when there are too many
			if !walkLeaves(x[k], f) {
				return false
			}
		}
	}
	return true
}

// decodeNumbers decodes JSON keeping numbers as written.
func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}
