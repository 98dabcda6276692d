package redact

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// MinSecretLen is the length, in characters, below which a value is not
// treated as a secret. Shorter values ("true", "8080", "prod") are too common
// in ordinary text: redacting them would garble output and, by the holes it
// leaves, give the value away anyway.
const MinSecretLen = 8

// Registry is the concurrency-safe set of known secret values. Redaction reads
// an immutable [Redactor] snapshot through an atomic pointer, so it takes no
// lock; [Registry.Add] rebuilds the snapshot when the set changes. The zero
// value is an empty registry, and the nil *Registry redacts nothing.
type Registry struct {
	mu     sync.Mutex // serialises Add
	values map[string]struct{}
	snap   atomic.Pointer[Redactor]
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{}
}

// Add registers secret values. A value shorter than [MinSecretLen] characters
// or made only of white space is ignored. With each value Add also registers
// the forms in which it commonly reappears, when they differ and are long
// enough: the value without surrounding white space (a token read from a file
// with its newline) and its escaped form inside a JSON string (a key with
// newlines or quotes echoed in a tool's JSON output).
func (r *Registry) Add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := false
	for _, v := range values {
		for _, form := range secretForms(v) {
			if _, ok := r.values[form]; ok {
				continue
			}
			if r.values == nil {
				r.values = make(map[string]struct{})
			}
			r.values[form] = struct{}{}
			changed = true
		}
	}
	if changed {
		r.snap.Store(NewRedactor(slices.Collect(maps.Keys(r.values))))
	}
}

// Len returns the number of values registered, forms included.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.values)
}

// Redactor returns the current snapshot: later calls to Add do not change it.
// It is nil (and redacts nothing) while the registry is empty.
func (r *Registry) Redactor() *Redactor {
	if r == nil {
		return nil
	}
	return r.snap.Load()
}

// Redact returns s with every registered value replaced by [Placeholder], or
// s itself, without allocating, when none occurs.
func (r *Registry) Redact(s string) string {
	return r.Redactor().Redact(s)
}

// RedactBytes is [Registry.Redact] for bytes; see [Redactor.RedactBytes].
func (r *Registry) RedactBytes(b []byte) []byte {
	return r.Redactor().RedactBytes(b)
}

// registrable reports whether v is long enough, and not blank, to be a secret.
func registrable(v string) bool {
	return utf8.RuneCountInString(v) >= MinSecretLen && strings.TrimSpace(v) != ""
}

// secretForms returns v and the forms it commonly reappears in, each
// registrable, without duplicates.
func secretForms(v string) []string {
	var forms []string
	add := func(s string) {
		if registrable(s) && !slices.Contains(forms, s) {
			forms = append(forms, s)
		}
	}
	for _, s := range []string{v, strings.TrimSpace(v)} {
		if !registrable(s) {
			continue
		}
		add(s)
		add(jsonEscape(s, false))
		add(jsonEscape(s, true))
	}
	// A multi-line secret (a PEM key) reappears line by line: in a server's
	// stderr, which is logged one line at a time.
	if strings.ContainsAny(v, "\r\n") {
		for line := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
			add(strings.TrimSpace(line))
		}
	}
	return forms
}

// jsonEscape returns s as encoding/json writes it inside a string, without the
// quotes.
func jsonEscape(s string, escapeHTML bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		return s // a string always encodes
	}
	q := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	return string(q[1 : len(q)-1])
}
