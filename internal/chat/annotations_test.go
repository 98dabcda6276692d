package chat

import "testing"

func TestAnnotationsMeaning(t *testing.T) {
	yes, no := new(true), new(false)
	tests := []struct {
		a        Annotations
		readOnly bool
		text     string
	}{
		{Annotations{}, false, "The server says nothing about this tool, so: it may delete or overwrite data and talks to the outside world."},
		{Annotations{ReadOnlyHint: yes}, true, "It only reads and talks to the outside world."},
		{Annotations{ReadOnlyHint: yes, OpenWorldHint: no}, true, "It only reads."},
		{Annotations{ReadOnlyHint: no, DestructiveHint: no, OpenWorldHint: no}, false, "It adds or changes data, deletes nothing."},
		{Annotations{DestructiveHint: yes, IdempotentHint: yes, OpenWorldHint: no}, false, "It may delete or overwrite data and running it twice does no more than once."},
	}
	for _, tt := range tests {
		if got := tt.a.ReadOnly(); got != tt.readOnly {
			t.Errorf("%+v: ReadOnly %v, want %v", tt.a, got, tt.readOnly)
		}
		if got := tt.a.MeaningText(); got != tt.text {
			t.Errorf("%+v: %q, want %q", tt.a, got, tt.text)
		}
	}
}
