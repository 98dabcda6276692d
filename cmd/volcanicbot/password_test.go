package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

const (
	prefilledPassword = "prefilled-S3cret-Value"
	typedPassword     = "typed-S3cret-Value"
	visibleUser       = "alice-visible-name"
)

// passwordSite serves /form: a login form whose password field is
// prefilled (as a browser's saved login or a page's script would fill it),
// with a visible user name, and /submit, whose H1 says whether the password
// posted is the one typed.
//
// The form holds a frame of another site (localhost, where the form is on
// 127.0.0.1: a process of its own in Chromium) with a prefilled password
// field too.
func passwordSite(t testing.TB) *httptest.Server {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body><input type="password" aria-label="Card PIN" value=%q></body></html>`, prefilledPassword)
	}))
	t.Cleanup(other.Close)
	frame := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/form":
			fmt.Fprintf(w, `<!doctype html><html><body><h1>Unique heading sign in</h1>
<form method="post" action="/submit">
<input type="text" name="user" aria-label="User" value=%q>
<input type="password" name="pw" aria-label="Password" value=%q>
<input type="password" name="pw2" aria-label="Repeat" id="pw2">
<button type="submit">Sign in</button></form>
<iframe src="%s/pin"></iframe>
<script>document.getElementById("pw2").value = %q</script></body></html>`, visibleUser, prefilledPassword, frame, prefilledPassword)
		case "/submit":
			_ = r.ParseForm()
			verdict := "wrong"
			if r.PostForm.Get("pw") == typedPassword && r.PostForm.Get("pw2") == prefilledPassword {
				verdict = "right"
			}
			fmt.Fprintf(w, `<!doctype html><html><body><h1>Unique heading password %s</h1></body></html>`, verdict)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

var refRe = regexp.MustCompile(`textbox "Password"[^\n]*\[ref=(e\d+)\]`)
var yamlRe = regexp.MustCompile("(?s)```yaml.*?```")
var buttonRe = regexp.MustCompile(`button "Sign in"[^\n]*\[ref=(e\d+)\]`)

// signIn is a scripted model: "sign in URL" opens the form, types
// typedPassword into its password field (replacing what was prefilled),
// takes a snapshot and presses the button, then answers with the H1 and
// whether the snapshots showed the user's name.
func signIn(req llmtest.Request) llmtest.Reply {
	user := lastUserText(req)
	res, _ := toolResultText(req)
	url, ok := strings.CutPrefix(user, "sign in ")
	if !ok {
		return llmtest.Text("?")
	}
	switch toolSteps(req) {
	case 0:
		return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, url+"/form"))
	case 1:
		m := refRe.FindStringSubmatch(res)
		if m == nil {
			return llmtest.Text("no password field in: " + res)
		}
		return call("browser_type", fmt.Sprintf(`{"element":"Password","target":%q,"text":%q}`, m[1], typedPassword))
	case 2:
		return call("browser_snapshot", `{}`)
	case 3:
		m := buttonRe.FindStringSubmatch(res)
		if m == nil {
			return llmtest.Text("no button in: " + res)
		}
		return call("browser_click", fmt.Sprintf(`{"element":"Sign in","target":%q}`, m[1]))
	default:
		if m := headingRe.FindStringSubmatch(res); m != nil {
			return llmtest.Text("The H1 is: " + m[1])
		}
		return llmtest.Text("no heading in: " + res)
	}
}

// Passwords stay out of the model: neither a prefilled password nor one
// typed into a password field reaches a request or the transcript through
// a page snapshot, while the form still posts them, and other fields'
// values still show.
func TestPasswordsStayOutOfSnapshots(t *testing.T) {
	for _, mode := range []struct {
		name string
		env  func(testing.TB) []string
	}{{"shared", browserEnv}, {"per chat", perChatBrowserEnv}} {
		t.Run(mode.name, func(t *testing.T) {
			srv := passwordSite(t)
			dataDir := t.TempDir()
			d := startDaemon(t, signIn, daemonOptions{extra: mode.env(t), dataDir: dataDir})
			d.tg.Message(alice, alice, "sign in "+srv.URL)
			testkit.WaitFor(t, "alice's answer", 60*time.Second, func() bool {
				return lastWithPrefix(d.texts(alice), "The H1 is: ") != "" || lastWithPrefix(d.texts(alice), "no ") != ""
			})
			if got := lastWithPrefix(d.texts(alice), "The H1 is: "); got != "The H1 is: Unique heading password right" {
				t.Fatalf("the form did not post the passwords: %q", d.texts(alice))
			}

			results := allToolResults(d)
			if !strings.Contains(results, `textbox "Card PIN"`) {
				t.Errorf("the snapshots do not show the other site's frame\n%.2000s", results)
			}
			if !strings.Contains(results, visibleUser) {
				t.Errorf("the snapshots do not show the user field's value %q: the test sees no values at all\n%.2000s", visibleUser, results)
			}
			if strings.Contains(results, prefilledPassword) {
				t.Errorf("a result the model got shows the prefilled password:\n%.3000s", results)
			}
			// The typed one is the model's own argument, which the result
			// echoes as the code it ran; no snapshot shows it.
			for _, snapshot := range yamlRe.FindAllString(results, -1) {
				if strings.Contains(snapshot, typedPassword) {
					t.Errorf("a snapshot the model got shows the typed password:\n%s", snapshot)
				}
			}
			var requests strings.Builder
			for _, req := range d.model.Requests() {
				b, _ := json.Marshal(req.JSON)
				requests.Write(b)
			}
			if strings.Contains(requests.String(), prefilledPassword) {
				t.Errorf("a model request holds the prefilled password")
			}
			d.stop()
			transcript, err := os.ReadFile(filepath.Join(dataDir, "private", strconv.FormatInt(alice, 10), "transcript.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(transcript), prefilledPassword) {
				t.Errorf("the transcript holds the prefilled password")
			}
			// What @playwright/mcp saves in the workspace (snapshots, logs)
			// the model may read too.
			_ = filepath.WalkDir(filepath.Join(dataDir, "chats"), func(path string, e os.DirEntry, err error) error {
				if err != nil || e.IsDir() || strings.Contains(path, "browser-profile") {
					return nil
				}
				b, err := os.ReadFile(path)
				if err == nil && strings.Contains(string(b), prefilledPassword) {
					t.Errorf("%s holds the prefilled password", path)
				}
				if err == nil && strings.HasSuffix(path, ".yml") && strings.Contains(string(b), typedPassword) {
					t.Errorf("the snapshot %s holds the typed password", path)
				}
				return nil
			})
		})
	}
}
