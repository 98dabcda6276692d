package redact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

const testSecret = "ghp_handlersecret123"

type stringer struct{ token string }

func (s stringer) String() string { return "stringer(" + s.token + ")" }

type valuer struct{ token string }

func (v valuer) LogValue() slog.Value { return slog.StringValue("valuer " + v.token) }

type config struct {
	Name  string
	Token string
}

type marshaler struct{}

func (marshaler) MarshalJSON() ([]byte, error) { return []byte(`{"t":"` + testSecret + `"}`), nil }

type rawBytes []byte

// newJSONLogger returns a logger writing JSON through the redacting handler.
func newJSONLogger(buf *bytes.Buffer) *slog.Logger {
	reg := NewRegistry()
	reg.Add(testSecret)
	next := slog.NewJSONHandler(buf, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	})
	return slog.New(NewHandler(next, reg))
}

func TestHandlerJSON(t *testing.T) {
	nilStringer := (*stringerPtr)(nil)
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want string // the JSON line, without the time
	}{
		{"message", func(l *slog.Logger) { l.Info("token is " + testSecret) },
			`{"level":"INFO","msg":"token is [REDACTED]"}`},
		{"string attr", func(l *slog.Logger) { l.Info("m", "token", testSecret) },
			`{"level":"INFO","msg":"m","token":"[REDACTED]"}`},
		{"key", func(l *slog.Logger) { l.Info("m", testSecret, 1) },
			`{"level":"INFO","msg":"m","[REDACTED]":1}`},
		{"error attr", func(l *slog.Logger) {
			l.Error("m", "err", fmt.Errorf("start github: %w", errors.New("bad token "+testSecret)))
		}, `{"level":"ERROR","msg":"m","err":"start github: bad token [REDACTED]"}`},
		{"error without secret", func(l *slog.Logger) { l.Error("m", "err", errors.New("plain")) },
			`{"level":"ERROR","msg":"m","err":"plain"}`},
		{"stringer", func(l *slog.Logger) { l.Info("m", "s", stringer{testSecret}) },
			`{"level":"INFO","msg":"m","s":"stringer([REDACTED])"}`},
		{"nil stringer", func(l *slog.Logger) { l.Info("m", "s", nilStringer) },
			`{"level":"INFO","msg":"m","s":"<nil>"}`},
		{"log valuer", func(l *slog.Logger) { l.Info("m", "v", valuer{testSecret}) },
			`{"level":"INFO","msg":"m","v":"valuer [REDACTED]"}`},
		{"group", func(l *slog.Logger) {
			l.Info("m", slog.Group("server", "name", "github", slog.Group("env", "GITHUB_TOKEN", testSecret)))
		}, `{"level":"INFO","msg":"m","server":{"name":"github","env":{"GITHUB_TOKEN":"[REDACTED]"}}}`},
		{"with attrs", func(l *slog.Logger) { l.With("token", testSecret).Info("m") },
			`{"level":"INFO","msg":"m","token":"[REDACTED]"}`},
		{"with group", func(l *slog.Logger) { l.WithGroup("mcp").With("a", testSecret).Info("m", "b", testSecret) },
			`{"level":"INFO","msg":"m","mcp":{"a":"[REDACTED]","b":"[REDACTED]"}}`},
		{"bytes", func(l *slog.Logger) { l.Info("m", "b", []byte("x "+testSecret)) },
			`{"level":"INFO","msg":"m","b":"x [REDACTED]"}`},
		{"named bytes", func(l *slog.Logger) { l.Info("m", "b", rawBytes(testSecret)) },
			`{"level":"INFO","msg":"m","b":"[REDACTED]"}`},
		{"struct with secret", func(l *slog.Logger) { l.Info("m", "cfg", config{"gh", testSecret}) },
			`{"level":"INFO","msg":"m","cfg":"{Name:gh Token:[REDACTED]}"}`},
		{"struct without secret keeps its structure", func(l *slog.Logger) { l.Info("m", "cfg", config{"gh", "none"}) },
			`{"level":"INFO","msg":"m","cfg":{"Name":"gh","Token":"none"}}`},
		{"json marshaler", func(l *slog.Logger) { l.Info("m", "j", marshaler{}) },
			`{"level":"INFO","msg":"m","j":"{\"t\":\"[REDACTED]\"}"}`},
		{"other kinds pass", func(l *slog.Logger) {
			l.Info("m", "n", 42, "ok", true, "d", time.Second, "nil", nil)
		}, `{"level":"INFO","msg":"m","n":42,"ok":true,"d":1000000000,"nil":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(newJSONLogger(&buf))
			got := strings.TrimSpace(buf.String())
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("not JSON: %s", got)
			}
			if strings.Contains(got, testSecret) {
				t.Errorf("secret leaked: %s", got)
			}
		})
	}
}

type stringerPtr struct{ s string }

func (p *stringerPtr) String() string { return p.s }

func TestHandlerText(t *testing.T) {
	reg := NewRegistry()
	reg.Add(testSecret)
	var buf bytes.Buffer
	l := slog.New(NewHandler(slog.NewTextHandler(&buf, nil), reg))
	l.With("component", "mcp").Warn("github mcp: "+testSecret, "line", "auth "+testSecret)
	out := buf.String()
	if strings.Contains(out, testSecret) || strings.Count(out, Placeholder) != 2 {
		t.Errorf("text output: %s", out)
	}
}

func TestHandlerEnabled(t *testing.T) {
	next := slog.NewJSONHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn})
	h := NewHandler(next, NewRegistry())
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelError) {
		t.Error("Enabled does not follow the wrapped handler")
	}
}

func TestHandlerAcceptsRedactor(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil), NewRedactor([]string{testSecret})))
	l.Info(testSecret)
	if strings.Contains(buf.String(), testSecret) {
		t.Errorf("secret leaked: %s", buf.String())
	}
}
