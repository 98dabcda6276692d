package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The test binary plays three parts, chosen by dumpableRole: a target
// that calls makeUndumpable (or, for the control, does not) and waits; and
// a reader, a process of the target's user, that tries to read the
// target's /proc/<pid>/environ, as an MCP server of the bot could.
const (
	dumpableRole = "VOLCANIC_TEST_DUMPABLE_ROLE"
	dumpablePID  = "VOLCANIC_TEST_DUMPABLE_PID"
	canaryVar    = "VOLCANIC_TEST_CANARY"
)

// environRead is what the reader reports.
type environRead struct {
	Err        string `json:"err,omitempty"` // the error opening or reading environ
	Permission bool   `json:"permission"`    // the error is EACCES or EPERM
	Bytes      int    `json:"bytes"`
	Canary     bool   `json:"canary"`  // the target's canary variable was in it
	Cmdline    string `json:"cmdline"` // /proc/<pid>/cmdline, world-readable either way
}

// TestDumpableChild is the target or the reader when the parent test runs
// this binary again; otherwise it is skipped.
func TestDumpableChild(t *testing.T) {
	switch os.Getenv(dumpableRole) {
	case "target-undumpable", "target-dumpable":
		if os.Getenv(dumpableRole) == "target-undumpable" {
			makeUndumpable(os.Stderr)
		}
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it
		os.Exit(0)
	case "reader":
		pid := os.Getenv(dumpablePID)
		var r environRead
		b, err := os.ReadFile("/proc/" + pid + "/environ")
		if err != nil {
			r.Err = err.Error()
			r.Permission = errors.Is(err, fs.ErrPermission)
		}
		r.Bytes = len(b)
		r.Canary = strings.Contains(string(b), canaryVar+"=")
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		r.Cmdline = strings.ReplaceAll(string(cmdline), "\x00", " ")
		_ = json.NewEncoder(os.Stdout).Encode(r)
		os.Exit(0)
	default:
		t.Skip("run by TestUndumpable")
	}
}

// TestUndumpable proves that a process of the same user cannot read the
// bot's environment once makeUndumpable ran, and, as the control, that it
// can read the same process's environment without the call.
func TestUndumpable(t *testing.T) {
	exe, cred := dumpableUser(t)
	for _, tt := range []struct {
		role     string
		readable bool
	}{
		{"target-dumpable", true}, // the control: without makeUndumpable, readable
		{"target-undumpable", false},
	} {
		t.Run(tt.role, func(t *testing.T) {
			pid := startDumpableTarget(t, exe, cred, tt.role)
			r := readEnviron(t, exe, cred, pid)
			t.Logf("reader: %+v", r)
			if !strings.Contains(r.Cmdline, "TestDumpableChild") {
				t.Fatalf("the reader does not see the target at all (cmdline %q)", r.Cmdline)
			}
			if tt.readable {
				if r.Err != "" || !r.Canary {
					t.Fatalf("control: the reader could not read a dumpable process's environment (%+v), so the test proves nothing", r)
				}
				return
			}
			if r.Canary {
				t.Fatalf("a process of the same user read the environment of the undumpable process (%d bytes)", r.Bytes)
			}
			if r.Err != "" && !r.Permission {
				t.Fatalf("reading environ failed with %q, want permission denied", r.Err)
			}
		})
	}
}

// dumpableUser returns the binary to run and the user to run target and
// reader as: this user, or, for root, whose CAP_SYS_PTRACE reads any
// process, nobody (65534) with a copy of the test binary it can run.
func dumpableUser(t *testing.T) (string, *syscall.Credential) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return exe, nil
	}
	dir, err := os.MkdirTemp("", "undumpable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(dir, "volcanicbot.test")
	if err := copyFile(exe, cp, 0o755); err != nil {
		t.Fatal(err)
	}
	return cp, &syscall.Credential{Uid: 65534, Gid: 65534}
}

func copyFile(from, to string, mode os.FileMode) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		return err
	}
	return dst.Close()
}

func dumpableCmd(exe string, cred *syscall.Credential, env ...string) *exec.Cmd {
	cmd := exec.Command(exe, "-test.run=^TestDumpableChild$")
	cmd.Dir = filepath.Dir(exe)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	return cmd
}

// startDumpableTarget starts a target, waits until it is ready (after
// makeUndumpable, for that role) and returns its pid. It ends when the test
// does.
func startDumpableTarget(t *testing.T, exe string, cred *syscall.Credential, role string) int {
	t.Helper()
	var canary [8]byte
	_, _ = rand.Read(canary[:])
	cmd := dumpableCmd(exe, cred, dumpableRole+"="+role, canaryVar+"="+hex.EncodeToString(canary[:]))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		if cred != nil && errors.Is(err, syscall.EPERM) {
			t.Skipf("root cannot run a process as nobody here (a user namespace without uid 65534?): %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("target: %v", err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("target said %q (%v)", line, err)
	}
	return cmd.Process.Pid
}

// readEnviron runs a reader against pid, as the same user as the target.
func readEnviron(t *testing.T, exe string, cred *syscall.Credential, pid int) environRead {
	t.Helper()
	out, err := dumpableCmd(exe, cred, dumpableRole+"=reader", dumpablePID+"="+strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("reader: %v", err)
	}
	var r environRead
	// The first line; the test framework may print after it.
	line, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("reader said %q: %v", out, err)
	}
	return r
}
