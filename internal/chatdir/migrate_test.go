package chatdir

import (
	"cmp"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// tree is a folder's files, by slash path relative to it, with their
// contents ("->target" for a symlink, "/" for an empty folder).
type tree map[string]string

func writeTree(t *testing.T, root string, files tree) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case content == "/":
			err = os.MkdirAll(p, 0o700)
		case strings.HasPrefix(content, "->"):
			err = os.Symlink(strings.TrimPrefix(content, "->"), p)
		default:
			err = os.WriteFile(p, []byte(content), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func readTree(t *testing.T, root string) tree {
	t.Helper()
	got := tree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			got[rel] = "->" + target
		case d.IsDir():
			if entries, _ := os.ReadDir(p); len(entries) == 0 {
				got[rel] = "/"
			}
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			got[rel] = string(b)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return got
}

// sameTree compares a data directory with want, the migration's mark left
// out of both.
func sameTree(t *testing.T, what string, got, want tree) {
	t.Helper()
	delete(got, "private/"+migratedMark)
	want = maps.Clone(want)
	delete(want, "private/"+migratedMark)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is there, want it not", what, k)
		}
	}
}

var noOwner = func(string) error { return nil }

// An old data directory: each chat's .volcanic/ moves whole into its
// private folder, and the workspace keeps only the chat's files.
func TestMigrateMovesTheOldFolder(t *testing.T) {
	data := t.TempDir()
	writeTree(t, data, tree{
		"chats/42/.volcanic/transcript.jsonl":                  `{"role":"user"}` + "\n",
		"chats/42/.volcanic/transcript-20260101T000000Z.jsonl": "archived\n",
		"chats/42/.volcanic/images/ab.png":                     "png",
		"chats/42/.volcanic/turn":                              "",
		"chats/42/.volcanic/browser-state.json":                `{"cookies":[],"origins":[]}`,
		"chats/42/.volcanic/browser-profile/Default/Cookies":   "sqlite",
		"chats/42/.volcanic/browser-profile/SingletonLock":     "->host-123",
		"chats/42/uploads/photo.jpg":                           "jpg",
		"chats/42/browser/shot.png":                            "shot",
		"chats/-100123/.volcanic/transcript.jsonl":             "group\n",
		"chats/7/notes.txt":                                    "no private state yet",
		"chats/not-a-chat/.volcanic/transcript.jsonl":          "left alone",
		"chats/9/.volcanic":                                    "->/etc",
		"inbox/journal.jsonl":                                  "untouched",
	})
	l := New(data)
	if got := l.WithPrivate("browser-profile"); len(got) != 1 || got[0] != filepath.Join(data, "chats/42/.volcanic/browser-profile") {
		t.Errorf("WithPrivate before the migration: %q, want the old place seen", got)
	}
	m, err := l.Migrate(noOwner)
	if err != nil {
		t.Fatal(err)
	}
	if m.Chats != 2 || len(m.Kept) != 0 || len(m.Skipped) != 1 || m.Skipped[0] != filepath.Join(data, "chats/9/.volcanic") {
		t.Errorf("migration %+v, want 2 chats and chat 9's symlink skipped", m)
	}
	sameTree(t, "data", readTree(t, data), tree{
		"private/42/transcript.jsonl":                  `{"role":"user"}` + "\n",
		"private/42/transcript-20260101T000000Z.jsonl": "archived\n",
		"private/42/images/ab.png":                     "png",
		"private/42/turn":                              "",
		"private/42/browser-state.json":                `{"cookies":[],"origins":[]}`,
		"private/42/browser-profile/Default/Cookies":   "sqlite",
		"private/42/browser-profile/SingletonLock":     "->host-123",
		"chats/42/uploads/photo.jpg":                   "jpg",
		"chats/42/browser/shot.png":                    "shot",
		"private/-100123/transcript.jsonl":             "group\n",
		"chats/-100123":                                "/",
		"chats/7/notes.txt":                            "no private state yet",
		"chats/not-a-chat/.volcanic/transcript.jsonl":  "left alone",
		"chats/9/.volcanic":                            "->/etc",
		"inbox/journal.jsonl":                          "untouched",
	})
	for _, dir := range []string{"private", "private/42"} {
		if fi, err := os.Stat(filepath.Join(data, dir)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v (%v), want a 0700 folder", dir, fi.Mode(), err)
		}
	}
	if got := l.WithPrivate("browser-profile"); len(got) != 1 || got[0] != filepath.Join(data, "private/42/browser-profile") || len(l.WithPrivate("nothing")) != 0 {
		t.Errorf("WithPrivate after the migration: %q", got)
	}
	ids, err := l.PrivateChats()
	slices.SortFunc(ids, func(a, b chat.Place) int { return cmp.Compare(a.Chat, b.Chat) })
	if err != nil || !slices.Equal(ids, []chat.Place{chat.In(-100123), chat.In(42)}) {
		t.Errorf("PrivateChats = %v (%v)", ids, err)
	}

	// Again, after a chat's tool made a .volcanic/ of its own in its
	// workspace (a screenshot saved there): nothing is taken from it, and
	// it is not taken for the bot's.
	writeTree(t, data, tree{
		"chats/42/.volcanic/browser-state.json":         `{"cookies":[{"name":"planted"}],"origins":[]}`,
		"chats/7/.volcanic/planted-profile/Preferences": "planted",
	})
	before := readTree(t, data)
	if m, err := l.Migrate(noOwner); err != nil || m.Chats != 0 {
		t.Errorf("a second migration: %+v (%v), want nothing done", m, err)
	}
	sameTree(t, "data after a second migration", readTree(t, data), before)
	if got := l.WithPrivate("planted-profile"); len(got) != 0 {
		t.Errorf("WithPrivate looks in the workspaces after the migration: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(data, "private", migratedMark)); len(b) == 0 {
		t.Error("no mark of the migration")
	}
}

// A start killed in the middle of the migration, then started again:
// nothing is lost. The kill is an owner function that fails (Migrate
// stops where a kill would: nothing after it runs), at every point it is
// called; and a chat whose folder was half moved by hand.
func TestMigrateCutShortThenAgain(t *testing.T) {
	old := tree{
		"chats/1/.volcanic/transcript.jsonl":   "one\n",
		"chats/1/.volcanic/images/a.png":       "a",
		"chats/2/.volcanic/transcript.jsonl":   "two\n",
		"chats/2/.volcanic/turn":               "",
		"chats/3/.volcanic/browser-state.json": "{}",
	}
	want := tree{
		"private/1/transcript.jsonl":   "one\n",
		"private/1/images/a.png":       "a",
		"private/2/transcript.jsonl":   "two\n",
		"private/2/turn":               "",
		"private/3/browser-state.json": "{}",
		"chats/1":                      "/", "chats/2": "/", "chats/3": "/",
	}
	for cut := 1; cut <= 6; cut++ { // private/ and private/<id>, for each chat
		data := t.TempDir()
		writeTree(t, data, old)
		calls := 0
		killed := errors.New("killed")
		_, err := New(data).Migrate(func(string) error {
			calls++
			if calls == cut {
				return killed
			}
			return nil
		})
		if !errors.Is(err, killed) {
			t.Fatalf("cut at %d: %v, want the kill", cut, err)
		}
		if _, err := New(data).Migrate(noOwner); err != nil {
			t.Fatalf("cut at %d, then again: %v", cut, err)
		}
		sameTree(t, "after a cut migration", readTree(t, data), want)
	}

	data := t.TempDir()
	writeTree(t, data, tree{
		"private/1/transcript.jsonl":     "one\n", // moved before the kill
		"chats/1/.volcanic/images/a.png": "a",     // not yet
	})
	if _, err := New(data).Migrate(noOwner); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "a half-moved chat", readTree(t, data), tree{"private/1/transcript.jsonl": "one\n", "private/1/images/a.png": "a", "chats/1": "/"})
}

// An entry of the old folder whose name the private folder holds already
// (an older version ran after a newer one) is kept beside it.
func TestMigrateKeepsBoth(t *testing.T) {
	data := t.TempDir()
	writeTree(t, data, tree{
		"private/5/transcript.jsonl":         "newer layout\n",
		"chats/5/.volcanic/transcript.jsonl": "older version ran since\n",
	})
	m, err := New(data).Migrate(noOwner)
	if err != nil {
		t.Fatal(err)
	}
	got := readTree(t, data)
	delete(got, "private/"+migratedMark)
	if len(m.Kept) != 1 || got[strings.TrimPrefix(filepath.ToSlash(m.Kept[0]), filepath.ToSlash(data)+"/")] != "older version ran since\n" ||
		got["private/5/transcript.jsonl"] != "newer layout\n" || len(got) != 3 {
		t.Errorf("kept %v, tree %v", m.Kept, got)
	}
}

func TestMigrateEmptyDataDir(t *testing.T) {
	if m, err := New(filepath.Join(t.TempDir(), "none")).Migrate(noOwner); err != nil || m.Chats != 0 {
		t.Errorf("%+v %v", m, err)
	}
	if ids, err := New(t.TempDir()).PrivateChats(); err != nil || len(ids) != 0 {
		t.Errorf("%v %v", ids, err)
	}
}

func TestKeys(t *testing.T) {
	l := New("/data")
	for _, tc := range []struct {
		p                  chat.Place
		workspace, private string
	}{
		// A chat without topics, and a forum's General topic: the folders
		// they had before topics were conversations.
		{chat.In(-100123), "/data/chats/-100123", "/data/private/-100123"},
		{chat.In(42), "/data/chats/42", "/data/private/42"},
		// A topic: siblings of its chat's folders.
		{chat.Place{Chat: -100123, Topic: 7}, "/data/chats/-100123_t7", "/data/private/-100123_t7"},
		{chat.Place{Chat: 42, Topic: 3}, "/data/chats/42_t3", "/data/private/42_t3"},
	} {
		if got := l.Workspace(tc.p); got != tc.workspace {
			t.Errorf("Workspace(%v) = %s, want %s", tc.p, got, tc.workspace)
		}
		if got := l.Private(tc.p); got != tc.private {
			t.Errorf("Private(%v) = %s, want %s", tc.p, got, tc.private)
		}
		if got, ok := parseKey(filepath.Base(tc.private)); !ok || got != tc.p {
			t.Errorf("parseKey(%s) = %v %v, want %v", filepath.Base(tc.private), got, ok, tc.p)
		}
	}
	for _, name := range []string{"", "+42", "042", "x", "1.5", ".volcanic", "42_t", "42_t0", "42_t-3", "42_t03", "42_t3_t4", "_t3", "42_x3", "42_t+3"} {
		if _, ok := parseKey(name); ok {
			t.Errorf("%q taken for a chat", name)
		}
	}
}

// TestPrivateChatsListsTopics: a restart finds the topics' private folders
// (their running turns are resumed) beside the chats', and nothing else.
func TestPrivateChatsListsTopics(t *testing.T) {
	data := t.TempDir()
	writeTree(t, data, tree{"private/42/transcript.jsonl": "", "private/-100123_t7/transcript.jsonl": "",
		"private/-100123/x": "", "private/42_t0/": "/", "private/notes/": "/", "private/7_t3": "a file"})
	got, err := New(data).PrivateChats()
	slices.SortFunc(got, func(a, b chat.Place) int { return cmp.Or(cmp.Compare(a.Chat, b.Chat), cmp.Compare(a.Topic, b.Topic)) })
	want := []chat.Place{chat.In(-100123), {Chat: -100123, Topic: 7}, chat.In(42)}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("PrivateChats = %v (%v), want %v", got, err, want)
	}
}
