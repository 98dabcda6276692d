package disk

import (
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// A folder's listing is kept between measures and used again while the
// folder's modification time stays the same (no file was added, removed
// or renamed in it): then only the files that may still grow — the logs,
// and those changed a moment ago — are looked at again, and the folder's
// totals are kept up to date as they change, so that a measure of a
// folder nothing was added to costs a stat of the folder and of its logs.
// A folder is listed again at least every relistEvery, for a file
// rewritten in place.

// entry is one file of a listing.
type entry struct {
	size int64
	mod  time.Time
	log  bool
}

// listing is what a folder held when it was last listed, the files its
// source does not match left out.
type listing struct {
	mod     time.Time // the folder's modification time then
	listed  time.Time // when it was listed
	gen     uint64    // the last refresh that reached it
	entries map[string]entry
	subdirs []string
	watch   map[string]bool // the logs, and the files changed a moment ago
	bytes   int64           // of entries
}

func (l *listing) set(name string, e entry, now time.Time) {
	l.bytes += e.size - l.entries[name].size
	l.entries[name] = e
	if e.log || now.Sub(e.mod) < fresh {
		l.watch[name] = true
	} else {
		delete(l.watch, name)
	}
}

func (l *listing) remove(name string) {
	l.bytes -= l.entries[name].size
	delete(l.entries, name)
	delete(l.watch, name)
}

// maxListed bounds one listing: a folder with more entries than that is
// seen in part (its first entries, in the folder's order), and pruning by
// number makes room until it is seen whole.
func (t *Tracker) maxListed() int { return 4 * t.o.MaxFiles }

// listKey names the listing of dir for source src (two sources may share a
// folder and match different files in it).
func listKey(src int, dir string) string { return strconv.Itoa(src) + "\x00" + dir }

// list returns the listing of dir for the source src, from the cache
// when it is still good; nil when dir is not a folder (it does not exist,
// or it is a symlink, which is not followed). t.mu is held.
func (t *Tracker) list(src int, dir string, now time.Time) *listing {
	key := listKey(src, dir)
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		delete(t.dirs, key)
		return nil
	}
	l := t.dirs[key]
	if l == nil || !fi.ModTime().Equal(l.mod) || now.Sub(l.listed) >= relistEvery {
		l = t.relist(src, dir, fi.ModTime(), now)
		if l == nil {
			delete(t.dirs, key)
		} else {
			t.dirs[key] = l
		}
		return l
	}
	for name := range l.watch {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() {
			l.remove(name)
			continue
		}
		e := l.entries[name]
		e.size, e.mod = fi.Size(), fi.ModTime()
		l.set(name, e, now)
	}
	return l
}

// relist lists dir whole (up to maxListed entries).
func (t *Tracker) relist(src int, dir string, mod, now time.Time) *listing {
	s := t.o.Sources[src]
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	des, _ := f.ReadDir(t.maxListed()) // what was read before an error is used
	l := &listing{mod: mod, listed: now, entries: make(map[string]entry, len(des)), watch: map[string]bool{}}
	for _, de := range des {
		name := de.Name()
		switch typ := de.Type(); {
		case typ.IsDir():
			if s.Deep {
				l.subdirs = append(l.subdirs, name)
			}
		case typ.IsRegular():
			if s.Match != nil && !s.Match(name) {
				continue
			}
			fi, err := de.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			l.set(name, entry{size: fi.Size(), mod: fi.ModTime(), log: s.Log != nil && s.Log(name)}, now)
		}
	}
	return l
}

// refresh brings the listing of every folder of every source up to date
// and calls each with every one. t.mu is held.
func (t *Tracker) refresh(each func(src int, dir string, l *listing)) {
	now := t.o.Now()
	t.gen++
	for i, s := range t.o.Sources {
		if t.under[i].reachable() {
			t.visit(i, s.Dir, 0, now, each)
		}
	}
	for key, l := range t.dirs { // folders gone, or no longer reached
		if l.gen != t.gen {
			delete(t.dirs, key)
		}
	}
}

func (t *Tracker) visit(src int, dir string, depth int, now time.Time, each func(int, string, *listing)) {
	l := t.list(src, dir, now)
	if l == nil || l.gen == t.gen { // the same folder reached twice (a source inside another's)
		return
	}
	l.gen = t.gen
	each(src, dir, l)
	if depth < maxDepth {
		for _, sub := range l.subdirs {
			t.visit(src, filepath.Join(dir, sub), depth+1, now, each)
		}
	}
}
