package chatdir

import (
	"path/filepath"
	"slices"
	"testing"
)

// After the migration, a version from before it (a rollback) writes a
// chat's transcript and browser state into <workspace>/.volcanic/ again,
// where the chat's tools can read them. Leftovers names those folders, for
// the start to warn about; a .volcanic/ with none of the bot's files (a
// tool's own) or one that is not a real folder (a symlink) is the chat's.
func TestLeftoversAfterARollback(t *testing.T) {
	data := t.TempDir()
	l := New(data)
	writeTree(t, data, tree{"chats/1/.volcanic/transcript.jsonl": "old"})
	if _, err := l.Migrate(noOwner); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Leftovers(); err != nil || len(got) != 0 {
		t.Fatalf("right after the migration: %q, %v; want none", got, err)
	}
	writeTree(t, data, tree{
		"chats/1/.volcanic/transcript.jsonl":          "the rollback's conversation",
		"chats/2/.volcanic/browser-state.json":        `{"cookies":[]}`,
		"chats/3/.volcanic/notes.txt":                 "a tool's own file",
		"chats/4/.volcanic":                           "->../../private/4",
		"chats/5/report.txt":                          "no .volcanic at all",
		"chats/not-a-chat/.volcanic/transcript.jsonl": "not a chat's folder",
	})
	got, err := l.Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(data, "chats/1/.volcanic"), filepath.Join(data, "chats/2/.volcanic")}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("leftovers %q, want %q", got, want)
	}
}
