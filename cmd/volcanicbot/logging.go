package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/lmittmann/tint"

	"github.com/volcanicbot/volcanicbot/internal/redact"
)

// Log formats (LOG_FORMAT).
const (
	logFormatText = "text" // tint, coloured on a terminal
	logFormatJSON = "json" // slog.JSONHandler
)

// NewLogger builds the bot's logger: LOG_LEVEL debug, info, warn (warning)
// or error; LOG_FORMAT text (tint, coloured only when isTerminal) or json.
// Empty values mean info and text. When redactor is not nil every record
// goes through redact.NewHandler before it is written.
func NewLogger(w io.Writer, level, format string, isTerminal bool, redactor interface{ Redact(string) string }) (*slog.Logger, error) {
	lvl, err := parseLogLevel(level)
	if err != nil {
		return nil, err
	}
	var h slog.Handler
	switch f, err := parseLogFormat(format); {
	case err != nil:
		return nil, err
	case f == logFormatJSON:
		h = slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl, ReplaceAttr: durationsInMilliseconds})
	default:
		h = tint.NewTextHandler(w, &tint.Options{Level: lvl, TimeFormat: time.DateTime, NoColor: !isTerminal})
	}
	if redactor != nil {
		h = redact.NewHandler(h, redactor)
	}
	return slog.New(h), nil
}

// durationsInMilliseconds writes a duration attribute the way people and
// log tools read it: milliseconds, with the unit in the key ("elapsed":
// 1.5 s becomes "elapsed_ms": 1500), instead of encoding/json's
// nanoseconds.
func durationsInMilliseconds(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	ms := float64(a.Value.Duration().Microseconds()) / 1000
	return slog.Float64(a.Key+"_ms", ms)
}

// parseLogLevel maps LOG_LEVEL to a slog level; "" is info.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("LOG_LEVEL must be debug, info, warn or error (got %q)", s)
}

// parseLogFormat normalises LOG_FORMAT; "" is text.
func parseLogFormat(s string) (string, error) {
	switch f := strings.ToLower(strings.TrimSpace(s)); f {
	case "", logFormatText:
		return logFormatText, nil
	case logFormatJSON:
		return f, nil
	}
	return "", fmt.Errorf("LOG_FORMAT must be text or json (got %q)", s)
}
