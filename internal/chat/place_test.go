package chat

import (
	"bytes"
	"log/slog"
	"testing"
)

func TestPlaceText(t *testing.T) {
	for _, tc := range []struct {
		p        Place
		str, log string
	}{
		{In(42), "42", "chat=42\n"},
		{In(-1001234), "-1001234", "chat=-1001234\n"},
		{Place{Chat: -1001234, Topic: 7}, "-1001234/7", "chat=-1001234/7\n"},
	} {
		if got := tc.p.String(); got != tc.str {
			t.Errorf("%#v.String() = %q, want %q", tc.p, got, tc.str)
		}
		var buf bytes.Buffer
		h := slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey {
				return slog.Attr{}
			}
			return a
		}})
		slog.New(h).Info("", "chat", tc.p)
		if got := buf.String(); got != tc.log {
			t.Errorf("logged %q, want %q", got, tc.log)
		}
	}
}
