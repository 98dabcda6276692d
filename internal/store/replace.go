package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// OwnerOf returns what gives a path the owner of dataDir: when the caller
// is root and dataDir belongs to another user, a chown to that user (the
// path itself, never what a symlink there names); otherwise a no-op (files
// are the caller's, as the bot's own are).
func OwnerOf(dataDir string) (func(path string) error, error) {
	none := func(string) error { return nil }
	if os.Geteuid() != 0 {
		return none, nil
	}
	fi, err := os.Stat(dataDir)
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return none, nil
	}
	uid, gid := int(st.Uid), int(st.Gid)
	return func(path string) error { return os.Lchown(path, uid, gid) }, nil
}

// WriteFile replaces path with data: written whole in a new file beside
// it, 0600 whatever the umask, given own's owner (nil: the caller's),
// synced, renamed over path, and the folder synced. A crash leaves the old
// file or the new one (and at worst a stray ".<name>.tmp…" beside it); an
// error leaves the old one and nothing beside it. A symlink at path is
// replaced, not followed. The folder must exist.
func WriteFile(path string, data []byte, own func(path string) error) error {
	f, err := replace(path, data, own, osSteps(), false)
	if f != nil {
		f.Close()
	}
	return err
}

// steps are the operations of a replace whose order matters; tests record
// them.
type steps struct {
	sync    func(*os.File) error
	rename  func(from, to string) error
	syncDir func(dir string) error
}

func osSteps() steps {
	return steps{sync: (*os.File).Sync, rename: os.Rename, syncDir: SyncDir}
}

// replace does WriteFile's work and, when keep is set, returns the new
// file open for appending (a journal rewritten goes on in it).
func replace(path string, data []byte, own func(string) error, s steps, keep bool) (_ *os.File, err error) {
	dir := filepath.Dir(path)
	f, err := createTemp(dir, filepath.Base(path))
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			_ = os.Remove(tmp)
		}
	}()
	// The mode at creation is 0600 less the umask: set it whatever that is.
	if err := f.Chmod(0o600); err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		return nil, err
	}
	if own != nil {
		if err := own(tmp); err != nil {
			return nil, fmt.Errorf("owner of %s: %w", tmp, err)
		}
	}
	if err := s.sync(f); err != nil {
		return nil, err
	}
	if err := s.rename(tmp, path); err != nil {
		return nil, err
	}
	// The file is in place now: a failed sync of the folder only means the
	// rename may not survive a power cut, so it is no error of the write.
	_ = s.syncDir(dir)
	if !keep {
		return nil, f.Close()
	}
	return f, nil
}

// createTemp creates a new file ".<name>.tmp<random>" in dir, open for
// reading and appending; it never opens one that exists (nor a symlink).
func createTemp(dir, name string) (*os.File, error) {
	for range 100 {
		tmp := filepath.Join(dir, "."+name+".tmp"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no free temporary name beside %s in %s", name, dir)
}

// SyncDir makes the renames and new files in dir durable. A file system
// that cannot sync folders (EINVAL) is not an error: there is nothing more
// to do on it.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) {
		err = nil
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
