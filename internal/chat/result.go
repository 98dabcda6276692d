package chat

import "strings"

// PartKind is the kind of one part of a tool's result (or of a message
// a server has the model answer: MCP sampling).
type PartKind string

const (
	TextPart  PartKind = "text"
	ImagePart PartKind = "image"
)

// Part is one part of a tool's result: a text, or an image the model sees.
type Part struct {
	Kind     PartKind
	Text     string // TextPart
	Data     []byte // ImagePart, decoded
	MIMEType string // ImagePart
}

// Result is what a tool call answers the model.
type Result struct {
	Parts []Part
	// IsError says the call failed or was refused; the parts say why.
	IsError bool
}

// TextResult is a result of one text.
func TextResult(text string) Result {
	return Result{Parts: []Part{{Kind: TextPart, Text: text}}}
}

// ErrorResult is an error result of one text, which says what went wrong
// and, where it can, what to do instead.
func ErrorResult(text string) Result {
	return Result{Parts: []Part{{Kind: TextPart, Text: text}}, IsError: true}
}

// Text joins the text parts of r, a line between each, for logs and
// tests.
func (r Result) Text() string {
	var b strings.Builder
	for _, p := range r.Parts {
		if p.Kind != TextPart {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}
