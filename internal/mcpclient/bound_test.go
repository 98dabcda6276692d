package mcpclient

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A chat's server may replace the results folder with a symlink to
// another chat's workspace, the chat's private folder or anywhere else: a
// result over the cap is then not saved (the model is told), and nothing
// outside the workspace is written or removed.
func TestSaveResultStaysInTheWorkspace(t *testing.T) {
	for _, c := range []struct {
		name string
		link func(t *testing.T, workspace, elsewhere string) // plants the symlink
	}{
		{"results is a symlink out", func(t *testing.T, ws, out string) {
			if err := os.Symlink(out, filepath.Join(ws, ResultsDir)); err != nil {
				t.Fatal(err)
			}
		}},
		{"results is a relative symlink out", func(t *testing.T, ws, out string) {
			rel, err := filepath.Rel(ws, out)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(rel, filepath.Join(ws, ResultsDir)); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			ws := filepath.Join(base, "chats", "1", "workspace")
			out := filepath.Join(base, "chats", "2", "workspace")
			for _, d := range []string{ws, out} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			// The other chat's own saved results, more than a chat keeps.
			for i := range maxSavedResults + 5 {
				name := filepath.Join(out, fmt.Sprintf("20200101T000000.%03d-tool.txt", i))
				if err := os.WriteFile(name, []byte("theirs"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			c.link(t, ws, out)
			if got, err := saveResult(ws, "browser_snapshot", "mine"); err == nil {
				t.Errorf("saveResult through a symlink out of the workspace = %q, want an error", got)
			}
			entries, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != maxSavedResults+5 {
				t.Errorf("the other chat's folder holds %d files, want its %d untouched", len(entries), maxSavedResults+5)
			}
			for _, e := range entries {
				if b, _ := os.ReadFile(filepath.Join(out, e.Name())); string(b) != "theirs" {
					t.Errorf("%s in the other chat's folder holds %q", e.Name(), b)
				}
			}
		})
	}
}

func TestSaveResultKeepsTheNewest(t *testing.T) {
	ws := t.TempDir()
	for range maxSavedResults + 3 {
		if _, err := saveResult(ws, "t", "x"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := saveResult(ws, "t", "last")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(got))); err != nil || string(b) != "last" {
		t.Fatalf("read %s = %q, %v", got, b, err)
	}
	entries, err := os.ReadDir(filepath.Join(ws, ResultsDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != maxSavedResults {
		t.Errorf("results holds %d files, want %d", len(entries), maxSavedResults)
	}
}
