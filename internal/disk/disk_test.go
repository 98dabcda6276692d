package disk

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// write makes dir/name with size bytes, modified at mod.
func write(t testing.TB, dir, name string, size int, mod time.Time) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	if !mod.IsZero() {
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// names lists the regular files under dir, relative, sorted.
func names(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func isLog(name string) bool { return strings.HasSuffix(name, ".log") }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func TestMeasure(t *testing.T) {
	ws := t.TempDir()
	out, results, private := filepath.Join(ws, "out"), filepath.Join(ws, "results"), filepath.Join(ws, "private")
	write(t, out, "page-1.yml", 100, at(1))
	write(t, out, "sub/download.bin", 50, at(2))
	write(t, results, "r1.txt", 10, at(3))
	write(t, results, "notes.md", 1000, at(3)) // not matched
	write(t, private, "transcript-1.jsonl", 7, at(4))
	write(t, private, "transcript.jsonl", 1000, at(4)) // the live one: not matched
	outside := t.TempDir()
	write(t, outside, "secret", 5000, at(1))
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(out, "link.yml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(out, "linkdir")); err != nil {
		t.Fatal(err)
	}
	tr := New(Options{Sources: []Source{
		{Kind: "browser", Dir: out, Deep: true, Log: isLog, Writer: "playwright"},
		{Kind: "results", Dir: results, Match: func(n string) bool { return strings.HasSuffix(n, ".txt") }},
		{Kind: "archives", Dir: private, Match: func(n string) bool { return strings.HasPrefix(n, "transcript-") }},
		{Kind: "missing", Dir: filepath.Join(ws, "nothing")},
	}})
	got := tr.Measure()
	want := Usage{Bytes: 167, Files: 4, ByKind: []KindUsage{{"browser", 150, 2}, {"results", 10, 1}, {"archives", 7, 1}, {"missing", 0, 0}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Measure = %+v, want %+v (no symlink followed, unmatched files left out)", got, want)
	}

	// A source folder that is a symlink is not followed.
	link := filepath.Join(ws, "linked")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if u := New(Options{Sources: []Source{{Kind: "x", Dir: link}}}).Measure(); u.Files != 0 {
		t.Errorf("a symlinked source folder was measured: %+v", u)
	}
}

func TestEnforce(t *testing.T) {
	tests := []struct {
		name     string
		budget   int64
		maxFiles int
		files    map[string]int // path → size; modified in path order, a minute apart
		keep     int            // of archives
		pin      []string
		want     []string // left
	}{
		{name: "within the budget: nothing goes", budget: 400,
			files: map[string]int{"out/a": 100, "out/b": 100, "out/c": 100},
			want:  []string{"out/a", "out/b", "out/c"}},
		{name: "over it: oldest first, down to three quarters", budget: 400,
			files: map[string]int{"out/a": 100, "out/b": 100, "out/c": 100, "out/d": 100, "out/e": 100},
			want:  []string{"out/c", "out/d", "out/e"}},
		{name: "across sources by age", budget: 400,
			files: map[string]int{"out/a": 200, "out/c": 200, "results/b.txt": 200},
			want:  []string{"results/b.txt"}},
		{name: "the newest archive stays", budget: 100, keep: 1,
			files: map[string]int{"private/transcript-1": 100, "private/transcript-2": 100, "out/x": 10},
			want:  []string{"private/transcript-2"}},
		{name: "a pinned file stays, and does not count", budget: 150, pin: []string{"out/a"},
			files: map[string]int{"out/a": 100, "out/b": 100, "out/c": 100},
			want:  []string{"out/a", "out/c"}},
		{name: "by number", budget: 1 << 30, maxFiles: 4,
			files: map[string]int{"out/a": 1, "out/b": 1, "out/c": 1, "out/d": 1, "out/e": 1},
			want:  []string{"out/c", "out/d", "out/e"}},
		{name: "a file alone over the budget goes too", budget: 100,
			files: map[string]int{"out/a": 500},
			want:  nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			paths := slices.Sorted(func(yield func(string) bool) {
				for p := range tt.files {
					if !yield(p) {
						return
					}
				}
			})
			for i, p := range paths {
				write(t, ws, p, tt.files[p], at(i))
			}
			var pins []string
			for _, p := range tt.pin {
				pins = append(pins, filepath.Join(ws, p))
			}
			tr := New(Options{Budget: tt.budget, MaxFiles: tt.maxFiles, Now: testkit.NewClock(at(60)).Now, Sources: []Source{
				{Kind: "out", Dir: filepath.Join(ws, "out"), Deep: true},
				{Kind: "results", Dir: filepath.Join(ws, "results")},
				{Kind: "archives", Dir: filepath.Join(ws, "private"), Keep: tt.keep},
			}})
			tr.Pin(pins)
			res := tr.Enforce()
			if got := names(t, ws); !slices.Equal(got, tt.want) {
				t.Errorf("left %q, want %q", got, tt.want)
			}
			var left int64
			for _, p := range tt.want {
				if !slices.Contains(tt.pin, p) {
					left += int64(tt.files[p])
				}
			}
			if res.Usage.Bytes != left || res.Files != len(tt.files)-len(tt.want) {
				t.Errorf("Enforce = %+v: want %d bytes left, %d files removed", res, left, len(tt.files)-len(tt.want))
			}
		})
	}
}

// A file of the source's folder swapped for a symlink, or the folder
// under it swapped for one, between the measure and the prune: nothing
// outside the source is removed or emptied.
func TestEnforceStaysInItsFolder(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	out := filepath.Join(ws, "out")
	write(t, out, "sub/a.log", 100, at(1))
	write(t, out, "b.log", 100, at(2))
	write(t, outside, "a.log", 100, at(1))
	write(t, outside, "b.log", 100, at(1))
	tr := New(Options{Budget: 50, Now: testkit.NewClock(at(1)).Now, Sources: []Source{{Kind: "out", Dir: out, Deep: true, Log: isLog}}})
	if u := tr.Measure(); u.Files != 2 {
		t.Fatalf("measured %+v", u)
	}
	// Swapped: sub/ for a symlink to outside, b.log for a symlink to
	// outside/b.log. The cached listing still names them.
	if err := os.RemoveAll(filepath.Join(out, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(out, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, "b.log")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "b.log"), filepath.Join(out, "b.log")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []file{{path: filepath.Join(out, "sub", "a.log"), size: 100, mod: at(1), log: true},
		{path: filepath.Join(out, "b.log"), size: 100, mod: at(2), log: true}} {
		roots := tr.roots()
		if root, rel, ok := roots.of(f); ok {
			_, _ = truncateIn(root, rel)
			_ = root.Remove(rel)
		}
		roots.close()
	}
	tr.Enforce()
	for _, name := range []string{"a.log", "b.log"} {
		if fi, err := os.Stat(filepath.Join(outside, name)); err != nil || fi.Size() != 100 {
			t.Errorf("outside/%s was reached: %v %v", name, fi, err)
		}
	}
}

func TestGrowthAndCutLogs(t *testing.T) {
	ws := t.TempDir()
	out, other := filepath.Join(ws, "out"), filepath.Join(ws, "other")
	c := testkit.NewClock(at(0))
	tr := New(Options{Now: c.Now, Sources: []Source{
		{Kind: "out", Dir: out, Log: isLog, Writer: "browser"},
		{Kind: "other", Dir: other, Log: isLog, Writer: "tool"},
	}})
	log := write(t, out, "console-1.log", 1000, time.Time{})
	write(t, out, "page.yml", 5000, time.Time{})
	write(t, other, "x.log", 10, time.Time{})
	if g := tr.Growth(); len(g) != 0 {
		t.Errorf("the first Growth = %v, want the baseline only", g)
	}
	appendTo(t, log, 4000)
	write(t, out, "console-2.log", 300, time.Time{}) // new: counts whole
	appendTo(t, filepath.Join(other, "x.log"), 5)
	c.Set(at(1))
	if g := tr.Growth(); g["browser"] != 4300 || g["tool"] != 5 {
		t.Errorf("Growth = %v, want browser 4300, tool 5", g)
	}
	// A hard-linked log is not emptied (it has another name).
	if err := os.Link(filepath.Join(out, "console-2.log"), filepath.Join(ws, "keep")); err != nil {
		t.Fatal(err)
	}
	files, freed := tr.CutLogs("browser")
	if files != 1 || freed != 5000 {
		t.Errorf("CutLogs = %d files, %d bytes; want console-1.log's 5000", files, freed)
	}
	for path, size := range map[string]int64{log: 0, filepath.Join(out, "console-2.log"): 300, filepath.Join(out, "page.yml"): 5000,
		filepath.Join(other, "x.log"): 15} {
		if fi, err := os.Stat(path); err != nil || fi.Size() != size {
			t.Errorf("%s: %v %v, want %d bytes", path, fi, err, size)
		}
	}
	// The writer goes on: what it adds after the cut is growth.
	appendTo(t, log, 700)
	c.Set(at(2))
	if g := tr.Growth(); g["browser"] != 700 || g["tool"] != 0 {
		t.Errorf("Growth after the cut = %v, want browser 700", g)
	}
	if u := tr.Measure(); u.Bytes != 700+300+5000+15 {
		t.Errorf("Measure after the cut = %+v", u)
	}
}

func appendTo(t testing.TB, path string, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
}

// The cache: a folder whose modification time did not change is not
// listed again, but its logs and its fresh files are looked at again; a
// file added is seen at once; a file rewritten in place (the folder does
// not change) is seen once it is relisted.
func TestMeasureCache(t *testing.T) {
	ws := t.TempDir()
	c := testkit.NewClock(at(0))
	tr := New(Options{Now: c.Now, Sources: []Source{{Kind: "out", Dir: ws, Log: isLog}}})
	old := write(t, ws, "old.yml", 100, at(-10))
	log := write(t, ws, "console.log", 10, at(-10))
	fresh := write(t, ws, "fresh.bin", 10, at(0))
	if u := tr.Measure(); u.Bytes != 120 {
		t.Fatalf("Measure = %+v", u)
	}
	keepDirTime := func() {
		t.Helper()
		if err := os.Chtimes(ws, at(-5), at(-5)); err != nil {
			t.Fatal(err)
		}
	}
	keepDirTime()
	if u := tr.Measure(); u.Bytes != 120 { // relisted: the folder's time changed
		t.Fatalf("Measure = %+v", u)
	}
	// Rewritten in place, the folder untouched: the old file is not looked
	// at again until relistEvery, the log and the fresh file are.
	for path, size := range map[string]int{old: 1000, log: 50, fresh: 30} {
		if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Chtimes(old, at(-10), at(-10))
	keepDirTime()
	c.Set(at(0).Add(time.Second))
	if u := tr.Measure(); u.Bytes != 100+50+30 {
		t.Errorf("Measure from the cache = %d bytes, want 180 (old.yml as listed, the log and the fresh file again)", u.Bytes)
	}
	c.Set(at(0).Add(relistEvery))
	if u := tr.Measure(); u.Bytes != 1000+50+30 {
		t.Errorf("Measure after relistEvery = %d bytes, want 1080", u.Bytes)
	}
	write(t, ws, "new.yml", 7, time.Time{})
	if u := tr.Measure(); u.Bytes != 1087 {
		t.Errorf("Measure with a new file = %d bytes, want 1087", u.Bytes)
	}
}

func TestSize(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, "a", 10, time.Time{})
	write(t, ws, "skip/b", 100, time.Time{})
	write(t, ws, "dir/c", 1, time.Time{})
	if err := os.Symlink("/", filepath.Join(ws, "root")); err != nil {
		t.Fatal(err)
	}
	skip := func(p string) bool { return filepath.Base(p) == "skip" }
	if got := Size(ws, skip, 100); got != (Tree{Bytes: 11, Files: 2}) {
		t.Errorf("Size = %+v", got)
	}
	if got := Size(ws, skip, 2); !got.Partial {
		t.Errorf("Size bounded at 2 entries = %+v, want partial", got)
	}
}
