package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The built-in tools that open a workspace file (send, read) open it by
// one set of rules. The file is opened once, and what was opened is what
// is used: no name is checked and then opened again. The open follows no
// symlink at any component, even one that stays inside the workspace, and
// cannot leave the workspace (openat2 with RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS on Linux; elsewhere, or where openat2 is not
// allowed, a walk that opens one component at a time with O_NOFOLLOW). It
// does not block (O_NONBLOCK: a FIFO swapped in is refused, not waited
// on). The opened file must be a regular file with no other name (a
// hardlink in the workspace to the transcript, or to a file outside it,
// has a link count above 1). The bot's private state of the chat is not in
// the workspace at all (chatdir), so no workspace path reaches it.

// beneathFunc opens a clean relative path beneath an open folder.
type beneathFunc func(dir *os.File, rel string) (int, error)

// openWorkspaceFile opens rel, a workspace-relative path, for tool and
// returns the open file and what it is; the caller closes it. Errors are
// written for the model: they say what to do instead.
func openWorkspaceFile(open beneathFunc, workspace, rel, tool string) (*os.File, os.FileInfo, error) {
	clean, err := workspacePath(rel, tool)
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.Open(workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace: %w", err)
	}
	defer dir.Close()
	fd, err := open(dir, clean)
	if err != nil {
		return nil, nil, openError(rel, tool, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(workspace, clean))
	fi, err := f.Stat()
	if err == nil {
		err = checkWorkspaceFile(fi, rel, tool)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// workspacePath checks rel by itself and returns it cleaned, with '/'
// separators.
func workspacePath(rel, tool string) (string, error) {
	if rel == "" {
		return "", errors.New("path is required: give a workspace-relative path such as browser/page.png")
	}
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("path %q is absolute: give a path relative to the workspace", rel)
	}
	clean := filepath.ToSlash(filepath.Clean(rel))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q leaves the workspace", rel)
	}
	if clean == "." {
		return "", fmt.Errorf("path %q is the workspace itself: name a file in it", rel)
	}
	return clean, nil
}

// openError says why the open of rel failed, for the model.
func openError(rel, tool string, err error) error {
	switch {
	case errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.EMLINK): // EMLINK: O_NOFOLLOW on the BSDs
		return fmt.Errorf("path %q goes through a symlink: %s takes only real files and folders of the workspace, not symlinks", rel, tool)
	case errors.Is(err, syscall.EXDEV):
		return fmt.Errorf("path %q leaves the workspace", rel)
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("no file at %q in the workspace", rel)
	}
	return fmt.Errorf("path %q: %v", rel, err)
}

// checkWorkspaceFile checks what was opened: a regular file with one name.
func checkWorkspaceFile(fi os.FileInfo, rel, tool string) error {
	switch {
	case fi.IsDir():
		return fmt.Errorf("path %q is a folder, not a regular file: name a file in it", rel)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("path %q is not a regular file", rel)
	}
	if n := linkCount(fi); n != 1 {
		return fmt.Errorf("%q has other names (%d hard links): %s takes only files with one name", rel, n, tool)
	}
	return nil
}
