package fakemcp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// MemoryCgroup makes a memory cgroup of limit bytes below this process's
// own — cgroup v2 where the memory controller reaches it, else v1 — for a
// test to put a process in (hog-grandchild with EnvMemcg) and see the
// kernel's OOM killer end it. It returns the cgroup's directory and the
// file that counts its OOM kills (memory.events, or memory.oom_control),
// and removes the cgroup at the end of the test, killing what is left in
// it. It skips the test where no such cgroup can be made (not root, no
// memory controller).
func MemoryCgroup(t testing.TB, limit int64) (dir, counter string) {
	t.Helper()
	name := fmt.Sprintf("fakemcp-memcg-%d-%d", os.Getpid(), time.Now().UnixNano())
	var errs []error
	if mount, path, err := cgroup2(); err == nil {
		dir := filepath.Join(mount, path, name)
		if err := os.Mkdir(dir, 0o755); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "memory.max")); err == nil {
				_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)
				if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(limit, 10)), 0); err == nil {
					t.Cleanup(func() { removeMemcg(dir) })
					return dir, filepath.Join(dir, "memory.events")
				}
			}
			_ = os.Remove(dir)
		}
		errs = append(errs, errors.New("cgroup v2: no memory controller here, or not allowed"))
	} else {
		errs = append(errs, err)
	}
	if base, err := memcgV1(); err == nil {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o755); err == nil {
			if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(strconv.FormatInt(limit, 10)), 0); err == nil {
				_ = os.WriteFile(filepath.Join(dir, "memory.swappiness"), []byte("0"), 0)
				t.Cleanup(func() { removeMemcg(dir) })
				return dir, filepath.Join(dir, "memory.oom_control")
			}
			_ = os.Remove(dir)
		} else {
			errs = append(errs, err)
		}
	} else {
		errs = append(errs, err)
	}
	t.Skipf("no memory cgroup can be made here: %v", errors.Join(errs...))
	return "", ""
}

// memcgV1 is the directory of this process's cgroup v1 memory cgroup.
func memcgV1() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.SplitN(line, ":", 3); len(f) == 3 && strings.Contains(","+f[1]+",", ",memory,") {
			path = f[2]
		}
	}
	if path == "" {
		return "", errors.New("no cgroup v1 memory controller")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(mi), "\n") {
		f := strings.Fields(line)
		for i, x := range f {
			if x == "-" && i+3 < len(f) && f[i+1] == "cgroup" && strings.Contains(","+f[i+3]+",", ",memory,") && f[3] == "/" {
				return filepath.Join(f[4], path), nil
			}
		}
	}
	return "", errors.New("no cgroup v1 memory mount")
}

// removeMemcg kills what is in dir and removes it.
func removeMemcg(dir string) {
	testkit.Until(2*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, p := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		err := os.Remove(dir)
		return err == nil || errors.Is(err, os.ErrNotExist)
	})
}
