package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

type upperRedactor struct{ secret string }

func (r upperRedactor) Redact(s string) string { return strings.ReplaceAll(s, r.secret, "[REDACTED]") }

func TestNewLogger(t *testing.T) {
	tests := []struct {
		level, format string
		terminal      bool
		debug, warn   bool // whether each line is written
		json, colour  bool
	}{
		{"", "", false, false, true, false, false},
		{"debug", "text", false, true, true, false, false},
		{"DEBUG", "TEXT", true, true, true, false, true},
		{"info", "json", false, false, true, true, false},
		{"info", "json", true, false, true, true, false}, // JSON is never coloured
		{"warn", "text", false, false, true, false, false},
		{"warning", "text", false, false, true, false, false},
		{"error", "json", false, false, false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.level+"/"+tt.format, func(t *testing.T) {
			var buf bytes.Buffer
			logger, err := NewLogger(&buf, tt.level, tt.format, tt.terminal, nil)
			if err != nil {
				t.Fatal(err)
			}
			logger.Debug("debug line", "k", "v")
			logger.Warn("warn line", "k", "v")
			out := buf.String()
			if got := strings.Contains(out, "debug line"); got != tt.debug {
				t.Errorf("debug written: %v, want %v\n%s", got, tt.debug, out)
			}
			if got := strings.Contains(out, "warn line"); got != tt.warn {
				t.Errorf("warn written: %v, want %v\n%s", got, tt.warn, out)
			}
			if got := strings.Contains(out, "\x1b["); got != tt.colour {
				t.Errorf("colour: %v, want %v\n%q", got, tt.colour, out)
			}
			if tt.json && out != "" {
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					var m map[string]any
					if err := json.Unmarshal([]byte(line), &m); err != nil || m["k"] != "v" {
						t.Errorf("not a JSON record: %q (%v)", line, err)
					}
				}
			}
		})
	}
}

func TestNewLoggerRefusals(t *testing.T) {
	for _, tt := range []struct{ level, format, want string }{
		{"verbose", "text", `LOG_LEVEL must be debug, info, warn or error (got "verbose")`},
		{"info", "logfmt", `LOG_FORMAT must be text or json (got "logfmt")`},
	} {
		if _, err := NewLogger(&bytes.Buffer{}, tt.level, tt.format, false, nil); err == nil || err.Error() != tt.want {
			t.Errorf("NewLogger(%q, %q) error %v, want %q", tt.level, tt.format, err, tt.want)
		}
	}
}

func TestNewLoggerRedacts(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		logger, err := NewLogger(&buf, "info", format, false, upperRedactor{"s3cret"})
		if err != nil {
			t.Fatal(err)
		}
		logger.With("component", "test").Info("token s3cret seen", "value", "x-s3cret-y")
		if out := buf.String(); strings.Contains(out, "s3cret") || !strings.Contains(out, "[REDACTED]") {
			t.Errorf("%s: not redacted: %s", format, out)
		}
	}
}

func TestParseLogLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"": slog.LevelInfo, " Info ": slog.LevelInfo, "debug": slog.LevelDebug, "WARN": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := parseLogLevel(in); err != nil || got != want {
			t.Errorf("parseLogLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

// JSON logs write durations in milliseconds, with the unit in the key.
func TestJSONLogDurationsInMilliseconds(t *testing.T) {
	var buf bytes.Buffer
	logger, err := NewLogger(&buf, "info", "json", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("done", "elapsed", 1500*time.Millisecond, slog.Group("retry", "after", 250*time.Microsecond))
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	retry, _ := got["retry"].(map[string]any)
	if got["elapsed_ms"] != 1500.0 || retry["after_ms"] != 0.25 || got["elapsed"] != nil {
		t.Errorf("log line %s", buf.String())
	}
}
