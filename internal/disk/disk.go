// Package disk keeps what the bot and its servers generate in a chat's
// folders within a budget: it measures the folders of generated files
// (cheaply: listings are cached by the folder's modification time, only
// the files that may still grow are looked at again), prunes them oldest
// first, and tells how fast the logs a server appends to grow, so that a
// runaway writer can be stopped.
//
// It knows nothing of chats, browsers or MCP: the caller says which
// folders hold generated files (Source) and what to do with the numbers.
package disk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Source is one folder of generated files of a chat.
type Source struct {
	// Kind names it for people: "the browser's own files".
	Kind string
	// Dir is the folder, absolute. A folder that does not exist holds
	// nothing; one that is a symlink, or reached through one, is not
	// followed (nor measured).
	Dir string
	// Deep takes the files of its subfolders too (a few levels down).
	Deep bool
	// Match selects the files that belong to the source by their base
	// name; nil: every regular file.
	Match func(name string) bool
	// Keep is how many of the source's newest files are never pruned.
	Keep int
	// Log reports whether a file is a log its writer appends to as things
	// happen (a browser's console log): it is looked at every time, and
	// its growth is what Growth reports.
	Log func(name string) bool
	// Writer is who writes the source's logs (a server's name); Growth
	// reports by writer.
	Writer string
	// Base is the folder Dir is in or under that the caller made and
	// trusts (a chat's workspace, or its private folder); Dir's parent
	// when empty. No folder from Base down to Dir, nor under Dir, is
	// followed through a symlink (see beneath.go).
	Base string
}

// Defaults.
const (
	// DefaultMaxFiles bounds a chat's generated files by number, besides
	// the budget in bytes: it bounds the work of a measure, too.
	DefaultMaxFiles = 2000
	// lowWater is the share of the budget (and of MaxFiles) a prune
	// brings the chat down to, so that one prune makes room for a while.
	lowWaterPercent = 75
	// maxDepth is how deep a Deep source is followed.
	maxDepth = 4
	// fresh is how recent a file's modification must be for it to be
	// looked at again at the next measure (it may still be written).
	fresh = 10 * time.Second
	// relistEvery is how often a folder is listed again even though its
	// modification time did not change (a file rewritten in place).
	relistEvery = time.Minute
)

// Options configure a Tracker.
type Options struct {
	Sources []Source
	// Budget is the most bytes the sources may hold; 0: no budget in
	// bytes.
	Budget int64
	// MaxFiles is the most files they may hold (DefaultMaxFiles when 0).
	MaxFiles int
	// Now defaults to time.Now.
	Now func() time.Time
}

// Tracker is one chat's generated files. Its methods may be called from
// any goroutine.
type Tracker struct {
	o     Options
	under []under // of each source

	mu      sync.Mutex
	dirs    map[string]*listing // by listKey
	pinned  map[string]bool     // paths never pruned
	logs    map[string]int64    // log path → its size at the last Growth
	grew    map[string]int      // logs that grew at the last Growth → their source
	counted bool                // Growth has set its baseline
	gen     uint64              // of the last refresh

	// beforeOpen, when set (by a test), runs before each folder on the way
	// to a source's is opened for a removal: where a writer could swap it.
	beforeOpen func(dir string)
}

// New returns a Tracker. It does no I/O.
func New(o Options) *Tracker {
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	u := make([]under, len(o.Sources))
	for i, s := range o.Sources {
		u[i] = underOf(s)
	}
	return &Tracker{o: o, under: u, dirs: map[string]*listing{}, logs: map[string]int64{}, grew: map[string]int{}}
}

// Budget is the budget in bytes the tracker keeps.
func (t *Tracker) Budget() int64 { return t.o.Budget }

// KindUsage is what one source holds.
type KindUsage struct {
	Kind  string
	Bytes int64
	Files int
}

// Usage is what the sources hold, in total and by source (in the order of
// Options.Sources, sources of one Kind added up). Pinned files are not in
// it: Pinned is their size.
type Usage struct {
	Bytes  int64
	Files  int
	ByKind []KindUsage
	Pinned int64
}

// file is one generated file as last measured.
type file struct {
	path string
	src  int // index in Options.Sources
	size int64
	mod  time.Time
	log  bool
}

// Measure returns what the sources hold now.
func (t *Tracker) Measure() Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.measure()
}

// measure is Measure with t.mu held.
func (t *Tracker) measure() Usage {
	var u Usage
	index := map[string]int{}
	kind := make([]int, len(t.o.Sources))
	for i, s := range t.o.Sources {
		k, ok := index[s.Kind]
		if !ok {
			k = len(u.ByKind)
			index[s.Kind] = k
			u.ByKind = append(u.ByKind, KindUsage{Kind: s.Kind})
		}
		kind[i] = k
	}
	t.refresh(func(src int, _ string, l *listing) {
		k := &u.ByKind[kind[src]]
		k.Bytes += l.bytes
		k.Files += len(l.entries)
		u.Bytes += l.bytes
		u.Files += len(l.entries)
	})
	for path := range t.pinned {
		dir, name := filepath.Split(path)
		for src := range t.o.Sources {
			l := t.dirs[listKey(src, filepath.Clean(dir))]
			if l == nil {
				continue
			}
			if e, ok := l.entries[name]; ok {
				k := &u.ByKind[kind[src]]
				k.Bytes -= e.size
				k.Files--
				u.Bytes -= e.size
				u.Files--
				u.Pinned += e.size
				break
			}
		}
	}
	return u
}

// Covers reports whether path is one of the sources' files, or a folder
// whose every file is (for a walk of everything else).
func (t *Tracker) Covers(path string) bool {
	for _, s := range t.o.Sources {
		if s.Match == nil && path == s.Dir {
			return true
		}
		if s.Match != nil && filepath.Dir(path) == s.Dir && s.Match(filepath.Base(path)) {
			return true
		}
		if s.Deep && s.Match == nil && strings.HasPrefix(path, s.Dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// files lists every generated file, as measured last. t.mu is held.
func (t *Tracker) files() []file {
	var out []file
	for key, l := range t.dirs {
		_, dir, _ := strings.Cut(key, "\x00")
		src, _ := strconv.Atoi(key[:strings.IndexByte(key, 0)])
		for name, e := range l.entries {
			out = append(out, file{path: filepath.Join(dir, name), src: src, size: e.size, mod: e.mod, log: e.log})
		}
	}
	return out
}

// PruneResult is what a prune removed.
type PruneResult struct {
	Files int
	Bytes int64
	// Usage is what is left.
	Usage Usage
}

// Enforce measures the sources and, when they hold more than the budget
// (or MaxFiles), removes files oldest first — never the newest Keep of a
// source, nor a pinned one — until they hold at most three quarters of it.
// A file that may still be written (a log, or one changed a moment ago) is
// emptied before it is removed, so that a writer holding it open does not
// keep its space. It returns what it removed.
func (t *Tracker) Enforce() PruneResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.measure()
	overBytes := t.o.Budget > 0 && u.Bytes > t.o.Budget
	if !overBytes && u.Files <= t.o.MaxFiles {
		return PruneResult{Usage: u}
	}
	lowBytes := t.o.Budget * lowWaterPercent / 100
	lowFiles := t.o.MaxFiles * lowWaterPercent / 100
	candidates := t.candidates(t.files())
	roots := t.roots()
	defer roots.close()
	now := t.o.Now()
	var res PruneResult
	bytes, count := u.Bytes, u.Files
	for _, f := range candidates {
		if (t.o.Budget <= 0 || bytes <= lowBytes) && count <= lowFiles {
			break
		}
		root, rel, ok := roots.of(f)
		if !ok {
			continue
		}
		if f.log || now.Sub(f.mod) < fresh {
			_, _ = truncateIn(root, rel)
		}
		if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		t.forgetFile(f)
		bytes -= f.size
		count--
		res.Files++
		res.Bytes += f.size
	}
	res.Usage = t.measure()
	return res
}

// candidates are the files that may be pruned, oldest first.
func (t *Tracker) candidates(files []file) []file {
	bySource := map[int][]file{}
	for _, f := range files {
		bySource[f.src] = append(bySource[f.src], f)
	}
	var out []file
	for src, fs := range bySource {
		slices.SortFunc(fs, func(a, b file) int { return a.mod.Compare(b.mod) })
		keep := t.o.Sources[src].Keep
		for _, f := range fs[:max(0, len(fs)-keep)] {
			if !t.pinned[f.path] {
				out = append(out, f)
			}
		}
	}
	slices.SortFunc(out, func(a, b file) int {
		if c := a.mod.Compare(b.mod); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	return out
}

// forgetFile drops f from its folder's listing (it was removed).
func (t *Tracker) forgetFile(f file) {
	if l := t.dirs[listKey(f.src, filepath.Dir(f.path))]; l != nil {
		l.remove(filepath.Base(f.path))
	}
	delete(t.logs, f.path)
}

// Pin sets the files that are never pruned (those the chat's live
// conversation refers to), replacing the set pinned before.
func (t *Tracker) Pin(paths []string) {
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	t.mu.Lock()
	t.pinned = set
	t.mu.Unlock()
}

// Forget drops what the tracker remembers of the folders (the next
// measure lists them again) and the logs' baseline: for a chat no one
// watches for a while.
func (t *Tracker) Forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.dirs)
	clear(t.logs)
	clear(t.grew)
	t.counted = false
}

// Growth measures the sources and returns by how many bytes each writer's
// logs grew since the last call (a log that appeared counts whole, one
// that shrank counts nothing). The first call sets the baseline and
// reports nothing.
func (t *Tracker) Growth() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int64{}
	now := map[string]int64{}
	clear(t.grew)
	t.refresh(func(src int, dir string, l *listing) {
		for name := range l.watch {
			e := l.entries[name]
			if !e.log {
				continue
			}
			path := filepath.Join(dir, name)
			now[path] = e.size
			if grown := e.size - t.logs[path]; t.counted && grown > 0 {
				out[t.o.Sources[src].Writer] += grown
				t.grew[path] = src
			}
		}
	})
	t.logs = now
	t.counted = true
	return out
}

// CutLogs empties the logs of writer that grew at the last Growth and
// returns how many it emptied and how many bytes that freed. The writer
// goes on appending to the same files.
func (t *Tracker) CutLogs(writer string) (files int, freed int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	roots := t.roots()
	defer roots.close()
	for path, src := range t.grew {
		if t.o.Sources[src].Writer != writer {
			continue
		}
		root, rel, ok := roots.of(file{path: path, src: src})
		if !ok {
			continue
		}
		n, err := truncateIn(root, rel)
		if err != nil {
			continue
		}
		files++
		freed += n
		t.logs[path] = 0
		if l := t.dirs[listKey(src, filepath.Dir(path))]; l != nil {
			if e, ok := l.entries[filepath.Base(path)]; ok {
				e.size = 0
				l.set(filepath.Base(path), e, t.o.Now())
			}
		}
	}
	return files, freed
}

// roots opens the sources' folders as os.Roots, so that a removal or a
// truncation stays within its source whatever is swapped under it
// meanwhile.
type roots struct {
	t     *Tracker
	open  map[int]*os.Root
	fails map[int]bool
}

func (t *Tracker) roots() *roots {
	return &roots{t: t, open: map[int]*os.Root{}, fails: map[int]bool{}}
}

// of is f's source folder and f's path in it.
func (r *roots) of(f file) (*os.Root, string, bool) {
	dir := r.t.o.Sources[f.src].Dir
	rel, err := filepath.Rel(dir, f.path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || r.fails[f.src] {
		return nil, "", false
	}
	root := r.open[f.src]
	if root == nil {
		var err error
		if root, err = r.t.under[f.src].open(r.t.beforeOpen); err != nil {
			r.fails[f.src] = true
			return nil, "", false
		}
		r.open[f.src] = root
	}
	return root, rel, true
}

func (r *roots) close() {
	for _, root := range r.open {
		root.Close()
	}
}
