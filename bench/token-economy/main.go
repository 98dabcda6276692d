// Command token-economy measures what a browsing chat costs in input
// tokens: a scripted model (the llmtest fake of the OpenAI API) drives the
// real volcanicbot binary, with the real @playwright/mcp and Chromium,
// server-everything and a 60-tool server beside it, through a 20-step
// browse of pages nobody on the project wrote (the Go spec, Debian's HTML
// manuals), served from 127.0.0.1. Every request the bot sends is counted
// with the o200k tokenizer, for two runs of the bot — LLM_TOOL_SEARCH=off
// and as shipped (auto) — and for the naive client, computed from the off
// run's transcript: every schema in every request and every result
// verbatim (the whole saved result where the bot gave the model its head),
// nothing left out. See bench/token-economy/run.sh and docs/performance.md.
//
//	token-economy -bin bin/volcanicbot -npm tools/npm/node_modules/.bin [-chromium /usr/bin/chromium]
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/bench/internal/botrun"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

const (
	chatID        = 1001
	contextTokens = 100_000 // LLM_CONTEXT_TOKENS, the default
	// imageTokens is what one screenshot is counted as (the bot's budget
	// counts the same).
	imageTokens = 1600
)

func main() {
	fakemcp.MainIfRequested() // the 60-tool server is this binary again
	bin := flag.String("bin", "bin/volcanicbot", "the volcanicbot binary")
	npm := flag.String("npm", "tools/npm/node_modules/.bin", "folder of playwright-mcp and mcp-server-everything")
	chromium := flag.String("chromium", "/usr/bin/chromium", "the browser")
	goroot := flag.String("goroot", "", "the Go root whose doc/go_spec.html is browsed (go env GOROOT)")
	flag.Parse()
	if *goroot == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "token-economy: -goroot is not set and go env GOROOT failed:", err)
			os.Exit(1)
		}
		*goroot = strings.TrimSpace(string(out))
	}
	if err := run(*bin, *npm, *chromium, *goroot); err != nil {
		fmt.Fprintln(os.Stderr, "token-economy:", err)
		os.Exit(1)
	}
}

// request is one model request as counted.
type request struct {
	label    string // the step's tool call or answer
	tokens   int    // the whole request
	tools    int    // the tool list
	deferred int    // the system prompt's list of deferred tools
	system   int    // the system prompt
	unknown  bool   // its last results include an unknown-tool answer
	failed   bool   // its last results include a tool's error
}

func run(bin, npm, chromium, goroot string) error {
	for _, p := range []string{bin, filepath.Join(npm, "playwright-mcp"), filepath.Join(npm, "mcp-server-everything"), chromium} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s is missing (make build; npm ci in tools/npm; apt-get install chromium)", p)
		}
	}
	site, err := serveSite(goroot)
	if err != nil {
		return err
	}
	defer site.Close()
	tok := &llm.Tokenizer{}

	results := map[string][]request{}
	var offData string
	for _, mode := range []string{"off", "auto"} {
		data, reqs, err := runBot(bin, npm, chromium, site.URL, mode, tok)
		if err != nil {
			return fmt.Errorf("LLM_TOOL_SEARCH=%s: %w", mode, err)
		}
		results[mode] = reqs
		if mode == "off" {
			offData = data
		} else {
			defer os.RemoveAll(data)
		}
	}
	defer os.RemoveAll(offData)
	naive, err := transcriptRequests(offData, results["off"], tok, true)
	if err != nil {
		return err
	}
	kept, err := transcriptRequests(offData, results["off"], tok, false)
	if err != nil {
		return err
	}
	report(naive, kept, results["off"], results["auto"])
	return nil
}

// site serves the pages: the Go spec and Debian's HTML manuals.
type siteServer struct {
	URL string
	srv *http.Server
	ln  net.Listener
}

func (s *siteServer) Close() { s.srv.Close() }

func serveSite(goroot string) (*siteServer, error) {
	mux := http.NewServeMux()
	mux.Handle("/go/", http.StripPrefix("/go/", http.FileServer(http.Dir(filepath.Join(goroot, "doc")))))
	mux.Handle("/libffi/", http.StripPrefix("/libffi/", http.FileServer(http.Dir("/usr/share/doc/libffi8/html"))))
	mux.Handle("/underscore/", http.StripPrefix("/underscore/", http.FileServer(http.Dir("/usr/share/doc/libjs-underscore"))))
	for _, p := range []string{filepath.Join(goroot, "doc", "go_spec.html"), "/usr/share/doc/libffi8/html/index.html", "/usr/share/doc/libjs-underscore/index.html"} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s is missing (Debian: apt-get install libffi-dev libjs-underscore)", p)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &siteServer{URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln}
	go s.srv.Serve(ln) //nolint:errcheck // ends with Close
	return s, nil
}

// turns are the user's messages; the script answers them.
var turns = []string{
	"Open the Go spec and tell me what it says about identifiers.",
	"Open the libffi manual in a new tab and find how closures work.",
	"Go to the underscore docs and filter the functions for map.",
	"Two more things: what is 2+3 on the everything server, and which issues are open in volcanicbot/volcanicbot?",
}

// step is one scripted model answer; res is the text of the last tool
// results.
type step struct {
	label string
	reply func(site, res string) llmtest.Reply
}

var (
	refRe = func(role, name string) *regexp.Regexp {
		return regexp.MustCompile(role + ` "` + regexp.QuoteMeta(name) + `"[^\n]*\[ref=([a-z0-9]+)\]`)
	}
	savedRe     = regexp.MustCompile(`saved in the workspace at (results/\S+\.txt)`)
	snapshotRe  = regexp.MustCompile(`\[Snapshot\]\((browser/page-[^)]+\.yml)\)`)
	searchStep  = 6 // the script step before which the shipped bot searches (browser_tabs is deferred)
	finalMarker = "[end of turn]"
)

func toolCall(name, args string) llmtest.Reply {
	return llmtest.ToolCalls(llm.ToolCall{ID: fmt.Sprintf("call_%s_%d", name, time.Now().UnixNano()), Name: name, Arguments: json.RawMessage(args)})
}

func clickRef(role, name string) func(string, string) llmtest.Reply {
	re := refRe(role, name)
	return func(_, res string) llmtest.Reply {
		m := re.FindStringSubmatch(res)
		if m == nil {
			return llmtest.Text("no ref for " + name + " " + finalMarker)
		}
		return toolCall("browser_click", fmt.Sprintf(`{"element":%q,"target":%q}`, name, m[1]))
	}
}

var script = []step{
	// turn 1: 6 requests
	{"browser_navigate go_spec.html", func(site, _ string) llmtest.Reply {
		return toolCall("browser_navigate", fmt.Sprintf(`{"url":%q}`, site+"/go/go_spec.html"))
	}},
	{"browser_click \"identifier\"", clickRef("link", "identifier")},
	{"browser_press_key PageDown (deferred, called by name)", func(string, string) llmtest.Reply {
		return toolCall("browser_press_key", `{"key":"PageDown"}`)
	}},
	{"browser_snapshot", func(string, string) llmtest.Reply { return toolCall("browser_snapshot", `{}`) }},
	{"read (the saved result, or the snapshot file)", func(_, res string) llmtest.Reply {
		path := ""
		if m := savedRe.FindStringSubmatch(res); m != nil {
			path = m[1]
		} else if m := snapshotRe.FindStringSubmatch(res); m != nil {
			path = m[1]
		}
		if path == "" {
			return llmtest.Text("nothing to read " + finalMarker)
		}
		return toolCall("read", fmt.Sprintf(`{"path":%q,"offset":400,"limit":200}`, path))
	}},
	{"answer", func(string, string) llmtest.Reply {
		return llmtest.Text("Identifiers name program entities such as variables and types. " + finalMarker)
	}},
	// turn 2: 8 requests (9 with the search)
	{"browser_tabs new", func(string, string) llmtest.Reply { return toolCall("browser_tabs", `{"action":"new"}`) }},
	{"browser_navigate libffi", func(site, _ string) llmtest.Reply {
		return toolCall("browser_navigate", fmt.Sprintf(`{"url":%q}`, site+"/libffi/index.html"))
	}},
	{"browser_click \"Using libffi\"", clickRef("link", "Using libffi")},
	{"browser_snapshot", func(string, string) llmtest.Reply { return toolCall("browser_snapshot", `{}`) }},
	{"browser_click \"The Closure API\"", clickRef("link", "The Closure API")},
	{"browser_navigate_back (deferred, called by name)", func(string, string) llmtest.Reply {
		return toolCall("browser_navigate_back", `{}`)
	}},
	{"browser_take_screenshot (deferred, called by name)", func(string, string) llmtest.Reply {
		return toolCall("browser_take_screenshot", `{"type":"png"}`)
	}},
	{"answer", func(string, string) llmtest.Reply {
		return llmtest.Text("ffi_closure_alloc and ffi_prep_closure_loc make closures. " + finalMarker)
	}},
	// turn 3: 4 requests
	{"browser_navigate underscore", func(site, _ string) llmtest.Reply {
		return toolCall("browser_navigate", fmt.Sprintf(`{"url":%q}`, site+"/underscore/index.html"))
	}},
	{"browser_snapshot", func(string, string) llmtest.Reply { return toolCall("browser_snapshot", `{}`) }},
	{"browser_type \"map\" into Filter", func(_, res string) llmtest.Reply {
		m := refRe("textbox", "Filter").FindStringSubmatch(res)
		if m == nil {
			return llmtest.Text("no filter box " + finalMarker)
		}
		return toolCall("browser_type", fmt.Sprintf(`{"element":"Filter","target":%q,"text":"map"}`, m[1]))
	}},
	{"answer", func(string, string) llmtest.Reply {
		return llmtest.Text("map, mapObject and flatMap remain. " + finalMarker)
	}},
	// turn 4: 2 requests
	{"get-sum (everything) and list_issues (the 60-tool server), deferred, called by name at once", func(string, string) llmtest.Reply {
		return llmtest.ToolCalls(
			llm.ToolCall{ID: "call_sum", Name: "get-sum", Arguments: json.RawMessage(`{"a":2,"b":3}`)},
			llm.ToolCall{ID: "call_issues", Name: "list_issues", Arguments: json.RawMessage(`{"owner":"volcanicbot","repo":"volcanicbot","state":"open"}`)})
	}},
	{"answer", func(string, string) llmtest.Reply {
		return llmtest.Text("2+3 is 5; the issues are listed above. " + finalMarker)
	}},
}

// runBot runs the bot with LLM_TOOL_SEARCH=mode through the turns, the
// scripted model answering at site. It returns the bot's data folder (the
// caller removes it) and the requests the bot sent the model, counted with
// tok.
func runBot(bin, npm, chromium, site, mode string, tok *llm.Tokenizer) (string, []request, error) {
	data, err := os.MkdirTemp("", "token-economy-*")
	if err != nil {
		return "", nil, err
	}
	agent := filepath.Join(data, "agent")
	if err := writeSettings(agent, npm); err != nil {
		return data, nil, err
	}

	tg := telegramtest.Start(telegramtest.Options{})
	defer tg.Close()
	m := &scriptedModel{site: site, tok: tok}
	model := llmtest.Start(llm.ProviderOpenAI, m.reply, m.fail)
	defer model.Close()

	bot, err := botrun.Start(bin, data, []string{
		"HOME=" + data, "PATH=" + os.Getenv("PATH"),
		"TELEGRAM_BOT_TOKEN=" + tg.Token(), "TELEGRAM_API_URL=" + tg.URL(),
		fmt.Sprintf("TELEGRAM_ALLOWED_USERS=%d", chatID),
		"VOLCANIC_DATA_DIR=" + filepath.Join(data, "data"), "VOLCANIC_AGENT_DIR=" + agent,
		"LLM_PROVIDER=openai", "LLM_MODEL=bench", "OPENAI_API_KEY=sk-bench-0123456789", "OPENAI_BASE_URL=" + model.URL,
		fmt.Sprintf("LLM_CONTEXT_TOKENS=%d", contextTokens), "LLM_TOOL_SEARCH=" + mode,
		"PLAYWRIGHT_ENABLED=true", "PLAYWRIGHT_COMMAND=" + filepath.Join(npm, "playwright-mcp"),
		"PLAYWRIGHT_EXECUTABLE_PATH=" + chromium, "PLAYWRIGHT_NO_SANDBOX=true",
		"LOG_FORMAT=json", "LOG_LEVEL=debug",
	})
	if err != nil {
		return data, nil, err
	}
	defer bot.Stop()
	for i, text := range turns {
		tg.Message(chatID, chatID, text)
		if err := waitAnswer(tg, func() string { return m.answer(i) }, 5*time.Minute); err != nil {
			return data, nil, fmt.Errorf("turn %d: %w (log: %s)", i+1, err, bot.LogName())
		}
	}
	bot.Stop()
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintf(os.Stderr, "LLM_TOOL_SEARCH=%s: %d requests; answers %q\n", mode, len(m.reqs), m.finals)
	if len(m.failures) > 0 {
		return data, nil, errors.New(strings.Join(m.failures, "; "))
	}
	return data, m.reqs, nil
}

// writeSettings writes the settings.json of the agent folder: the
// everything server, and the 60-tool server (this binary again).
func writeSettings(agent, npm string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": filepath.Join(npm, "mcp-server-everything")},
		"code":       map[string]any{"command": self, "env": map[string]string{fakemcp.EnvMode: fakemcp.ModeManyTools}},
	}})
	if err := os.MkdirAll(agent, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(agent, "settings.json"), settings, 0o600)
}

// scriptedModel is the model of one run: it answers each request with the
// script's next step (searching once before searchStep, when the bot
// offers tool_search) and counts the request.
type scriptedModel struct {
	site string
	tok  *llm.Tokenizer

	mu       sync.Mutex
	reqs     []request
	k        int // the script's next step
	searched bool
	failures []string // what the fake found wrong
	finals   []string // the answers that ended turns
}

func (m *scriptedModel) reply(req llmtest.Request) llmtest.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := countRequest(req.Body, m.tok)
	res := lastResults(req.Body)
	var reply llmtest.Reply
	switch {
	case m.k == searchStep && !m.searched && offers(req.Body, "tool_search"):
		m.searched = true
		r.label = "tool_search \"open a new browser tab\" (shipped only)"
		reply = toolCall("tool_search", `{"query":"open a new browser tab"}`)
	case m.k < len(script):
		r.label = script[m.k].label
		reply = script[m.k].reply(m.site, res)
		m.k++
	default:
		reply = llmtest.Text("the script is over " + finalMarker)
	}
	r.unknown = strings.Contains(res, "there is no tool named")
	r.failed = strings.Contains(res, "### Error") || strings.Contains(res, "invalid arguments")
	m.reqs = append(m.reqs, r)
	if len(reply.ToolCalls) == 0 {
		reply.Text = fmt.Sprintf("%s (answer %d)", reply.Text, len(m.finals)+1)
		m.finals = append(m.finals, reply.Text)
	}
	return reply
}

func (m *scriptedModel) fail(format string, args ...any) {
	m.mu.Lock()
	m.failures = append(m.failures, fmt.Sprintf(format, args...))
	m.mu.Unlock()
}

// answer is the model's i-th answer that ended a turn, or "".
func (m *scriptedModel) answer(i int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i < len(m.finals) {
		return m.finals[i]
	}
	return ""
}

// waitAnswer waits until the model gave the turn's answer and the chat
// got it.
func waitAnswer(tg *telegramtest.Fake, answer func() string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if a := answer(); a != "" {
			for _, m := range tg.Sent(chatID) {
				if m.Method == "sendMessage" && !m.Deleted && strings.Contains(m.Text, a[strings.LastIndex(a, "(answer"):]) {
					return nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("no answer in time")
}

// The OpenAI wire request, as much as is counted.
type wireRequest struct {
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// countRequest counts a request's input tokens as the provider would: the
// text of every message (4 tokens of framing each), every tool's name,
// description and schema (8 of framing each), imageTokens per image.
func countRequest(body []byte, tok *llm.Tokenizer) request {
	var w wireRequest
	_ = json.Unmarshal(body, &w)
	var r request
	for _, t := range w.Tools {
		r.tools += tok.Count(t.Function.Name) + tok.Count(t.Function.Description) + tok.Count(string(t.Function.Parameters)) + 8
	}
	r.tokens = r.tools
	for _, m := range w.Messages {
		r.tokens += 4
		text, images := contentText(m.Content)
		r.tokens += tok.Count(text) + images*imageTokens
		if m.Role == "system" {
			r.system = tok.Count(text) + 4
			if i := strings.Index(text, "## More tools"); i >= 0 {
				section := text[i:]
				if j := strings.Index(section, "\n\nCurrent date:"); j >= 0 {
					section = section[:j]
				}
				r.deferred = tok.Count(section)
			}
		}
		for _, c := range m.ToolCalls {
			r.tokens += tok.Count(c.Function.Name) + tok.Count(c.Function.Arguments) + 4
		}
	}
	return r
}

// contentText is a message content's text and its number of images.
func contentText(raw json.RawMessage) (string, int) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, 0
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	images := 0
	for _, p := range parts {
		if p.Type == "image_url" {
			images++
		}
		b.WriteString(p.Text)
	}
	return b.String(), images
}

// lastResults is the text of the tool messages at the end of a request.
func lastResults(body []byte) string {
	var w wireRequest
	_ = json.Unmarshal(body, &w)
	var parts []string
	for i := len(w.Messages) - 1; i >= 0 && (w.Messages[i].Role == "tool" || (w.Messages[i].Role == "user" && i > 0 && w.Messages[i-1].Role == "tool")); i-- {
		text, _ := contentText(w.Messages[i].Content)
		parts = append([]string{text}, parts...)
	}
	return strings.Join(parts, "\n")
}

func offers(body []byte, tool string) bool {
	var w wireRequest
	_ = json.Unmarshal(body, &w)
	for _, t := range w.Tools {
		if t.Function.Name == tool {
			return true
		}
	}
	return false
}

// transcriptRequests are the off run's requests rebuilt from its
// transcript: the same system prompt and tools (off offers every schema),
// and the whole transcript up to each request, nothing left out. With
// whole, that is the naive client: a result the bot cut to its head counts
// whole, from the file it was saved in. Without, it is the off run with
// every superseded snapshot kept (the budget left nothing else out: no
// request came near LLM_CONTEXT_TOKENS).
func transcriptRequests(data string, off []request, tok *llm.Tokenizer, whole bool) ([]request, error) {
	dirs := chatdir.New(filepath.Join(data, "data"))
	ws := dirs.Workspace(chat.In(chatID))
	f, err := os.Open(filepath.Join(dirs.Private(chat.In(chatID)), "transcript.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var msgs []llm.Message
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var m llm.Message
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Role != "" {
			msgs = append(msgs, m)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	cost := func(m llm.Message) int {
		n := 4
		for _, p := range m.Parts {
			switch {
			case p.Kind == llm.PartText:
				n += tok.Count(p.Text)
			case p.Kind == llm.PartImage:
				n += imageTokens
			case p.ToolCall != nil:
				n += tok.Count(p.ToolCall.Name) + tok.Count(string(p.ToolCall.Arguments)) + 4
			case p.ToolResult != nil:
				n += 4
				full := ""
				for _, c := range p.ToolResult.Content {
					if m := savedRe.FindStringSubmatch(c.Text); whole && c.Kind == llm.PartText && m != nil {
						if b, err := os.ReadFile(filepath.Join(ws, m[1])); err == nil {
							full = string(b)
						}
					}
				}
				if full != "" { // cut by the bot: the naive client has it all
					n += tok.Count(full)
				}
				for _, c := range p.ToolResult.Content {
					switch {
					case c.Kind == llm.PartImage:
						n += imageTokens
					case c.Kind == llm.PartText && full == "":
						n += tok.Count(c.Text)
					}
				}
			}
		}
		return n
	}
	var out []request
	sum, k := 0, 0
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			if k >= len(off) {
				break
			}
			// The system prompt and tools: as in the off run's request.
			out = append(out, request{label: off[k].label, tools: off[k].tools, tokens: off[k].tools + off[k].system + sum})
			k++
		}
		sum += cost(m)
	}
	return out, nil
}

func report(naive, kept, off, shipped []request) {
	fmt.Println("| step | request | naive | search off, snapshots kept | search off | as shipped | shipped tool list |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|")
	var tn, tk, to, ts int
	j := 0
	maxReq := 0
	unknown, failed := 0, 0
	maxOverhead, minOverhead := 0, 1<<30
	for i := range off {
		n, kk, o := naive[i].tokens, kept[i].tokens, off[i].tokens
		for j < len(shipped) && strings.Contains(shipped[j].label, "(shipped only)") {
			s := shipped[j]
			fmt.Printf("| | %s | — | — | — | %d | %d |\n", s.label, s.tokens, s.tools+s.deferred)
			ts += s.tokens
			maxOverhead, minOverhead = max(maxOverhead, s.tools+s.deferred), min(minOverhead, s.tools+s.deferred)
			j++
		}
		s := shipped[j]
		j++
		fmt.Printf("| %d | %s | %d | %d | %d | %d | %d |\n", i+1, off[i].label, n, kk, o, s.tokens, s.tools+s.deferred)
		tn, tk, to, ts = tn+n, tk+kk, to+o, ts+s.tokens
		maxReq = max(maxReq, o, s.tokens)
		maxOverhead, minOverhead = max(maxOverhead, s.tools+s.deferred), min(minOverhead, s.tools+s.deferred)
		if off[i].unknown || s.unknown {
			unknown++
		}
		if off[i].failed || s.failed {
			failed++
		}
	}
	ratio := func(x int) string { return fmt.Sprintf("%.2f of naive", float64(x)/float64(tn)) }
	fmt.Printf("| | **total** | **%d** | **%d** (%s) | **%d** (%s) | **%d** (%s) | |\n", tn, tk, ratio(tk), to, ratio(to), ts, ratio(ts))
	fmt.Println()
	fmt.Printf("tool list per request: naive and search off %d tokens; as shipped %d–%d (the built-ins, the always-loaded tools, the deferred names in the system prompt, and what was loaded)\n",
		off[0].tools, minOverhead, maxOverhead)
	fmt.Printf("superseded snapshots left out: %d tokens over the run with search off (%.0f%%)\n", tk-to, 100*float64(tk-to)/float64(tk))
	fmt.Printf("largest request: %d tokens (LLM_CONTEXT_TOKENS %d); steps after an unknown-tool answer: %d; after a tool error: %d\n",
		maxReq, contextTokens, unknown, failed)
}
