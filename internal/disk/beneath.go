package disk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// A source's folder lies in a folder the caller made and trusts (its
// Base: a chat's workspace, or its private folder), but what is between
// the two, and the folder itself, a writer of the workspace can change at
// any moment: make a folder a symlink to the chat's private folder or to
// another chat's, or swap one for such a symlink between a look and the
// next step. So the tracker takes every folder from Base down to a
// source's folder only as a real folder, never through a symlink — when it
// measures (a source whose path holds a symlink is not measured) and when
// it opens the source's folder to remove or empty a file in it (each
// folder on the way is checked to be, once open, the very folder that was
// looked at); from there on the os.Root of the source's folder keeps every
// removal within it.

var (
	errNotFolder = errors.New("not a folder")
	errSwapped   = errors.New("the folder was swapped")
	errOutside   = errors.New("the source's folder is not under its base")
)

// under is where a source's folder lies: its base, and the folders from it
// to the source's folder (none when the folder is its base). ok is false
// for a folder not in its base, which is never measured nor opened.
type under struct {
	base  string
	steps []string
	ok    bool
}

// underOf is s's; no I/O.
func underOf(s Source) under {
	base := s.Base
	if base == "" {
		base = filepath.Dir(s.Dir)
	}
	rel, err := filepath.Rel(base, s.Dir)
	switch {
	case err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)):
		return under{}
	case rel == ".":
		return under{base: base, ok: true}
	}
	return under{base: base, steps: strings.Split(rel, string(filepath.Separator)), ok: true}
}

// reachable reports whether every folder between the base and the
// source's folder (not the folder itself, which list looks at) is a real
// folder now. For a folder right under its base it costs nothing.
func (u under) reachable() bool {
	if !u.ok {
		return false
	}
	dir := u.base
	for _, step := range u.steps[:max(0, len(u.steps)-1)] {
		dir = filepath.Join(dir, step)
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// open opens the source's folder as an os.Root, from its base one folder
// at a time: each must be a real folder when looked at (Lstat), and the
// folder opened must be that same folder (not one a symlink swapped in
// meanwhile led to). before, when set, runs before each folder is opened
// (a test's swap).
func (u under) open(before func(dir string)) (*os.Root, error) {
	if !u.ok {
		return nil, errOutside
	}
	root, err := os.OpenRoot(u.base)
	if err != nil {
		return nil, err
	}
	dir := u.base
	for _, step := range u.steps {
		dir = filepath.Join(dir, step)
		next, err := openStep(root, step, func() {
			if before != nil {
				before(dir)
			}
		})
		root.Close()
		if err != nil {
			return nil, err
		}
		root = next
	}
	return root, nil
}

// openStep opens the folder name of root, which must be a real folder and
// stay the same while it is opened.
func openStep(root *os.Root, name string, before func()) (*os.Root, error) {
	seen, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !seen.IsDir() {
		return nil, errNotFolder
	}
	before()
	next, err := root.OpenRoot(name) // may follow a symlink swapped in, but only within root
	if err != nil {
		return nil, err
	}
	got, err := next.Stat(".")
	if err == nil && !os.SameFile(seen, got) {
		err = errSwapped
	}
	if err != nil {
		next.Close()
		return nil, err
	}
	return next, nil
}
