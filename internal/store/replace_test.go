package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// WriteFile leaves the new content, 0600, and nothing beside it, whatever
// was at the path: a file of another mode, nothing, or a symlink — which is
// replaced, and what it named left alone.
func TestWriteFile(t *testing.T) {
	tests := []struct {
		name   string
		before func(t *testing.T, path, outside string)
	}{
		{"no file", func(*testing.T, string, string) {}},
		{"a file 0644", func(t *testing.T, path, _ string) { write(t, path, "old", 0o644) }},
		{"a symlink to a file elsewhere", func(t *testing.T, path, outside string) {
			if err := os.Symlink(outside, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a dangling symlink", func(t *testing.T, path, _ string) {
			if err := os.Symlink(filepath.Join(t.TempDir(), "missing"), path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "record.json")
			outside := filepath.Join(t.TempDir(), "elsewhere")
			write(t, outside, "not the bot's", 0o644)
			tt.before(t, path, outside)
			if err := WriteFile(path, []byte("new"), nil); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want a regular file 0600", fi.Mode())
			}
			if b, _ := os.ReadFile(path); string(b) != "new" {
				t.Errorf("content %q, want \"new\"", b)
			}
			if b, _ := os.ReadFile(outside); string(b) != "not the bot's" {
				t.Errorf("the file a symlink named was written: %q", b)
			}
			if names := list(t, dir); len(names) != 1 {
				t.Errorf("the folder holds %v, want the file alone", names)
			}
		})
	}
}

// 0600 whatever the umask.
func TestWriteFileIgnoresTheUmask(t *testing.T) {
	old := syscall.Umask(0o277)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "token.json")
	if err := WriteFile(path, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v under umask 0277, want 0600", fi.Mode().Perm())
	}
}

// The temporary file is beside the file, never in $TMPDIR — even when
// $TMPDIR is on the same file system, where a rename from it would work
// (renameio.WriteFile then puts it there: a token in a shared folder).
func TestWriteFileTempIsBesideTheFile(t *testing.T) {
	tmpdir := t.TempDir()
	t.Setenv("TMPDIR", tmpdir)
	dir := t.TempDir()
	path := filepath.Join(dir, "token.json")
	var temps []string
	own := func(p string) error {
		temps = append(temps, p)
		return nil
	}
	if err := WriteFile(path, []byte("secret"), own); err != nil {
		t.Fatal(err)
	}
	if len(temps) != 1 || filepath.Dir(temps[0]) != dir || temps[0] == path {
		t.Errorf("written first in %v, want one file beside %s", temps, path)
	}
	if names := list(t, tmpdir); len(names) != 0 {
		t.Errorf("$TMPDIR holds %v", names)
	}
}

// Each step in its order — write, owner, sync the file, rename, sync the
// folder — and a failure at any step leaves the old file and nothing
// beside it.
func TestWriteFileSteps(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		failAt  string
		want    string
		wantErr bool
	}{
		{"all", "", "own sync rename syncdir", false},
		{"the owner fails", "own", "own", true},
		{"the sync fails", "sync", "own sync", true},
		{"the rename fails", "rename", "own sync rename", true},
		{"the folder's sync fails: the file is in place", "syncdir", "own sync rename syncdir", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "grants.json")
			write(t, path, "old", 0o600)
			var done []string
			step := func(name string) error {
				done = append(done, name)
				if name == tt.failAt {
					return boom
				}
				return nil
			}
			var temp string
			s := osSteps()
			real := s
			s.sync = func(f *os.File) error {
				if f.Name() != temp {
					t.Errorf("synced %s, want the temporary file %s", f.Name(), temp)
				}
				return errors.Join(step("sync"), real.sync(f))
			}
			s.rename = func(from, to string) error {
				if from != temp || to != path {
					t.Errorf("rename %s → %s, want %s → %s", from, to, temp, path)
				}
				if err := step("rename"); err != nil {
					return err
				}
				return real.rename(from, to)
			}
			s.syncDir = func(d string) error {
				if d != dir {
					t.Errorf("synced folder %s, want %s", d, dir)
				}
				return errors.Join(step("syncdir"), real.syncDir(d))
			}
			own := func(p string) error { temp = p; return step("own") }
			_, err := replace(path, []byte("new"), own, s, false)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want an error: %v", err, tt.wantErr)
			}
			if got := strings.Join(done, " "); got != tt.want {
				t.Errorf("steps %q, want %q", got, tt.want)
			}
			want := "new"
			if tt.wantErr {
				want = "old"
			}
			if b, _ := os.ReadFile(path); string(b) != want {
				t.Errorf("content %q, want %q", b, want)
			}
			if names := list(t, dir); len(names) != 1 {
				t.Errorf("the folder holds %v, want the file alone", names)
			}
		})
	}
}

// A bot killed between writing the new file and renaming it leaves the
// old file whole (and the new one beside it, in the same folder); the next
// write replaces the file as ever. The kill is real: a child process
// SIGKILLs itself there.
func TestWriteFileKilledBeforeTheRename(t *testing.T) {
	if path := os.Getenv("STORE_TEST_KILL_IN_WRITE"); path != "" {
		_ = WriteFile(path, []byte("new"), func(string) error {
			return syscall.Kill(os.Getpid(), syscall.SIGKILL)
		})
		t.Fatal("not killed")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "users.json")
	write(t, path, "old", 0o600)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileKilledBeforeTheRename$")
	cmd.Env = append(os.Environ(), "STORE_TEST_KILL_IN_WRITE="+path)
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v, want killed", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after the kill the file holds %q, want \"old\"", b)
	}
	names := list(t, dir)
	if len(names) != 2 || !strings.HasPrefix(names[0], ".users.json.tmp") {
		t.Errorf("the folder holds %v, want the file and the new one beside it", names)
	}
	if err := WriteFile(path, []byte("again"), nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "again" {
		t.Errorf("the next write left %q", b)
	}
}

func TestOwnerOf(t *testing.T) {
	if _, err := OwnerOf(filepath.Join(t.TempDir(), "missing")); err == nil && os.Geteuid() == 0 {
		t.Error("a missing data directory: no error")
	}
	if os.Geteuid() != 0 {
		own, err := OwnerOf(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "f")
		write(t, f, "", 0o600)
		if err := own(f); err != nil {
			t.Errorf("not root: %v, want nothing changed", err)
		}
		t.Skip("the chown needs root")
	}
	for _, tt := range []struct {
		name  string
		owner int
		want  uint32
	}{
		{"another user's data directory", 10001, 10001},
		{"root's", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			if err := os.Chown(data, tt.owner, tt.owner); err != nil {
				t.Fatal(err)
			}
			own, err := OwnerOf(data)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(data, "f")
			if err := WriteFile(path, []byte("x"), own); err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(path)
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != tt.want || st.Gid != tt.want {
				t.Errorf("owner %d:%d, want %d:%d", st.Uid, st.Gid, tt.want, tt.want)
			}
		})
	}
}

func write(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

// list names what dir holds, sorted.
func list(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
