package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// realCatalog is @playwright/mcp 0.0.83's and server-everything
// 2026.8.31's tools as they list them (testdata/catalog.json).
func realCatalog(t *testing.T) []chat.CatalogTool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		Server, Name, Description string
		InputSchema               json.RawMessage
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	tools := make([]chat.CatalogTool, len(raw))
	for i, r := range raw {
		tools[i] = mcpclient.Tool{Server: r.Server, MCPName: r.Name, Name: r.Name, Description: r.Description, InputSchema: r.InputSchema}.CatalogTool()
	}
	return tools
}

// entries are tools as the catalogue gives them to the session.
func entries(tools ...mcpclient.Tool) []chat.CatalogTool {
	out := make([]chat.CatalogTool, len(tools))
	for i, t := range tools {
		out[i] = t.CatalogTool()
	}
	return out
}

func names(tools []chat.CatalogTool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func TestSearchWords(t *testing.T) {
	for in, want := range map[string][]string{
		"browser_navigate_back":      {"browser", "navigate", "back"},
		"get-annotated-message":      {"get", "annotat", "message"},
		"Switch between the tabs":    {"switch", "between", "tab"},
		"Echoes back the input":      {"echo", "back", "input"},
		"perPage clickingQueries":    {"per", "page", "click", "query"},
		"upload files to the server": {"upload", "file", "server"},
		"":                           nil,
		"日本語のテキスト":                   {"日本語のテキスト"},
	} {
		if got := searchWords(in); !slices.Equal(got, want) {
			t.Errorf("searchWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// The ranking finds the tool a model would ask for in its own words.
func TestToolSearchRanking(t *testing.T) {
	ix := newToolIndex(realCatalog(t))
	tests := []struct {
		query string
		first string   // the best match
		exact []string // when set: exactly these, in order
	}{
		{query: "switch to another tab", first: "browser_tabs"},
		{query: "open a new tab", first: "browser_tabs"},
		{query: "go back to the previous page", first: "browser_navigate_back"},
		{query: "upload a file", first: "browser_file_upload"},
		{query: "press Enter key", first: "browser_press_key"},
		{query: "hover over an element", first: "browser_hover"},
		{query: "console errors of the page", first: "browser_console_messages"},
		{query: "network requests", first: "browser_network_requests"},
		{query: "evaluate a javascript expression on the page", first: "browser_evaluate"},
		{query: "dark mode color scheme", first: "browser_emulate_media"},
		{query: "wait until text appears", first: "browser_wait_for"},
		{query: "choose an option in a dropdown", first: "browser_select_option"},
		{query: "sum of two numbers", first: "get-sum"},
		{query: "environment variables", first: "get-env"},
		{query: "compress a file with gzip", first: "gzip-file-as-resource"},
		{query: "browser_tabs, browser_drag", exact: []string{"browser_tabs", "browser_drag"}},
		{query: "`browser_hover`", first: "browser_hover"},
		{query: "BROWSER_WAIT_FOR", first: "browser_wait_for"},
	}
	for _, tt := range tests {
		got := names(ix.search(tt.query))
		switch {
		case tt.exact != nil:
			if !slices.Equal(got, tt.exact) {
				t.Errorf("%q: %q, want exactly %q", tt.query, got, tt.exact)
			}
		case len(got) == 0 || got[0] != tt.first:
			t.Errorf("%q: %q, want %s first", tt.query, got, tt.first)
		case len(got) > searchResults:
			t.Errorf("%q: %d matches, more than %d", tt.query, len(got), searchResults)
		}
	}
	for _, q := range []string{"", "   ", "zzqxv", "the of and", strings.Repeat("tabs ", 300)} {
		if got := ix.search(q); len(got) != 0 {
			t.Errorf("%q: %q, want no match", q, names(got))
		}
	}
}

// An empty or absurd query gets the list of what there is, not an error;
// a match gets its description and parameters.
func TestToolSearchResultText(t *testing.T) {
	ix := newToolIndex(realCatalog(t))
	for _, q := range []string{"", "zzqxv", strings.Repeat("x", maxQuery+1)} {
		got := ix.searchResultText(q, nil)
		for _, want := range []string{"- playwright: browser_close, browser_resize", "- everything: echo, get-annotated-message", "Search again"} {
			if !strings.Contains(got, want) {
				t.Errorf("%.20q: %q lacks %q", q, got, want)
			}
		}
	}
	got := ix.searchResultText("switch tab", map[string]bool{"browser_tabs": true})
	for _, want := range []string{"loaded: from your next step on", "- browser_tabs (playwright): List, create, close, or select a browser tab. [already loaded] Parameters: action*, index, url."} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

func boolPtr(b bool) *bool { return &b }

// Which tools are deferred, in each mode, with the servers' overrides.
func TestPlanTools(t *testing.T) {
	catalog := realCatalog(t) // about 4,200 tokens at four bytes a token: over auto's threshold
	small := catalog[25:27]   // two small tools of everything: under it
	pw := mcpconfig.ServerConfig{Name: "playwright", AlwaysLoad: []string{"browser_navigate", "browser_snapshot", "browser_missing"}}
	ev := mcpconfig.ServerConfig{Name: "everything"}
	evNever := ev
	evNever.DeferLoading = boolPtr(false)
	evAlways := ev
	evAlways.DeferLoading = boolPtr(true)
	tests := []struct {
		name     string
		mode     ToolSearch
		ctx      int
		tools    []chat.CatalogTool
		servers  []mcpconfig.ServerConfig
		search   bool
		deferred int
	}{
		{"off", ToolSearchOff, 0, catalog, []mcpconfig.ServerConfig{pw, ev}, false, 0},
		{"auto over the threshold", ToolSearchAuto, 0, catalog, []mcpconfig.ServerConfig{pw, ev}, true, 23 + 13},
		{"auto under the threshold", ToolSearchAuto, 0, small, []mcpconfig.ServerConfig{pw, ev}, false, 0},
		{"auto, a small context lowers the threshold", ToolSearchAuto, 1000, small, []mcpconfig.ServerConfig{pw, ev}, true, 2},
		{"on", ToolSearchOn, 0, small, []mcpconfig.ServerConfig{pw, ev}, true, 2},
		{"deferLoading false", ToolSearchOn, 0, catalog, []mcpconfig.ServerConfig{pw, evNever}, true, 23},
		{"deferLoading true under auto's threshold", ToolSearchAuto, 0, small, []mcpconfig.ServerConfig{pw, evAlways}, true, 2},
		{"deferLoading true, search off", ToolSearchOff, 0, small, []mcpconfig.ServerConfig{pw, evAlways}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PlanTools(PlanOptions{Mode: tt.mode, ContextTokens: tt.ctx}, tt.tools, tt.servers)
			if p.Search != tt.search || len(p.Deferred) != tt.deferred {
				t.Errorf("search %v with %d deferred, want %v with %d (full %d tokens, threshold %d)",
					p.Search, len(p.Deferred), tt.search, tt.deferred, p.FullTokens, p.Threshold)
			}
			if p.Deferred["browser_navigate"] || p.Deferred["browser_snapshot"] {
				t.Error("an alwaysLoad tool is deferred")
			}
			if p.Search && p.OfferedTokens >= p.FullTokens {
				t.Errorf("offered %d tokens, not less than the full %d", p.OfferedTokens, p.FullTokens)
			}
		})
	}
	p := PlanTools(PlanOptions{}, catalog, []mcpconfig.ServerConfig{pw, ev})
	if !slices.Equal(p.MissingAlwaysLoad["playwright"], []string{"browser_missing"}) || len(p.MissingAlwaysLoad) != 1 {
		t.Errorf("missing alwaysLoad %v", p.MissingAlwaysLoad)
	}
}

func searchCall(id, query string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartToolCall,
		ToolCall: &llm.ToolCall{ID: id, Name: ToolSearchName, Arguments: json.RawMessage(`{"query":"` + query + `"}`)}}}}
}

func directCall(id, name string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartToolCall,
		ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{}`)}}}}
}

// A search loads its matches and a call loads its tool, in the order they
// came, for the rest of the turn and loadTurns turns after; then they go.
// The stable part of the tool list never changes.
func TestLoadedTools(t *testing.T) {
	catalog := realCatalog(t)
	servers := []mcpconfig.ServerConfig{{Name: "playwright", AlwaysLoad: []string{"browser_navigate"}}, {Name: "everything"}}
	plan := PlanTools(PlanOptions{Mode: ToolSearchOn}, catalog, servers)
	ts := newToolset(catalog, plan, nil)
	history := []llm.Message{userText("turn 1"), searchCall("1", "browser_tabs"), resultMsg("1", 10, false),
		directCall("2", "get-sum"), resultMsg("2", 10, false), directCall("3", "browser_navigate"), resultMsg("3", 10, false)}
	if got := names(ts.loaded(history)); !slices.Equal(got, []string{"browser_tabs", "get-sum"}) {
		t.Fatalf("loaded %q, want browser_tabs then get-sum (browser_navigate is always loaded)", got)
	}
	specs := ts.specs(ts.loaded(history))
	if len(specs) != len(ts.stable)+2 || specs[len(specs)-2].Name != "browser_tabs" || specs[len(specs)-1].Name != "get-sum" {
		t.Errorf("the loaded tools are not after the stable ones: %d specs", len(specs))
	}
	for i := range ts.stable {
		if specs[i].Name != ts.stable[i].Name {
			t.Errorf("spec %d is %s, want the stable %s", i, specs[i].Name, ts.stable[i].Name)
		}
	}
	if !slices.ContainsFunc(ts.stable, func(s llm.Tool) bool { return s.Name == ToolSearchName }) {
		t.Error("tool_search is not offered")
	}
	for turn := 2; turn <= loadTurns+1; turn++ {
		history = append(history, userText("another turn"), llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartText, Text: "ok"}}})
		if got := names(ts.loaded(history)); len(got) != 2 {
			t.Errorf("turn %d: loaded %q, want both still", turn, got)
		}
	}
	history = append(history, userText("one turn too many"))
	if got := ts.loaded(history); len(got) != 0 {
		t.Errorf("after %d more turns: still loaded %q", loadTurns+1, names(got))
	}
}

// Search → load → call through the agent loop: the deferred tools are not
// in the first request, a search loads its match after the stable tools
// (which stay as they were), a deferred tool called by its name runs and
// is loaded, and an unknown name is answered with a pointer to the search.
func TestToolSearchInTheAgentLoop(t *testing.T) {
	step := 0
	answer := func(_ context.Context, req llm.Request) (llm.Response, error) {
		step++
		switch step {
		case 1:
			return toolCall("s1", ToolSearchName, `{"query":"echo back"}`), nil
		case 2:
			return toolCall("c1", "echo", `{"text":"hello"}`), nil
		case 3:
			return toolCall("c2", "long_text", `{}`), nil
		case 4:
			return toolCall("c3", "no_such_tool", `{}`), nil
		}
		return llm.Response{Text: "done"}, nil
	}
	e := newEnv(t, answer, envOptions{toolSearch: ToolSearchOn})
	e.deliver(chat.In(1), "go")
	e.chat.waitTexts(t, chat.In(1), 1)
	reqs := e.model.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	toolNames := func(r llm.Request) []string {
		var out []string
		for _, tl := range r.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	first := toolNames(reqs[0])
	if !slices.Equal(first, []string{SendToolName, ReadToolName, MemoryToolName, AskUserToolName, ToolSearchName}) || reqs[0].StableTools != 5 {
		t.Errorf("first request's tools %q (stable %d), want only the built-ins", first, reqs[0].StableTools)
	}
	if !strings.Contains(reqs[0].System, "## More tools") || !strings.Contains(reqs[0].System, "- fake: a_tool_whose_name") {
		t.Errorf("the system prompt does not list the deferred tools:\n%s", reqs[0].System)
	}
	wantLater := [][]string{{"echo"}, {"echo"}, {"echo", "long_text"}, {"echo", "long_text"}}
	for i, want := range wantLater {
		got := toolNames(reqs[i+1])
		if !slices.Equal(got[:5], first) || !slices.Equal(got[5:], want) || reqs[i+1].StableTools != 5 {
			t.Errorf("request %d: tools %q (stable %d), want the built-ins then %q", i+2, got, reqs[i+1].StableTools, want)
		}
		if reqs[i+1].System != reqs[0].System {
			t.Errorf("request %d: the system prompt changed", i+2)
		}
	}
	results := func(r llm.Request) string { return llmtest.ResultText(llmtest.LastToolResults(r)[0]) }
	if got := results(reqs[1]); !strings.Contains(got, "- echo (fake): Echoes the text back. Parameters: text*.") {
		t.Errorf("search result %q", got)
	}
	if got := results(reqs[2]); got != "hello" {
		t.Errorf("echo result %q", got)
	}
	if got := results(reqs[3]); !strings.HasPrefix(got, "line 1\n") {
		t.Errorf("long_text (deferred, called by its name) answered %.80q", got)
	}
	if got := results(reqs[4]); !strings.Contains(got, `there is no tool named "no_such_tool"; tool_search finds the tools there are`) {
		t.Errorf("unknown tool answered %q", got)
	}
}

// /mcp says which tools are deferred and what the list costs.
func TestMCPStatusShowsDeferredTools(t *testing.T) {
	for _, tt := range []struct {
		mode             ToolSearch
		always, deferred int
	}{
		{ToolSearchOn, 0, 16},
		{ToolSearchOff, 16, 0},
	} {
		e := newEnv(t, echoText, envOptions{toolSearch: tt.mode})
		e.mcp.Tools(context.Background()) // discovered
		st, err := e.manager.MCPStatus(context.Background(), chat.In(1))
		if err != nil || len(st.Servers) != 1 {
			t.Fatalf("%s: %+v, %v", tt.mode, st, err)
		}
		detail, err := e.manager.MCPServer(context.Background(), chat.In(1), "fake")
		if err != nil {
			t.Fatalf("%s: /mcp fake: %v", tt.mode, err)
		}
		for _, s := range []chat.ServerStatus{st.Servers[0], detail} {
			c := s.Cost
			if len(s.Offered) != 16 || c == nil || c.Always != tt.always || c.Deferred != tt.deferred ||
				(c.Always > 0) != (c.AlwaysTokens > 0) || (c.Deferred > 0) != (c.AllTokens > 0) {
				t.Errorf("%s: %d offered, cost %+v", tt.mode, len(s.Offered), c)
			}
		}
	}
}

// Beside a 60-tool code-hosting server, a search for a browser tab loads
// the tab tool alone: "Open a new issue" shares two words with the query,
// but scores well under the tab tool.
func TestToolSearchLeavesOutWeakMatches(t *testing.T) {
	catalog := realCatalog(t)
	for _, mt := range fakemcp.ManyTools() {
		catalog = append(catalog, mcpclient.Tool{Server: "code", MCPName: mt.Name, Name: mt.Name, Description: mt.Description, InputSchema: mt.RawInputSchema}.CatalogTool())
	}
	ix := newToolIndex(catalog)
	for _, tt := range []struct {
		query, want string
		most        int
	}{
		{"open a new browser tab", "browser_tabs", 1},
		{"merge a pull request", "merge_pull_request", 1},
		{"list open issues", "list_issues", 3}, // create_issue ("Open a new issue") scores close
	} {
		got := names(ix.search(tt.query))
		if !slices.Contains(got, tt.want) || len(got) > tt.most {
			t.Errorf("%q: %q, want %s in at most %d", tt.query, got, tt.want, tt.most)
		}
	}
}

// deferredBuiltin is a built-in that asks to be deferred.
type deferredBuiltin struct{ fakeTool }

func (d deferredBuiltin) Spec() chat.Spec {
	return chat.Spec{Name: d.name, Description: "Run a task later, once or on a schedule, and list or cancel such tasks.",
		Schema: json.RawMessage(`{"type":"object","properties":{"task":{"type":"string"},"cron":{"type":"string"}},"required":["task"]}`)}
}

func (deferredBuiltin) Deferred() bool { return true }

// A built-in that asks to be deferred is, while tool search is on, what a
// deferred MCP tool is: out of the stable tool list and its cost, named in
// the system prompt under its group, found by a search, loaded by a search
// or a call by its name, and run as the built-in (never bound to an MCP
// session). With search off it is offered like the others, once.
func TestDeferredBuiltins(t *testing.T) {
	var mu sync.Mutex
	var called []string
	later := deferredBuiltin{fakeTool{name: "run_later", calls: &called, mu: &mu}}
	builtins := append(builtinTools(nil, nil), later)
	catalog := slices.Concat(realCatalog(t), builtinCatalog(builtins))
	servers := []mcpconfig.ServerConfig{{Name: "playwright"}, {Name: "everything"}}

	on := PlanTools(PlanOptions{Mode: ToolSearchOn, Builtins: builtins}, catalog, servers)
	if !on.Deferred["run_later"] {
		t.Fatal("search on: the built-in is not deferred")
	}
	off := PlanTools(PlanOptions{Mode: ToolSearchOff, Builtins: builtins}, catalog, servers)
	without := PlanTools(PlanOptions{Mode: ToolSearchOff}, realCatalog(t), servers)
	if off.Deferred["run_later"] || off.FullTokens <= without.FullTokens {
		t.Errorf("search off: deferred %v, full cost %d (without it %d)", off.Deferred["run_later"], off.FullTokens, without.FullTokens)
	}
	ts := newToolset(catalog, on, nil)
	if slices.ContainsFunc(ts.stable, func(s llm.Tool) bool { return s.Name == "run_later" }) {
		t.Error("search on: the built-in's schema is in every request")
	}
	if !regexp.MustCompile(`(?m)^- ` + BuiltinGroup + `: .*\brun_later\b`).MatchString(ts.section) {
		t.Errorf("the system prompt does not name it:\n%s", ts.section)
	}
	for _, history := range [][]llm.Message{
		{userText("remind me"), searchCall("1", "schedule a task for later"), resultMsg("1", 10, false)},
		{userText("remind me"), directCall("1", "run_later"), resultMsg("1", 10, false)},
	} {
		if got := names(ts.loaded(history)); !slices.Contains(got, "run_later") {
			t.Errorf("loaded %q after %s, want run_later", got, history[1].Parts[0].ToolCall.Name)
		}
	}
	r := newRegistry(newToolset(builtinCatalog(builtins), on, nil), nil, builtins) // nil MCP: nothing may be bound
	if _, err := r.lookup("run_later").Call(context.Background(), json.RawMessage(`{"task":"x"}`)); err != nil || !slices.Equal(called, []string{"run_later"}) {
		t.Errorf("the call ran %q, %v", called, err)
	}
	ts = newToolset(catalog, off, nil)
	n := 0
	for _, s := range ts.stable {
		if s.Name == "run_later" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("search off: offered %d times, want once", n)
	}
}
