package disk

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// A writer of the chat's workspace (a server) may plant symlinks there,
// and swap a folder for one at any moment. Whatever it does, the tracker
// measures, removes and empties nothing outside the source's folders: not
// the chat's private folder beside the workspace, nor the user's uploads
// in the workspace.

// lured are the names of the files a prune must never reach, which a
// writer would give its own files to lure it there.
var lured = []string{"browser-profile/Default/Cookies", "images/a.png", "secret.log", "transcript.jsonl"}

// chatFolders makes a workspace holding uploads/ and, beside it, a private
// folder, both holding the lured files.
func chatFolders(t *testing.T) (ws, private string) {
	t.Helper()
	data := t.TempDir()
	ws, private = filepath.Join(data, "chats", "1"), filepath.Join(data, "private", "1")
	for _, name := range lured {
		write(t, private, name, 100, at(0))
		write(t, filepath.Join(ws, "uploads"), name, 100, at(0))
	}
	return ws, private
}

// intact fails t unless dir holds the lured files, each whole.
func intact(t *testing.T, dir string) {
	t.Helper()
	if got := names(t, dir); !slices.Equal(got, lured) {
		t.Errorf("%s holds %q, want %q", dir, got, lured)
	}
	for _, name := range lured {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() != 100 {
			t.Errorf("%s was emptied: %v", name, err)
		}
	}
}

// lure fills dir with files named as the private folder's, over the
// budget.
func lure(t *testing.T, dir string) {
	t.Helper()
	for i, name := range lured {
		write(t, dir, name, 100, at(i+1))
	}
}

func TestPruneFollowsNoSymlinkOut(t *testing.T) {
	tests := []struct {
		name string
		// plant makes the workspace's out/ before the first measure;
		// swap, when set, changes it as the prune opens it.
		plant func(t *testing.T, ws, private string)
		swap  func(t *testing.T, ws, private string)
		dir   string // the source's folder, relative to the workspace
		files int    // measured before the swap
	}{
		{name: "the source folder is a symlink to the private folder", dir: "out",
			plant: func(t *testing.T, ws, private string) { symlink(t, "../../private/1", filepath.Join(ws, "out")) }},
		{name: "the source folder is a symlink to the uploads", dir: "out",
			plant: func(t *testing.T, ws, private string) { symlink(t, "uploads", filepath.Join(ws, "out")) }},
		{name: "a folder above the source is a symlink", dir: "a/browser-profile",
			plant: func(t *testing.T, ws, private string) { symlink(t, private, filepath.Join(ws, "a")) }},
		{name: "a folder above the source is a symlink to the uploads", dir: "a/browser-profile",
			plant: func(t *testing.T, ws, private string) { symlink(t, "uploads", filepath.Join(ws, "a")) }},
		{name: "a subfolder of the source is a symlink", dir: "out", files: 1,
			plant: func(t *testing.T, ws, private string) {
				write(t, ws, "out/page.yml", 10, at(9))
				symlink(t, private, filepath.Join(ws, "out", "sub"))
			}},
		{name: "files of the source are symlinks", dir: "out", files: 1,
			plant: func(t *testing.T, ws, private string) {
				write(t, ws, "out/page.yml", 10, at(9))
				for _, name := range []string{"secret.log", "transcript.jsonl"} {
					symlink(t, filepath.Join(private, name), filepath.Join(ws, "out", name))
				}
			}},
		{name: "the source folder is swapped for a symlink as it is opened", dir: "out", files: 4,
			plant: func(t *testing.T, ws, private string) { lure(t, filepath.Join(ws, "out")) },
			swap:  func(t *testing.T, ws, private string) { swapFor(t, filepath.Join(ws, "out"), private) }},
		{name: "the source folder is swapped for a symlink to the uploads as it is opened", dir: "out", files: 4,
			plant: func(t *testing.T, ws, private string) { lure(t, filepath.Join(ws, "out")) },
			swap:  func(t *testing.T, ws, private string) { swapFor(t, filepath.Join(ws, "out"), "uploads") }},
		{name: "a folder above the source is swapped for a symlink as it is opened", dir: "a/browser-profile", files: 1,
			plant: func(t *testing.T, ws, private string) { lure(t, filepath.Join(ws, "a")) },
			swap:  func(t *testing.T, ws, private string) { swapFor(t, filepath.Join(ws, "a"), "uploads") }},
		{name: "a subfolder is swapped for a symlink as it is opened", dir: "out", files: 4,
			plant: func(t *testing.T, ws, private string) { lure(t, filepath.Join(ws, "out", "browser-profile")) },
			swap: func(t *testing.T, ws, private string) {
				sub := filepath.Join(ws, "out", "browser-profile")
				if err := os.RemoveAll(sub); err != nil {
					t.Fatal(err)
				}
				symlink(t, filepath.Join(private, "browser-profile"), sub)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, private := chatFolders(t)
			tt.plant(t, ws, private)
			tr := New(Options{Budget: 50, Now: testkit.NewClock(at(10)).Now, Sources: []Source{{Kind: "out", Base: ws,
				Dir: filepath.Join(ws, filepath.FromSlash(tt.dir)), Deep: true, Log: isLog, Writer: "w"}}})
			if u := tr.Measure(); u.Files != tt.files {
				t.Errorf("measured %d files, want %d: only the source's own count", u.Files, tt.files)
			}
			if tt.swap != nil {
				swapped := false
				tr.beforeOpen = func(string) {
					if !swapped {
						swapped = true
						tt.swap(t, ws, private)
					}
				}
			}
			tr.Growth()
			tr.Enforce()
			tr.CutLogs("w")
			intact(t, private)
			intact(t, filepath.Join(ws, "uploads"))
		})
	}
}

// swapFor moves the folder dir aside and puts a symlink to target in its
// place.
func swapFor(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	symlink(t, target, dir)
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// A source is measured and pruned from its base: the base itself, a
// folder right under it, or one deeper through real folders; never a
// folder outside its base.
func TestSourceBase(t *testing.T) {
	tests := []struct {
		name      string
		base, dir string // relative to a temporary folder
		want      []string
	}{
		{name: "the base itself", base: "private", dir: "private", want: []string{"b.jsonl"}},
		{name: "right under the base", base: "ws", dir: "ws/out", want: []string{"b.jsonl"}},
		{name: "under real folders", base: "ws", dir: "ws/a/b/out", want: []string{"b.jsonl"}},
		{name: "outside the base", base: "ws", dir: "private", want: []string{"a.jsonl", "b.jsonl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, filepath.FromSlash(tt.dir))
			write(t, dir, "a.jsonl", 100, at(1))
			write(t, dir, "b.jsonl", 100, at(2))
			if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(tt.base)), 0o700); err != nil {
				t.Fatal(err)
			}
			tr := New(Options{Budget: 150, Now: testkit.NewClock(at(10)).Now, Sources: []Source{{Kind: "x",
				Base: filepath.Join(root, filepath.FromSlash(tt.base)), Dir: dir}}})
			tr.Enforce()
			if got := names(t, dir); !slices.Equal(got, tt.want) {
				t.Errorf("left %q, want %q", got, tt.want)
			}
		})
	}
}
