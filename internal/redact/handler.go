package redact

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
)

// NewHandler wraps next so that every record goes through r before next sees
// it: the message, attribute keys, string values, the attributes of groups
// (nested too), attributes added with WithAttrs and group names. LogValuers
// are resolved first, so they cannot slip past. Values of kind Any are handled
// by type:
//
//   - errors and fmt.Stringers become their text (Error, String), redacted;
//   - byte slices become their text, redacted, when it holds a secret;
//   - anything else is rendered as TextHandler (%+v) and JSONHandler
//     (encoding/json) would render it, and is replaced by that text, redacted,
//     when either rendering holds a secret; otherwise it is passed on as is,
//     so that JSON output keeps its structure.
//
// Numbers, booleans, times and durations are passed on as they are. *Registry
// and *Redactor both satisfy r.
func NewHandler(next slog.Handler, r interface{ Redact(string) string }) slog.Handler {
	return &handler{next: next, r: r}
}

type handler struct {
	next slog.Handler
	r    interface{ Redact(string) string }
}

func (h *handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &handler{next: h.next.WithAttrs(red), r: h.r}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{next: h.next.WithGroup(h.r.Redact(name)), r: h.r}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	return slog.Attr{Key: h.r.Redact(a.Key), Value: h.value(a.Value)}
}

func (h *handler) value(v slog.Value) slog.Value {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindString:
		s := v.String()
		if red := h.r.Redact(s); red != s {
			return slog.StringValue(red)
		}
		return v
	case slog.KindGroup:
		group := v.Group()
		red := make([]slog.Attr, len(group))
		for i, a := range group {
			red[i] = h.attr(a)
		}
		return slog.GroupValue(red...)
	case slog.KindAny:
		return h.anyValue(v)
	default:
		return v
	}
}

func (h *handler) anyValue(v slog.Value) slog.Value {
	switch x := v.Any().(type) {
	case nil:
		return v
	case error, fmt.Stringer:
		// fmt recovers from a panicking method and prints "<nil>" for nil
		// receivers, as slog's own handlers do.
		return slog.StringValue(h.r.Redact(fmt.Sprint(x)))
	default:
		if rv := reflect.ValueOf(x); rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			s := string(rv.Bytes())
			if red := h.r.Redact(s); red != s {
				return slog.StringValue(red)
			}
			return v
		}
		s := fmt.Sprintf("%+v", x)
		if red := h.r.Redact(s); red != s {
			return slog.StringValue(red)
		}
		if j, err := json.Marshal(x); err == nil {
			if red := h.r.Redact(string(j)); red != string(j) {
				return slog.StringValue(red)
			}
		}
		return v
	}
}
