package mcpclient

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/jsonscan"
)

// Limits of a mapped tool result (spec §7). What the model gets of a
// result is bounded in tokens (Options.MaxResultTokens, bound.go); these
// bound what is kept in memory (and saved) of one result at all.
const (
	// MaxResultBytes caps the joined text of a result kept; the head is
	// kept and a note says what was cut. MaxResultLines (0: none) caps its
	// lines.
	MaxResultLines = 0
	MaxResultBytes = 8 << 20
	// MaxImageBytes is the largest decoded image kept; a larger one is
	// replaced by a text note.
	MaxImageBytes = 5 * 1024 * 1024
)

// ErrMalformedResult means a tools/call result was not a JSON object. The
// caller should turn it into an error result for the model; the server is
// not necessarily dead.
var ErrMalformedResult = errors.New("tools/call result is not a JSON object")

// MapResult maps the raw result of tools/call for the agent (spec §7):
//
//	text                  text, the joined text capped at MaxResultLines / MaxResultBytes
//	image                 image with its decoded bytes; over MaxImageBytes or undecodable: a text note
//	audio                 [audio omitted: <mime>, <n> bytes]
//	resource with text    "Resource <uri>:\n<text>"
//	resource with blob    [resource <uri>: <mime>, <n> bytes omitted]
//	resource_link         Resource link: <uri> (<name>)
//	anything else         [unsupported content type: <type>]
//
// With no content, structuredContent becomes its JSON text; beside content,
// it follows as "Structured content:\n<JSON>" unless a text part carries it
// already (structured.go). isError is kept
// in Result.IsError with the content. No content part ever fails the call;
// only a result that is not a JSON object does (ErrMalformedResult).
func MapResult(server, tool string, raw json.RawMessage) (Result, error) {
	return mapResult(server, tool, raw, defaultResultLimits, false)
}

// mapValidResult is MapResult for a result already known to be valid JSON
// (the transport validated its line).
func mapValidResult(server, tool string, raw json.RawMessage) (Result, error) {
	return mapResult(server, tool, raw, defaultResultLimits, true)
}

type resultLimits struct {
	lines, bytes, image int
}

var defaultResultLimits = resultLimits{lines: MaxResultLines, bytes: MaxResultBytes, image: MaxImageBytes}

// callResultWire is the tools/call result as sent. Each content element is
// decoded once into contentWire, whatever its type.
type callResultWire struct {
	Content           []contentWire   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

type contentWire struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`     // text
	Data     json.RawMessage `json:"data"`     // image, audio: base64
	MIMEType string          `json:"mimeType"` // image, audio, resource_link
	URI      string          `json:"uri"`      // resource_link
	Name     string          `json:"name"`     // resource_link
	Resource *resourceWire   `json:"resource"` // resource
}

type resourceWire struct {
	URI      string          `json:"uri"`
	MIMEType string          `json:"mimeType"`
	Text     *string         `json:"text"`
	Blob     json.RawMessage `json:"blob"`
}

func mapResult(server, tool string, raw json.RawMessage, lim resultLimits, valid bool) (Result, error) {
	res := Result{Server: server, Tool: tool}
	if i := jsonscan.SkipSpace(raw, 0); i == len(raw) || raw[i] != '{' {
		return res, ErrMalformedResult
	}
	w, simple := decodeSimpleResult(raw, valid)
	var err error
	if !simple {
		var full callResultWire // on the heap only on this path
		err = json.Unmarshal(raw, &full)
		w = full
	}
	if err == nil {
		res.IsError = w.IsError
		res.Content = make([]chat.Part, 0, len(w.Content))
		for i := range w.Content {
			res.Content = appendContent(res.Content, &w.Content[i], lim)
		}
		res.Content = appendStructured(res.Content, w.StructuredContent)
	} else if !mapLooseResult(&res, raw, lim) {
		return Result{Server: server, Tool: tool}, fmt.Errorf("%w: %v", ErrMalformedResult, err)
	}
	for _, c := range res.Content {
		if c.Kind == chat.ImagePart {
			res.Images++
		}
	}
	res.Content, res.Truncated = capResultText(res.Content, lim)
	return res, nil
}

// decodeSimpleResult decodes the common result — text parts, isError,
// structuredContent — without reflection, in one scan after validation
// (skipped when valid says raw is known to be valid JSON). ok is false for
// anything else (other content types, escaped keys, keys whose case
// differs from the protocol's): the caller then decodes the result in
// full, with the same outcome, only slower.
func decodeSimpleResult(raw []byte, valid bool) (w callResultWire, ok bool) {
	if !valid && !jsonscan.Valid(raw) {
		return w, false
	}
	seenContent := false
	ok = jsonscan.EachMember(raw, func(key, v []byte) bool {
		switch string(key) {
		case "content":
			// A repeated content array: encoding/json decodes the second
			// into the first one's elements, a quirk left to it.
			if seenContent {
				return false
			}
			seenContent = true
			return decodeSimpleContent(v, &w.Content)
		case "isError":
			switch string(v) {
			case "true":
				w.IsError = true
			case "false", "null":
			default:
				return false
			}
		case "structuredContent":
			w.StructuredContent = json.RawMessage(v)
		default:
			// encoding/json would match these ignoring case, or unescaped.
			return bytes.IndexByte(key, '\\') < 0 && !bytes.EqualFold(key, []byte("content")) &&
				!bytes.EqualFold(key, []byte("isError")) && !bytes.EqualFold(key, []byte("structuredContent"))
		}
		return true
	})
	return w, ok
}

// decodeSimpleContent reads a content array of text, image and audio
// parts (the members the mapper uses for them; others are skipped). v is
// valid JSON.
func decodeSimpleContent(v []byte, out *[]contentWire) bool {
	*out = nil // a repeated key replaces, as in encoding/json
	if string(v) == "null" {
		return true
	}
	if len(v) == 0 || v[0] != '[' {
		return false
	}
	parts := []contentWire{}
	i := jsonscan.SkipSpace(v, 1)
	for i < len(v) && v[i] != ']' {
		end := jsonscan.SkipValue(v, i)
		var c contentWire
		if !jsonscan.EachMember(v[i:end], func(key, val []byte) bool { return decodeSimpleMember(&c, key, val) }) {
			return false
		}
		switch c.Type {
		case "text", "image", "audio":
		default:
			return false
		}
		parts = append(parts, c)
		i = jsonscan.SkipSpace(v, end)
		if i < len(v) && v[i] == ',' {
			i = jsonscan.SkipSpace(v, i+1)
		}
	}
	*out = parts
	return true
}

// decodeSimpleMember sets the field of c that key names, as encoding/json
// would; false when only encoding/json can tell (an escaped key, one whose
// case differs, a value of an unexpected type).
func decodeSimpleMember(c *contentWire, key, val []byte) bool {
	switch string(key) {
	case "type", "text", "mimeType":
		if string(val) == "null" {
			return true // leaves the field as it is
		}
		s, ok := jsonscan.String(val)
		if !ok {
			return false
		}
		switch key[1] {
		case 'y':
			c.Type = s
		case 'e':
			c.Text = s
		default:
			c.MIMEType = s
		}
	case "data":
		c.Data = json.RawMessage(val)
	default:
		for _, known := range [...]string{"type", "text", "mimeType", "data", "uri", "name", "resource"} {
			if bytes.EqualFold(key, []byte(known)) {
				return false
			}
		}
		return bytes.IndexByte(key, '\\') < 0
	}
	return true
}

// mapLooseResult is the slow path for a result whose fields have unexpected
// types (say "resource": "x"): each content element is decoded on its own,
// and one that does not fit becomes a text note instead of failing the call.
// It reports false when raw is not a JSON object.
func mapLooseResult(res *Result, raw json.RawMessage, lim resultLimits) bool {
	var w struct {
		Content           json.RawMessage `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           json.RawMessage `json:"isError"`
	}
	if json.Unmarshal(raw, &w) != nil {
		return false
	}
	res.IsError = bytes.Equal(bytes.TrimSpace(w.IsError), []byte("true"))
	var elems []json.RawMessage
	if json.Unmarshal(w.Content, &elems) != nil {
		elems = []json.RawMessage{w.Content} // not an array: one element
	}
	res.Content = make([]chat.Part, 0, len(elems))
	for _, e := range elems {
		if e = bytes.TrimSpace(e); len(e) == 0 || bytes.Equal(e, []byte("null")) {
			continue
		}
		var c contentWire
		if err := json.Unmarshal(e, &c); err != nil {
			var t struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(e, &t) // best effort, for the note
			res.Content = append(res.Content, textContent("[invalid content: "+orMissing(t.Type)+"]"))
			continue
		}
		res.Content = appendContent(res.Content, &c, lim)
	}
	res.Content = appendStructured(res.Content, w.StructuredContent)
	return true
}

func appendContent(out []chat.Part, c *contentWire, lim resultLimits) []chat.Part {
	switch c.Type {
	case "text":
		return append(out, textContent(c.Text))
	case "image":
		return append(out, imageContent(c, lim))
	case "audio":
		p, _ := base64Payload(c.Data)
		return append(out, textContent("[audio omitted: "+mimeOrUnknown(c.MIMEType)+", "+strconv.Itoa(base64DecodedLen(p))+" bytes]"))
	case "resource":
		r := c.Resource
		switch {
		case r == nil:
			return append(out, textContent("[resource omitted: no contents]"))
		case r.Text != nil || len(r.Blob) == 0 || string(r.Blob) == "null":
			text := ""
			if r.Text != nil {
				text = *r.Text
			}
			return append(out, textContent("Resource "+r.URI+":\n"+text))
		default:
			p, _ := base64Payload(r.Blob)
			return append(out, textContent("[resource "+r.URI+": "+mimeOrUnknown(r.MIMEType)+", "+strconv.Itoa(base64DecodedLen(p))+" bytes omitted]"))
		}
	case "resource_link":
		if c.Name == "" {
			return append(out, textContent("Resource link: "+c.URI))
		}
		return append(out, textContent("Resource link: "+c.URI+" ("+c.Name+")"))
	default:
		return append(out, textContent("[unsupported content type: "+orMissing(c.Type)+"]"))
	}
}

func imageContent(c *contentWire, lim resultLimits) chat.Part {
	mime := c.MIMEType
	p, ok := base64Payload(c.Data)
	if !ok {
		return textContent("[image omitted: " + mimeOrUnknown(mime) + ", invalid base64 data]")
	}
	if n := base64DecodedLen(p); n > lim.image {
		return textContent("[image omitted: " + mimeOrUnknown(mime) + ", " + strconv.Itoa(n) + " bytes]")
	}
	data, ok := decodeBase64(p)
	if !ok {
		return textContent("[image omitted: " + mimeOrUnknown(mime) + ", invalid base64 data]")
	}
	if len(data) == 0 {
		return textContent("[image omitted: " + mimeOrUnknown(mime) + ", no data]")
	}
	if mime == "" {
		if mime = sniffImageType(data); mime == "" {
			return textContent("[image omitted: unknown type, " + strconv.Itoa(len(data)) + " bytes]")
		}
	}
	return chat.Part{Kind: chat.ImagePart, Data: data, MIMEType: mime}
}

func textContent(s string) chat.Part { return chat.Part{Kind: chat.TextPart, Text: s} }

// mimeOrUnknown names a MIME type in a note.
func mimeOrUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// orMissing names a content type in a note.
func orMissing(typ string) string {
	if typ == "" {
		return "(missing)"
	}
	return typ
}

// base64Payload returns the base64 text inside a JSON string without copying
// when it has no escapes. A missing or null value is empty; ok is false for
// a value that is not a string.
func base64Payload(raw json.RawMessage) (p []byte, ok bool) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		return nil, true
	case raw[0] != '"' || len(raw) < 2:
		return nil, false
	case bytes.IndexByte(raw, '\\') < 0:
		return raw[1 : len(raw)-1], true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// base64DecodedLen is the size p decodes to, computed from its length
// (padding and line breaks are not data).
func base64DecodedLen(p []byte) int {
	p = bytes.TrimRight(p, "=\r\n")
	n := len(p) - bytes.Count(p, []byte{'\n'}) - bytes.Count(p, []byte{'\r'})
	return n/4*3 + max(n%4-1, 0)
}

// decodeBase64 accepts padded and unpadded standard base64.
func decodeBase64(p []byte) ([]byte, bool) {
	// The unpadded length bound is the larger one and fits both attempts.
	dst := make([]byte, base64.RawStdEncoding.DecodedLen(len(p)))
	if n, err := base64.StdEncoding.Decode(dst, p); err == nil {
		return dst[:n], true
	}
	if n, err := base64.RawStdEncoding.Decode(dst, bytes.TrimRight(p, "=")); err == nil {
		return dst[:n], true
	}
	return nil, false
}

// sniffImageType recognises the image formats every provider accepts.
func sniffImageType(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// capResultText caps the joined text of the text parts (joined with "\n",
// as Result.Text joins them) at lim.lines lines and lim.bytes bytes. The
// head is kept, cut on a line boundary where that keeps at least half the
// byte budget and always on a UTF-8 boundary; text parts past the cut are
// dropped, images are kept, and a note saying what was cut is appended.
func capResultText(parts []chat.Part, lim resultLimits) ([]chat.Part, bool) {
	var size, newlines, texts int
	for _, c := range parts {
		if c.Kind == chat.TextPart {
			size += len(c.Text)
			newlines += strings.Count(c.Text, "\n")
			texts++
		}
	}
	if texts > 1 {
		size += texts - 1
		newlines += texts - 1
	}
	if size <= lim.bytes && (lim.lines <= 0 || newlines < lim.lines) {
		return parts, false
	}
	var b strings.Builder
	b.Grow(size)
	first := true
	for _, c := range parts {
		if c.Kind == chat.TextPart {
			if !first {
				b.WriteByte('\n')
			}
			first = false
			b.WriteString(c.Text)
		}
	}
	joined := b.String()
	cut := headCut(joined, lim.lines, lim.bytes)
	if cut >= len(joined) {
		return parts, false
	}
	out := make([]chat.Part, 0, len(parts)+1)
	pos := 0
	for _, c := range parts {
		if c.Kind != chat.TextPart {
			out = append(out, c)
			continue
		}
		start := pos
		pos += len(c.Text) + 1
		switch {
		case start+len(c.Text) <= cut:
			out = append(out, c)
		case start < cut:
			out = append(out, textContent(c.Text[:cut-start]))
		}
	}
	out = append(out, textContent(truncationNote(joined[:cut], joined, lim)))
	return out, true
}

// headCut returns how many bytes of s to keep under the limits.
func headCut(s string, maxLines, maxBytes int) int {
	cut := len(s)
	// The maxLines-th newline ends the last line kept, unless nothing follows.
	if i := nthNewline(s, maxLines); maxLines > 0 && i >= 0 && i < len(s)-1 {
		cut = i
	}
	if cut <= maxBytes {
		return cut
	}
	limit := maxBytes
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	if s[limit] == '\n' {
		return limit
	}
	if i := strings.LastIndexByte(s[:limit], '\n'); i >= 0 && i >= limit/2 {
		return i
	}
	return limit
}

func nthNewline(s string, n int) int {
	pos := -1
	for ; n > 0; n-- {
		i := strings.IndexByte(s[pos+1:], '\n')
		if i < 0 {
			return -1
		}
		pos += i + 1
	}
	return pos
}

func countLines(s string) int {
	n := strings.Count(s, "\n")
	if len(s) > 0 && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// truncationNote says what capResultText cut.
func truncationNote(head, all string, lim resultLimits) string {
	limit := strconv.Itoa(lim.bytes) + " bytes"
	switch {
	case lim.bytes%(1<<20) == 0:
		limit = strconv.Itoa(lim.bytes>>20) + " MB"
	case lim.bytes%1024 == 0:
		limit = strconv.Itoa(lim.bytes/1024) + " KB"
	}
	if lim.lines > 0 {
		limit = strconv.Itoa(lim.lines) + " lines / " + limit
	}
	return fmt.Sprintf("[Output truncated: showing the first %d of %d lines (%d of %d bytes); tool output is limited to %s.]",
		countLines(head), countLines(all), len(head), len(all), limit)
}
