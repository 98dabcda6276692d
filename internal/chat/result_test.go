package chat

import "testing"

func TestResultText(t *testing.T) {
	r := Result{Parts: []Part{{Kind: TextPart, Text: "a"}, {Kind: ImagePart, Data: []byte{1}, MIMEType: "image/png"}, {Kind: TextPart, Text: "b"}}}
	if got := r.Text(); got != "a\nb" {
		t.Errorf("Text %q, want %q", got, "a\nb")
	}
	if e := ErrorResult("no"); !e.IsError || e.Text() != "no" {
		t.Errorf("ErrorResult: %+v", e)
	}
	if r := TextResult("yes"); r.IsError || r.Text() != "yes" {
		t.Errorf("TextResult: %+v", r)
	}
}
