package main

import (
	"slices"
	"strings"
	"testing"
)

// splitShellWords against a reference: any words, quoted the POSIX way
// ('…', with ' written '\”), come back exactly; and no input makes it
// panic.
func FuzzSplitShellWords(f *testing.F) {
	for _, seed := range []string{"--device\x00iPhone 15", "a\x00\x00b", `it's`, "tab\there\x00new\nline", `back\slash`, "\"quoted\"", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = splitShellWords(s) // arbitrary text: an error at most
		words := strings.Split(s, "\x00")
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		got, err := splitShellWords(strings.Join(quoted, " "))
		if err != nil || !slices.Equal(got, words) {
			t.Fatalf("split(%q) = %q, %v; want %q", strings.Join(quoted, " "), got, err, words)
		}
	})
}
