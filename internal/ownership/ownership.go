// Package ownership keeps the files a command run as root writes into the
// data directory the bot's: `docker exec` into the image runs as root,
// beside a bot that runs as another user (10001), which must still read
// and change what the command wrote (pairing's users, OAuth tokens).
package ownership

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/renameio/v2"
)

// Of returns what gives a path the owner of dataDir: when the caller is
// root and dataDir belongs to another user, a chown to that user;
// otherwise a no-op (files are the caller's, as the bot's own are).
func Of(dataDir string) (func(path string) error, error) {
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

// WriteFile replaces path with data, 0600 whatever the umask: written whole
// in a file beside it (never in the temporary directory: the data may be a
// token), given own's owner, and renamed over path.
func WriteFile(path string, data []byte, own func(path string) error) error {
	f, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(0o600))
	if err != nil {
		return err
	}
	defer f.Cleanup()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := own(f.Name()); err != nil {
		return err
	}
	return f.CloseAtomicallyReplace()
}
