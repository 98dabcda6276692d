package telegram

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A local Bot API server (tdlib/telegram-bot-api started with --local)
// lets bots receive files up to 2,000 MB, but it does not serve them:
// getFile answers with the file's absolute path on the server's disk,
// under its working directory (--dir), in a folder named by the bot
// token — /var/lib/telegram-bot-api/<token>/documents/file_3.pdf. When
// that folder is shared with the bot (Options.LocalFilesDir: the server's
// --dir as mounted here), the file is read from it, confined to the
// bot's own folder with an os.Root: no "..", no symlink out of it,
// another bot's folder is out of reach. The token is part of every such
// path: no error says more of a path than what follows the token.

// MaxLocalFile is the largest file a local Bot API server lets a bot
// receive: 2,000 MB.
const MaxLocalFile = 2000 << 20

// ErrLocalPath is a getFile answer with a path on a local Bot API
// server's disk when the bot was not given that server's folder
// (TELEGRAM_LOCAL_FILES_DIR): the operator should share the server's
// --dir with the bot and set it.
var ErrLocalPath = errors.New("the Bot API server runs with --local and answered getFile with a path on its own disk, " +
	"but TELEGRAM_LOCAL_FILES_DIR (telegram.local_files_dir) is not set: mount the server's --dir into the bot and set it to that folder")

// ErrLocalFile is a file a local Bot API server named that the bot may
// not or cannot read from its folder (outside the bot's folder, through
// a symlink out of it, missing, not a regular file). Errors wrapping it
// say which, naming at most the part of the path after the token.
var ErrLocalFile = errors.New("local Bot API file")

// localFiles reads files from a local Bot API server's folder.
type localFiles struct {
	dir   string // the server's --dir as mounted here
	token string
}

// rel maps the absolute path getFile gave to the file's path relative to
// the bot's folder (dir/<token>): the path must hold a segment that is
// exactly the token, and nothing after it may be empty, "." or "..". A
// ".." anywhere is refused: a path is never cleaned into another.
func (l localFiles) rel(filePath string) (string, error) {
	parts := strings.Split(filePath, "/")
	at := -1
	for i, p := range parts {
		if p == ".." {
			return "", fmt.Errorf("%w: the path has a \"..\" in it", ErrLocalFile)
		}
		if at < 0 && p == l.token {
			at = i
		}
	}
	if at < 0 {
		return "", fmt.Errorf("%w: the path is not in this bot's folder of the server (another bot's, or no bot's)", ErrLocalFile)
	}
	rest := parts[at+1:]
	if len(rest) == 0 {
		return "", fmt.Errorf("%w: the path names the bot's folder itself", ErrLocalFile)
	}
	for _, p := range rest {
		if p == "" || p == "." {
			return "", fmt.Errorf("%w: the path %q is not plain", ErrLocalFile, strings.Join(rest, "/"))
		}
	}
	return strings.Join(rest, "/"), nil
}

// open opens the file at rel in the bot's folder for reading, confined to
// that folder, and returns it with its size. Only a regular file is
// opened (a FIFO would block the open).
func (l localFiles) open(rel string) (*os.File, int64, error) {
	root, err := os.OpenRoot(filepath.Join(l.dir, l.token))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: open the bot's folder <%s>/<token>: %w", ErrLocalFile, l.dir, pathCause(err))
	}
	defer root.Close()
	info, err := root.Stat(rel)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s: %w", ErrLocalFile, rel, pathCause(err))
	}
	if !info.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%w: %s is not a regular file (%s)", ErrLocalFile, rel, info.Mode().Type())
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s: %w", ErrLocalFile, rel, pathCause(err))
	}
	// What was opened is what was looked at: a regular file still.
	if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%w: %s changed while it was opened", ErrLocalFile, rel)
	}
	return f, info.Size(), nil
}

// pathCause is the cause of a file error without its path, which holds
// the token.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return errors.New("cannot open it")
}
