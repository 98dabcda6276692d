package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

// The browser reaches the chat's workspace only: its tools read
// (browser_file_upload) and write (a screenshot's, a snapshot's filename)
// files of the workspace, and the bot's private state of the chat — the
// transcript, the browser's saved state, the per-chat profile — is not in
// it. These are the attacks of issue 18, made by the model through the
// real @playwright/mcp and Chromium, in both browser modes.

// uploadSite serves /upload, a page with a file input that posts every
// chosen file's bytes to /got; received holds what came, in order.
type uploadSite struct {
	*httptest.Server
	mu       sync.Mutex
	received [][]byte
}

func newUploadSite(t testing.TB) *uploadSite {
	u := &uploadSite{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/upload":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><html><body><h1>Unique heading upload</h1>
<input type="file" id="f" aria-label="pick a file">
<script>
document.getElementById("f").addEventListener("change", async (e) => {
  for (const file of e.target.files) {
    await fetch("/got", {method: "POST", body: await file.arrayBuffer()});
  }
});
</script></body></html>`)
		case "/got":
			b, _ := io.ReadAll(r.Body)
			u.mu.Lock()
			u.received = append(u.received, b)
			u.mu.Unlock()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *uploadSite) got() [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][]byte(nil), u.received...)
}

var anyRefRe = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

// wallModel is a scripted model that attacks the walls on the user's
// word:
//
//	upload URL PATH  cancels a file chooser left open, opens URL
//	                 (uploadSite's /upload), clicks its file input and
//	                 uploads PATH → "upload: <result>"
//	shoot PATH       saves a screenshot to PATH → "shoot: <result>"
//	snap PATH        saves the page's snapshot to PATH → "snap: <result>"
//	open URL         navigates → "open: <result>"
//
// and browses as browse does otherwise.
func wallModel(req llmtest.Request) llmtest.Reply {
	user := lastUserText(req)
	res, _ := toolResultText(req)
	steps := toolSteps(req)
	word, rest, _ := strings.Cut(user, " ")
	switch word {
	case "upload":
		url, path, _ := strings.Cut(rest, " ")
		switch steps {
		case 0: // a file chooser a refused upload left open is cancelled
			return call("browser_file_upload", `{}`)
		case 1:
			return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, url))
		case 2:
			m := anyRefRe.FindStringSubmatch(res[strings.Index(res, "pick a file")+1:])
			if m == nil {
				return llmtest.Text("upload: no file input in " + res)
			}
			return call("browser_click", fmt.Sprintf(`{"element":"the file input","target":%q}`, m[1]))
		case 3:
			return call("browser_file_upload", fmt.Sprintf(`{"paths":[%q]}`, path))
		default:
			return llmtest.Text("upload: " + res)
		}
	case "shoot", "snap":
		switch steps {
		case 0: // a file chooser left open would refuse the call
			return call("browser_file_upload", `{}`)
		case 1:
			tool := map[string]string{"shoot": "browser_take_screenshot", "snap": "browser_snapshot"}[word]
			return call(tool, fmt.Sprintf(`{"filename":%q}`, rest))
		}
		return llmtest.Text(word + ": " + res)
	case "open":
		if steps == 0 {
			return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, rest))
		}
		return llmtest.Text("open: " + res)
	case "remember":
		return llmtest.Text("noted")
	}
	return browse(req)
}

// ask sends text to chat and returns the answer that starts with prefix.
func (d *daemon) ask(chat int64, text, prefix string) string {
	d.t.Helper()
	before := len(d.tg.Sent(chat))
	d.tg.Message(chat, chat, text)
	var got string
	testkit.WaitFor(d.t, "the answer to "+text, 90*time.Second, func() bool {
		got = lastWithPrefix(sentSince(d, chat, before), prefix)
		return got != ""
	})
	return got
}

// privateFile is the chat's private file name wherever this version keeps
// it: its private folder, or the workspace's .volcanic/ of the versions
// before.
func privateFile(dataDir string, chat int64, name string) string {
	for _, p := range []string{
		filepath.Join(dataDir, "private", fmt.Sprint(chat), name),
		filepath.Join(dataDir, "chats", fmt.Sprint(chat), ".volcanic", name),
	} {
		if _, err := os.Lstat(p); err == nil {
			return p
		}
	}
	return ""
}

func TestBrowserCannotReachThePrivateState(t *testing.T) {
	for _, mode := range []string{"shared", "per-chat"} {
		t.Run(mode, func(t *testing.T) {
			env := append(browserEnv(t), "PLAYWRIGHT_SHARED="+map[string]string{"shared": "true", "per-chat": "false"}[mode])
			login, up := loginSite(t), newUploadSite(t)
			const secret = "TRANSCRIPT-SECRET-5b1e"
			const cookie = "alice-cookie-9c2d"
			d := startDaemon(t, wallModel, daemonOptions{extra: env})
			for range 150 {
				d.model.Push(llmtest.Func(wallModel))
			}
			d.ask(alice, "remember "+secret, "noted")
			d.ask(alice, "read "+login.URL+"/login?as="+cookie, "The H1 is: ")
			transcript := privateFile(d.dataDir, alice, "transcript.jsonl")
			if transcript == "" {
				t.Fatal("no transcript")
			}
			var state string
			if mode == "shared" {
				testkit.WaitFor(t, "alice's browser state saved", 30*time.Second, func() bool {
					state = privateFile(d.dataDir, alice, "browser-state.json")
					b, _ := os.ReadFile(state)
					return bytes.Contains(b, []byte(cookie))
				})
			}
			ws := filepath.Join(d.dataDir, "chats", fmt.Sprint(alice))
			rel := func(p string) string { r, _ := filepath.Rel(ws, p); return r }
			targets := []string{
				".volcanic/transcript.jsonl", ".volcanic/browser-state.json", ".volcanic/browser-profile/Default/Cookies",
				transcript, rel(transcript),
				filepath.Join(d.dataDir, "private", fmt.Sprint(alice), "browser-profile", "Default", "Cookies"),
				"../../private/" + fmt.Sprint(alice) + "/browser-profile/Default/Cookies",
			}
			if state != "" {
				targets = append(targets, state, rel(state))
			}
			for _, p := range targets {
				t.Logf("upload %s: %.300s", p, d.ask(alice, "upload "+up.URL+"/upload "+p, "upload: "))
			}
			// The page posts in order: once the control file has come,
			// whatever an upload above sent has come before it.
			if err := os.WriteFile(filepath.Join(ws, "control.txt"), []byte("CONTROL-OK"), 0o600); err != nil {
				t.Fatal(err)
			}
			d.ask(alice, "upload "+up.URL+"/upload control.txt", "upload: ")
			testkit.WaitFor(t, "the control upload", 30*time.Second, func() bool {
				got := up.got()
				return len(got) > 0 && string(got[len(got)-1]) == "CONTROL-OK"
			})
			for _, b := range up.got() {
				if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(cookie)) || bytes.HasPrefix(b, []byte("SQLite format 3")) {
					t.Errorf("a page received the chat's private state: %.200q", b)
				}
			}

			for _, p := range targets {
				for _, word := range []string{"shoot", "snap"} {
					t.Logf("%s %s: %.300s", word, p, d.ask(alice, word+" "+p, word+": "))
				}
			}
			b, err := os.ReadFile(transcript)
			if err != nil || !bytes.Contains(b, []byte(secret)) || !validJSONLines(b) {
				t.Errorf("the transcript after the writes: %.200q (%v), want its lines, whole", b, err)
			}
			if state != "" {
				b, err := os.ReadFile(state)
				if err != nil || !json.Valid(b) || !bytes.Contains(b, []byte(cookie)) {
					t.Errorf("the browser state after the writes: %.200q (%v), want the login, whole", b, err)
				}
			}
			d.ask(alice, "read "+login.URL+"/whoami", "The H1 is: ")
			if got := lastWithPrefix(d.texts(alice), "The H1 is: "); !strings.Contains(got, "cookie="+cookie) {
				t.Errorf("after the attacks alice's browser says %q, want her login", got)
			}
		})
	}
}

func validJSONLines(b []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			return false
		}
	}
	return sc.Err() == nil
}
