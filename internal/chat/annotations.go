package chat

import "strings"

// Annotations are a tool's behaviour hints (MCP tools/list's, 2025-03-26
// and later). A nil hint was not given, and means what the
// specification says it defaults to: not read-only, destructive,
// not idempotent, open world. They are the server's word, not a
// guarantee: approvals go by them (a tool that claims to only read runs
// without asking under approval "writes"), so trust the server or ask
// for every call.
type Annotations struct {
	ReadOnlyHint    *bool
	DestructiveHint *bool
	IdempotentHint  *bool
	OpenWorldHint   *bool
}

// ReadOnly reports whether the tool says it changes nothing
// (readOnlyHint true).
func (a Annotations) ReadOnly() bool { return is(a.ReadOnlyHint, false) }

// Declared reports whether the server gave any hint.
func (a Annotations) Declared() bool {
	return a.ReadOnlyHint != nil || a.DestructiveHint != nil || a.IdempotentHint != nil || a.OpenWorldHint != nil
}

// Meaning says in words what the hints claim the tool does, for a person
// deciding whether it may run: "only reads", or "may delete or overwrite
// data" or "adds or changes data, deletes nothing", then "talks to the
// outside world" unless it says it does not, and "running it twice does
// no more than once" when it says so. Hints a server left out take the
// specification's defaults.
func (a Annotations) Meaning() []string {
	if a.ReadOnly() {
		out := []string{"only reads"}
		if is(a.OpenWorldHint, true) {
			out = append(out, "talks to the outside world")
		}
		return out
	}
	var out []string
	if is(a.DestructiveHint, true) {
		out = append(out, "may delete or overwrite data")
	} else {
		out = append(out, "adds or changes data, deletes nothing")
	}
	if is(a.OpenWorldHint, true) {
		out = append(out, "talks to the outside world")
	}
	if is(a.IdempotentHint, false) {
		out = append(out, "running it twice does no more than once")
	}
	return out
}

// MeaningText is Meaning as one sentence: "It may delete or overwrite
// data and talks to the outside world." — said to be the defaults when
// the server declared nothing.
func (a Annotations) MeaningText() string {
	m := a.Meaning()
	s := "It " + m[0] + "."
	if len(m) > 1 {
		s = "It " + strings.Join(m[:len(m)-1], ", ") + " and " + m[len(m)-1] + "."
	}
	if !a.Declared() {
		s = "The server says nothing about this tool, so: " + strings.ToLower(s[:1]) + s[1:]
	}
	return s
}

// is is *h, or def when h is nil.
func is(h *bool, def bool) bool {
	if h == nil {
		return def
	}
	return *h
}
