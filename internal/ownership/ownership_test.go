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
