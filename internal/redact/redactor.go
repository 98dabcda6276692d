package redact

import (
	"cmp"
	"slices"
	"strings"
)

// Placeholder replaces every occurrence of a known secret.
const Placeholder = "[REDACTED]"

// maxWindow caps the window of the matcher so that shifts fit in a byte.
const maxWindow = 255

// Redactor is an immutable matcher for a fixed set of secrets. It is safe for
// concurrent use; the nil *Redactor redacts nothing.
//
// Matching is leftmost-longest and non-overlapping: the text is scanned from
// the start, at the first position where some secret occurs the longest secret
// occurring there is replaced, and the scan resumes after it. So with secrets
// "abcdefgh" and "abcdefghij", "abcdefghij" becomes one [Placeholder]; with
// "aaaabbbb" and "bbbbcccc", "aaaabbbbcccc" becomes "[REDACTED]cccc". No
// secret then lies wholly inside the text left between two placeholders: an
// occurrence of a secret in the output always overlaps a placeholder.
//
// Matching is on bytes, so secrets may hold any characters (regular
// expression metacharacters mean nothing here); valid UTF-8 secrets only ever
// match whole characters of valid UTF-8 text.
//
// The scan is a Wu–Manber search: a window as long as the shortest secret
// (capped at 255 bytes) slides over the text, and a table indexed by the
// window's last two bytes says how far it may jump, which is usually the
// window's length less one. Candidates are verified only where the table
// says a secret's prefix may end.
type Redactor struct {
	window int                 // m: length of the shortest secret, capped at maxWindow; 0 when empty
	block  int                 // B: 2, or 1 when the window is one byte
	shift  []uint8             // safe jump for each block value
	cands  map[uint16][]string // secrets by the block ending their window prefix, longest first
}

// NewRedactor compiles a matcher for secrets. Empty strings and duplicates
// are ignored; no minimum length is applied here ([Registry.Add] applies
// [MinSecretLen]).
func NewRedactor(secrets []string) *Redactor {
	set := make([]string, 0, len(secrets))
	for _, s := range secrets {
		if s != "" {
			set = append(set, s)
		}
	}
	slices.Sort(set)
	set = slices.Compact(set)
	r := &Redactor{}
	if len(set) == 0 {
		return r
	}
	m := maxWindow
	for _, s := range set {
		m = min(m, len(s))
	}
	b := min(2, m)
	r.window, r.block = m, b
	r.shift = make([]uint8, 1<<(8*b))
	for i := range r.shift {
		r.shift[i] = uint8(m - b + 1)
	}
	r.cands = make(map[uint16][]string)
	for _, s := range set {
		// Every block of the window prefix s[:m]; the one ending at
		// q may be followed by m-1-q more bytes of the window.
		for q := b - 1; q < m; q++ {
			k := blockKey(s, q, b)
			r.shift[k] = min(r.shift[k], uint8(m-1-q))
		}
		k := blockKey(s, m-1, b)
		r.cands[k] = append(r.cands[k], s)
	}
	for _, c := range r.cands {
		slices.SortFunc(c, func(x, y string) int { return cmp.Compare(len(y), len(x)) })
	}
	return r
}

// blockKey is the block of s ending at end: one or two bytes.
func blockKey(s string, end, b int) uint16 {
	if b == 1 {
		return uint16(s[end])
	}
	return uint16(s[end-1])<<8 | uint16(s[end])
}

// Redact returns s with every occurrence of every secret replaced by
// [Placeholder]. When nothing matches it returns s itself, without
// allocating.
func (r *Redactor) Redact(s string) string {
	if r == nil || r.window == 0 {
		return s
	}
	start, end := find(r, s, 0)
	if start < 0 {
		return s
	}
	var out strings.Builder
	out.Grow(len(s))
	last := 0
	for start >= 0 {
		out.WriteString(s[last:start])
		out.WriteString(Placeholder)
		last = end
		start, end = find(r, s, end)
	}
	out.WriteString(s[last:])
	return out.String()
}

// RedactBytes is [Redactor.Redact] for bytes. When nothing matches it returns
// b itself; otherwise it returns a new slice and leaves b unchanged.
func (r *Redactor) RedactBytes(b []byte) []byte {
	if r == nil || r.window == 0 {
		return b
	}
	start, end := find(r, b, 0)
	if start < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+len(Placeholder))
	last := 0
	for start >= 0 {
		out = append(out, b[last:start]...)
		out = append(out, Placeholder...)
		last = end
		start, end = find(r, b, end)
	}
	return append(out, b[last:]...)
}

// find returns the bounds of the leftmost-longest occurrence of a secret in
// s[from:], or -1, -1.
func find[T ~string | ~[]byte](r *Redactor, s T, from int) (start, end int) {
	m, n := r.window, len(s)
	if r.block == 1 {
		for i := from; i < n; i++ {
			if r.shift[s[i]] == 0 {
				if e := verify(r, s, i, uint16(s[i])); e >= 0 {
					return i, e
				}
			}
		}
		return -1, -1
	}
	shift := r.shift
	for i := from + m - 1; i < n; {
		k := uint16(s[i-1])<<8 | uint16(s[i])
		if d := shift[k]; d != 0 {
			i += int(d)
			continue
		}
		if e := verify(r, s, i-m+1, k); e >= 0 {
			return i - m + 1, e
		}
		i++
	}
	return -1, -1
}

// verify returns the end of the longest secret occurring at p among the
// candidates of block k, or -1.
func verify[T ~string | ~[]byte](r *Redactor, s T, p int, k uint16) int {
	for _, c := range r.cands[k] {
		if len(c) <= len(s)-p && string(s[p:p+len(c)]) == c {
			return p + len(c)
		}
	}
	return -1
}
