package main

import (
	"encoding/json"
	"fmt"
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

// The shared @playwright/mcp listens on 127.0.0.1:<port>, and every chat's
// pages run in its browser. A page (or the model, through browser_evaluate)
// that opens an MCP session of its own there gets any tool, the hidden
// browser_run_code_unsafe included, which runs in the server's process: it
// sees every chat's context and every file of the bot's user. These are
// the attacks of issue 18, made by chat A's model with the real server and
// Chromium against chat B.

// sharedPort is the shared server's port, from the daemon's log.
func (d *daemon) sharedPort() string {
	d.t.Helper()
	re := regexp.MustCompile(`"msg":"shared MCP server started"[^\n]*"url":"http://127\.0\.0\.1:(\d+)/mcp"`)
	var port string
	testkit.WaitFor(d.t, "the shared server's start", 60*time.Second, func() bool {
		if m := re.FindStringSubmatch(d.logs.String()); m != nil {
			port = m[1]
		}
		return port != ""
	})
	return port
}

// mcpAttack is the JavaScript a page runs (browser_evaluate) to open an
// MCP session on the server at its own origin and call
// browser_run_code_unsafe with code that reads every context's tabs and
// cookies, reads victimFile and writes planted: "GOT-SESSION <result>", or
// "REFUSED <status> <body>". It also says how the server answers a GET of
// /sse (the older transport).
func mcpAttack(victimFile, planted string) string {
	code := `async (page) => {
  const proc = page.constructor.constructor("return process")();
  const fs = proc.getBuiltinModule ? proc.getBuiltinModule("fs") : proc.mainModule.require("fs");
  const out = [];
  for (const c of page.context().browser().contexts()) {
    out.push({pages: c.pages().map((p) => p.url()), cookies: (await c.cookies()).map((k) => k.value)});
  }
  let file = "";
  try { file = fs.readFileSync(` + jsString(victimFile) + `, "utf8"); } catch (e) { file = "unreadable: " + e; }
  try { fs.writeFileSync(` + jsString(planted) + `, "planted"); } catch (e) {}
  return {contexts: out, file};
}`
	return `async () => {
  const h = {"content-type": "application/json", "accept": "application/json, text/event-stream"};
  const post = async (body, sid) => {
    const headers = Object.assign({}, h);
    if (sid) headers["mcp-session-id"] = sid;
    const r = await fetch("/mcp", {method: "POST", headers, body: JSON.stringify(body)});
    return {status: r.status, sid: r.headers.get("mcp-session-id"), text: await r.text()};
  };
  const ac = new AbortController();
  let sse = "SSE error";
  try { const s = await fetch("/sse", {signal: ac.signal}); sse = "SSE " + s.status; ac.abort(); } catch (e) { sse = "SSE " + e; }
  const init = await post({jsonrpc: "2.0", id: 1, method: "initialize",
    params: {protocolVersion: "2025-06-18", capabilities: {}, clientInfo: {name: "page", version: "1"}}});
  if (init.status !== 200) return sse + " REFUSED " + init.status + " " + init.text;
  await post({jsonrpc: "2.0", method: "notifications/initialized"}, init.sid);
  const res = await post({jsonrpc: "2.0", id: 2, method: "tools/call",
    params: {name: "browser_run_code_unsafe", arguments: {code: ` + jsString(code) + `}}}, init.sid);
  return sse + " G" + "OT-SESSION " + res.text; // the marker is not in this source, which results quote

}`
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// attackModel is wallModel with "attack URL" (navigate to URL, then run
// the attack as the page) and "evaluate FUNCTION".
func attackModel(victimFile, planted string) modelReply {
	return func(req llmtest.Request) llmtest.Reply {
		user := lastUserText(req)
		res, _ := toolResultText(req)
		steps := toolSteps(req)
		if url, ok := strings.CutPrefix(user, "attack "); ok {
			switch steps {
			case 0:
				return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, url))
			case 1:
				args, _ := json.Marshal(map[string]string{"function": mcpAttack(victimFile, planted)})
				return call("browser_evaluate", string(args))
			default:
				return llmtest.Text("attack: " + res)
			}
		}
		return wallModel(req)
	}
}

// No page and no model call opens a session on the shared server: from
// its own origin (127.0.0.1, localhost, [::1], 0.0.0.0 at its port), on
// /mcp or /sse, the server refuses; bob's tabs, cookies and files stay
// his, nothing is written into his workspace, and the name the server
// does accept reaches neither the model nor the log.
func TestPageCannotOpenASessionOnTheSharedBrowser(t *testing.T) {
	env := append(browserEnv(t), "PLAYWRIGHT_SHARED=true")
	srv, login := site(t), loginSite(t)
	dataDir := t.TempDir()
	bobWS := filepath.Join(dataDir, "chats", fmt.Sprint(bob))
	victim := filepath.Join(bobWS, "bob-notes.txt")
	planted := filepath.Join(bobWS, "planted-by-alice.txt")
	d := startDaemon(t, attackModel(victim, planted), daemonOptions{extra: env, dataDir: dataDir})
	for range 100 {
		d.model.Push(llmtest.Func(attackModel(victim, planted)))
	}
	d.ask(bob, "read "+login.URL+"/login?as=bob-cookie-4a7f", "The H1 is: ")
	d.ask(bob, "open "+srv.URL+"/bob-secret-tab", "open: ")
	if err := os.WriteFile(victim, []byte("BOB-FILE-SECRET-0d1c"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := d.sharedPort()
	for _, origin := range []string{"127.0.0.1", "localhost", "[::1]", "0.0.0.0"} {
		got := d.ask(alice, "attack http://"+origin+":"+port+"/", "attack: ")
		t.Logf("from http://%s:%s/: %.600s", origin, port, got)
		for _, leak := range []string{"bob-cookie-4a7f", "bob-secret-tab", "BOB-FILE-SECRET-0d1c", "GOT-SESSION", "SSE 200"} {
			if strings.Contains(got, leak) {
				t.Errorf("from http://%s:%s/ alice's page reached the shared server (%q in %.300q)", origin, port, leak, got)
			}
		}
	}
	if _, err := os.Stat(planted); err == nil {
		t.Errorf("alice's page wrote into bob's workspace")
	}
	d.ask(bob, "read "+login.URL+"/whoami", "The H1 is: ")
	if got := lastWithPrefix(d.texts(bob), "The H1 is: "); !strings.Contains(got, "cookie=bob-cookie-4a7f") {
		t.Errorf("bob's browser after the attacks: %q, want his login", got)
	}

	// The name the server accepts is in its environment only (not its
	// command line), and nowhere the model or the log could show it.
	name := allowedHost(t, d)
	if name == "" {
		t.Fatal("the shared server has no allowed host in its environment")
	}
	if !regexp.MustCompile(`^vb-[0-9a-f]{32}\.invalid$`).MatchString(name) {
		t.Errorf("allowed host %q, want vb-<128 random bits>.invalid", name)
	}
	var requests strings.Builder
	for _, req := range d.model.Requests() {
		b, _ := json.Marshal(req.JSON)
		requests.Write(b)
	}
	d.tg.Message(alice, alice, "/mcp playwright")
	d.waitText(alice, "shared process: pid ")
	for what, text := range map[string]string{"a model request": requests.String(), "the log": d.logs.String(),
		"a chat message": strings.Join(append(d.texts(alice), d.texts(bob)...), "\n")} {
		if strings.Contains(text, name) {
			t.Errorf("%s holds the shared server's host name", what)
		}
	}
	// check starts a server of its own, with a name of its own.
	if _, out := checkOutput(t, env); regexp.MustCompile(`vb-[0-9a-f]{32}`).MatchString(out) {
		t.Errorf("check shows a host name:\n%s", out)
	}
}

// allowedHost is PLAYWRIGHT_MCP_ALLOWED_HOSTS of the daemon's shared
// server, read from /proc (and checked absent from its command line).
func allowedHost(t *testing.T, d *daemon) string {
	t.Helper()
	for _, pid := range markedPIDs(ownerMark(d.dataDir)) {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), "--port") || !strings.Contains(string(cmdline), "playwright") {
			continue
		}
		if strings.Contains(string(cmdline), "--allowed-hosts") {
			t.Errorf("the shared server's command line names its allowed hosts: %q", cmdline)
		}
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range strings.Split(string(environ), "\x00") {
			if v, ok := strings.CutPrefix(kv, "PLAYWRIGHT_MCP_ALLOWED_HOSTS="); ok {
				return v
			}
		}
	}
	return ""
}

// No model call reaches past the chat's own context and workspace: the
// hidden tools (browser_run_code_unsafe, the storage tools) cannot be
// called by name nor found by tool search; the file tools refuse bob's
// workspace by absolute path, by ../ and through a symlink in alice's; and
// file:// pages are refused.
func TestModelCannotReachAnotherChatThroughTheBrowser(t *testing.T) {
	env := append(browserEnv(t), "PLAYWRIGHT_SHARED=true", "LLM_TOOL_SEARCH=on")
	login, up := loginSite(t), newUploadSite(t)
	dataDir := t.TempDir()
	aliceWS, bobWS := filepath.Join(dataDir, "chats", fmt.Sprint(alice)), filepath.Join(dataDir, "chats", fmt.Sprint(bob))
	victim := filepath.Join(bobWS, "bob-notes.txt")
	hidden := []string{"browser_run_code_unsafe", "browser_storage_state", "browser_set_storage_state", "browser_cookie_list",
		"browser_localstorage_get"}
	model := func(req llmtest.Request) llmtest.Reply {
		user := lastUserText(req)
		res, _ := toolResultText(req)
		if name, ok := strings.CutPrefix(user, "call "); ok {
			if toolSteps(req) == 0 {
				return call(name, `{"code":"async (page) => 1","filename":"x.json"}`)
			}
			return llmtest.Text("call: " + res)
		}
		if query, ok := strings.CutPrefix(user, "search "); ok {
			if toolSteps(req) == 0 {
				return call("tool_search", fmt.Sprintf(`{"query":%q}`, query))
			}
			return llmtest.Text("search: " + res)
		}
		return wallModel(req)
	}
	d := startDaemon(t, model, daemonOptions{extra: env, dataDir: dataDir})
	for range 150 {
		d.model.Push(llmtest.Func(model))
	}
	d.ask(bob, "read "+login.URL+"/login?as=bob-cookie-61e0", "The H1 is: ")
	if err := os.WriteFile(victim, []byte("BOB-FILE-SECRET-77aa"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.ask(alice, "read "+login.URL+"/whoami", "The H1 is: ") // alice's workspace and context exist
	if err := os.Symlink(bobWS, filepath.Join(aliceWS, "link-to-bob")); err != nil {
		t.Fatal(err)
	}

	for _, name := range hidden {
		if got := d.ask(alice, "call "+name, "call: "); !strings.Contains(got, "there is no tool named") {
			t.Errorf("alice's call of %s: %.300q, want no such tool", name, got)
		}
	}
	for _, query := range []string{"run code unsafe javascript", "storage state cookies save restore", "cookie local storage"} {
		got := d.ask(alice, "search "+query, "search: ")
		for _, name := range hidden {
			if strings.Contains(got, name) {
				t.Errorf("tool_search %q offers %s: %.300q", query, name, got)
			}
		}
	}

	for _, p := range []string{victim, "../" + fmt.Sprint(bob) + "/bob-notes.txt", "link-to-bob/bob-notes.txt"} {
		t.Logf("upload %s: %.300s", p, d.ask(alice, "upload "+up.URL+"/upload "+p, "upload: "))
		for _, word := range []string{"shoot", "snap"} {
			target := strings.Replace(p, "bob-notes.txt", "planted-"+word+".png", 1)
			t.Logf("%s %s: %.300s", word, target, d.ask(alice, word+" "+target, word+": "))
		}
	}
	if err := os.WriteFile(filepath.Join(aliceWS, "control.txt"), []byte("CONTROL-OK"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.ask(alice, "upload "+up.URL+"/upload control.txt", "upload: ")
	testkit.WaitFor(t, "the control upload", 30*time.Second, func() bool {
		got := up.got()
		return len(got) > 0 && string(got[len(got)-1]) == "CONTROL-OK"
	})
	for _, b := range up.got() {
		if strings.Contains(string(b), "BOB-FILE-SECRET-77aa") {
			t.Errorf("alice's page received bob's file")
		}
	}
	if planted, _ := filepath.Glob(filepath.Join(bobWS, "planted-*")); len(planted) > 0 {
		t.Errorf("alice's browser wrote into bob's workspace: %v", planted)
	}

	for _, url := range []string{"file:///etc/passwd", "file://" + victim, "file://" + filepath.Join(aliceWS, "control.txt")} {
		got := d.ask(alice, "open "+url, "open: ")
		if strings.Contains(got, "root:") || strings.Contains(got, "BOB-FILE-SECRET") || strings.Contains(got, "CONTROL-OK") ||
			!strings.Contains(got, "protocol is blocked") {
			t.Errorf("alice's browser opened %s: %.300q", url, got)
		}
	}
	d.ask(bob, "read "+login.URL+"/whoami", "The H1 is: ")
	if got := lastWithPrefix(d.texts(bob), "The H1 is: "); !strings.Contains(got, "cookie=bob-cookie-61e0") {
		t.Errorf("bob's browser after the attacks: %q, want his login", got)
	}
}

// What a page can do with the bot's own listeners (HTTP_ADDR, here on
// 127.0.0.1 as the image's default 0.0.0.0 is reachable too, and
// METRICS_ADDR on loopback as in the image): read /healthz and, on
// METRICS_ADDR, /metrics (documented: no secrets there), but not feed the
// bot an update through the webhook (its secret token is not the page's to
// know) nor finish a login through the OAuth callback (its state neither).
func TestPageAndTheBotsOwnListener(t *testing.T) {
	metricsAddr := freeAddr(t)
	env := append(browserEnv(t), "PLAYWRIGHT_SHARED=true", "METRICS_ADDR="+metricsAddr)
	forged := `{"update_id":987654,"message":{"message_id":77,"date":1700000000,"chat":{"id":200,"type":"private"},` +
		`"from":{"id":200,"is_bot":false,"first_name":"b"},"text":"FORGED-UPDATE-5e2b"}}`
	fn := `async () => {
  const out = [];
  for (const headers of [{"content-type": "application/json"},
      {"content-type": "application/json", "x-telegram-bot-api-secret-token": "guessed-secret"}]) {
    try { const r = await fetch("/telegram/hook", {method: "POST", headers, body: ` + jsString(forged) + `}); out.push(r.status); }
    catch (e) { out.push(String(e)); }
  }
  return out.join(",");
}`
	args, _ := json.Marshal(map[string]string{"function": fn})
	model := func(req llmtest.Request) llmtest.Reply {
		if lastUserText(req) != "forge" {
			return wallModel(req)
		}
		if toolSteps(req) == 0 {
			return call("browser_evaluate", string(args))
		}
		res, _ := toolResultText(req)
		return llmtest.Text("forged: " + res)
	}
	d := startDaemon(t, model, daemonOptions{extra: env, webhook: true})
	for range 60 {
		d.model.Push(llmtest.Func(model))
	}
	var addr string
	for _, kv := range d.environ {
		if v, ok := strings.CutPrefix(kv, "HTTP_ADDR="); ok {
			addr = v
		}
	}
	// The page's text may reach the result inline or, when long, as a
	// snapshot file: that the page was served (no error, no 404) is what
	// says the browser reaches the listener.
	if got := d.ask(alice, "open http://"+metricsAddr+"/metrics", "open: "); !strings.Contains(got, "Page URL: http://"+metricsAddr+"/metrics") ||
		strings.Contains(got, "HTTP status: 4") || strings.Contains(got, "ERR_") {
		t.Errorf("/metrics on METRICS_ADDR from the browser: %q", got)
	}
	if got := d.ask(alice, "open http://"+addr+"/metrics", "open: "); !strings.Contains(got, "404") || strings.Contains(got, "go_goroutines") {
		t.Errorf("/metrics on HTTP_ADDR from the browser: %.300q, want 404", got)
	}
	if got := d.ask(alice, "open http://"+addr+"/mcp/oauth/callback?state=guessed&code=x", "open: "); !strings.Contains(got, "no login waits for this answer") {
		t.Errorf("the OAuth callback with a guessed state: %.300q", got)
	}
	d.ask(alice, "open http://"+addr+"/healthz", "open: ") // the page's origin is the listener's
	if got := d.ask(alice, "forge", "forged: "); !strings.Contains(got, "401,401") {
		t.Errorf("the webhook answered a page's forged updates %.300q, want 401 twice", got)
	}
	d.ask(bob, "remember control", "noted")
	for _, req := range d.model.Requests() {
		b, _ := json.Marshal(req.JSON)
		if strings.Contains(string(b), "FORGED-UPDATE-5e2b") && !strings.Contains(string(b), "x-telegram-bot-api-secret-token") {
			t.Errorf("a forged update reached the model")
		}
	}
	if texts := d.texts(bob); len(texts) != 1 {
		t.Errorf("bob's chat: %q, want the one answer to his own message", texts)
	}
}
