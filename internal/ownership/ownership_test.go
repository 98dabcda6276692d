package ownership

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOf(t *testing.T) {
	if os.Geteuid() != 0 {
		own, err := Of(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := own(f); err != nil {
			t.Errorf("not root: %v, want nothing changed", err)
		}
		return
	}
	for _, tt := range []struct {
		name    string
		owner   int
		wantUID uint32
		wantGID uint32
	}{
		{"another user's data directory", 10001, 10001, 10001},
		{"root's", 0, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			if err := os.Chown(data, tt.owner, tt.owner); err != nil {
				t.Fatal(err)
			}
			own, err := Of(data)
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(data, "f")
			if err := os.WriteFile(f, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := own(f); err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(f)
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != tt.wantUID || st.Gid != tt.wantGID {
				t.Errorf("owner %d:%d, want %d:%d", st.Uid, st.Gid, tt.wantUID, tt.wantGID)
			}
		})
	}
	if _, err := Of(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing data directory: no error")
	}
}

// WriteFile replaces the file whole, 0600, with own applied before the
// rename, and leaves nothing beside it.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var owned []string
	own := func(p string) error { owned = append(owned, p); return nil }
	if err := WriteFile(path, []byte("new"), own); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(b) != "new" || fi.Mode().Perm() != 0o600 {
		t.Errorf("%q %v, want \"new\" 0600", b, fi.Mode().Perm())
	}
	if len(owned) != 1 || filepath.Dir(owned[0]) != dir || owned[0] == path {
		t.Errorf("own ran on %v, want the temporary file beside the file", owned)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the folder, want the file alone", len(entries))
	}
	if err := WriteFile(path, []byte("x"), func(string) error { return os.ErrPermission }); err == nil {
		t.Error("a failing own: no error")
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("a failed write changed the file: %q", b)
	}
}
