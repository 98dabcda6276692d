package disk

import (
	"io/fs"
	"path/filepath"
)

// Tree is what a folder tree holds, as Size measures it.
type Tree struct {
	Bytes int64
	Files int
	// Partial is set when the walk stopped at its bound: there is more.
	Partial bool
}

// Size walks the folder tree at dir, without following symlinks, and adds
// up its regular files, leaving out the paths skip names (and what is
// under them). It looks at most at maxEntries entries; past that Partial
// is set. It is for an occasional question (/usage), not for every
// measure.
func Size(dir string, skip func(path string) bool, maxEntries int) Tree {
	var t Tree
	seen := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: counted as empty
		}
		if seen++; seen > maxEntries {
			t.Partial = true
			return filepath.SkipAll
		}
		if path != dir && skip != nil && skip(path) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				t.Bytes += fi.Size()
				t.Files++
			}
		}
		return nil
	})
	return t
}
