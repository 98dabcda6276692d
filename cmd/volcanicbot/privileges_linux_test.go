package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/pairing"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The commands the docs have the operator run in the container —
// `docker exec <container> volcanicbot login <server>`, `… check`, `… allow
// <code>`, `… users`
// — run as root there, beside a bot that runs as uid 10001. They work as
// the data directory's owner: everything they leave in the data
// directory, in HOME and in the temporary directory is that user's (a
// root check left root-owned browser files the bot could not write). The
// real binary's main, started as root, with the real browser.
func TestRootCommandsRunAsTheDataDirOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the commands must start as root to show that they stop being it")
	}
	const owner = 10001 // the image's user volcanic; no /etc/passwd entry needed
	base := t.TempDir()
	// uid 10001 must reach what is under it: the test's temporary folders are 0700.
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(base, "volcanicbot") // this test binary, where 10001 may run it (as main, or as the fake server)
	copyExecutable(t, bin)
	mkdir := func(name string, mode os.FileMode, uid int) string {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, uid); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	data, home, tmp, agent := mkdir("data", 0o700, owner), mkdir("home", 0o700, owner), mkdir("tmp", 0o1777, 0), mkdir("agent", 0o755, 0)
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fake": map[string]any{"command": bin, "env": fakemcp.Command().Env, "startupTimeoutSeconds": 20, "toolPrefix": "fake_"}}})
	if err := os.WriteFile(filepath.Join(agent, "settings.json"), settings, 0o644); err != nil {
		t.Fatal(err)
	}
	// A stranger's code, as the bot (10001) wrote it.
	req, err := pairing.New(filepath.Join(data, "access"), nil, nil).Code(555, 555, "Eve")
	if err != nil {
		t.Fatal(err)
	}
	chownTree(t, data, owner)

	oauth := fakemcp.NewOAuthServer(t) // a server at a URL that wants a login
	environ := []string{asMainEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp,
		"VOLCANIC_DATA_DIR=" + data, "VOLCANIC_AGENT_DIR=" + agent, "LOG_FORMAT=json", "MCP__SERVERS__REMOTE__URL=" + oauth.URL + "/mcp"}
	environ = append(environ, browserEnv(t)...)
	volcanicbot := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = environ, base
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("volcanicbot %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// login: the address to open, then the address the browser ended on.
	login := exec.Command(bin, "login", "remote")
	login.Env, login.Dir = environ, base
	stdin, err := login.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var loginOut testkit.SyncBuffer
	login.Stdout, login.Stderr = &loginOut, &loginOut
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	authorize := regexp.MustCompile(`(?m)^  (http\S+/authorize\S+)$`)
	if !testkit.Until(30*time.Second, func() bool { return authorize.FindStringSubmatch(loginOut.String()) != nil }) {
		t.Fatalf("login printed no address:\n%s", loginOut.String())
	}
	io.WriteString(stdin, fakemcp.Browse(t, authorize.FindStringSubmatch(loginOut.String())[1])+"\n")
	if err := login.Wait(); err != nil || !strings.Contains(loginOut.String(), "remote: logged in") {
		t.Fatalf("login: %v\n%s", err, loginOut.String())
	}

	out := volcanicbot("check")
	if !strings.Contains(out, "configuration: ok") || !strings.Contains(out, "browser: ok") {
		t.Errorf("check:\n%s", out)
	}
	if out := volcanicbot("allow", req.Code); !strings.Contains(out, "added Eve (id 555)") {
		t.Errorf("allow: %s", out)
	}
	if out := volcanicbot("users"); !strings.Contains(out, "555") {
		t.Errorf("users: %s", out)
	}

	// Everything the commands left is the owner's, writable by it.
	for _, dir := range []string{data, home, tmp} {
		n := 0
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || path == tmp {
				return err
			}
			n++
			fi, err := d.Info()
			if err != nil {
				return nil // gone meanwhile (a browser's temporary file)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if st.Uid != owner || fi.Mode()&0o200 == 0 && fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("%s: owner %d, mode %v: the bot (uid %d) cannot write it", path, st.Uid, fi.Mode(), owner)
			}
			return nil
		})
		t.Logf("%s: %d entries", dir, n)
	}
}

// copyExecutable copies the running test binary to path, 0755.
func copyExecutable(t *testing.T, path string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// chownTree gives everything under dir to uid.
func chownTree(t *testing.T, dir string, uid int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}
