package session

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// Tool search: when the MCP tools would cost too much in every request,
// most of them are deferred. The model gets the built-in tools, each
// server's always-loaded tools (alwaysLoad) and tool_search with their
// schemas, and the names of the deferred tools in the system prompt (one
// line per server). tool_search ranks the deferred tools (bm25.go) and
// returns the best matches with their descriptions; from the next step on
// they are in the tool list with their schemas, after the stable part of
// it, and they stay there for the rest of the turn and loadTurns turns
// after. A deferred tool the model calls by its name runs (and is loaded
// from then on, the same way): no call is ever answered "no such tool"
// because of the deferral.
//
// What is loaded is worked out from the conversation itself — the
// tool_search calls (searched again: the ranking is deterministic) and the
// calls to deferred tools of the last loadTurns+1 turns — so it survives a
// restart and the release of an idle chat, and the tool list of a request
// is the same whenever the conversation is.

// ToolSearch is when MCP tools are offered on demand (LLM_TOOL_SEARCH).
type ToolSearch string

const (
	// ToolSearchAuto defers tools when the whole list would cost more
	// than autoSearchTokens or autoSearchPercent of the context budget.
	ToolSearchAuto ToolSearch = "auto"
	// ToolSearchOn always defers the tools that are not always loaded.
	ToolSearchOn ToolSearch = "on"
	// ToolSearchOff offers every tool with its schema in every request.
	ToolSearchOff ToolSearch = "off"
)

// ParseToolSearch reads auto, on or off.
func ParseToolSearch(s string) (ToolSearch, bool) {
	switch m := ToolSearch(strings.ToLower(strings.TrimSpace(s))); m {
	case ToolSearchAuto, ToolSearchOn, ToolSearchOff:
		return m, true
	}
	return "", false
}

// Tool search's rules.
const (
	// ToolSearchName is the built-in search tool's name.
	ToolSearchName = "tool_search"
	// autoSearchTokens and autoSearchPercent: auto turns tool search on
	// when the whole tool list costs more than either (the smaller).
	autoSearchTokens  = 2000
	autoSearchPercent = 10
	// loadTurns is how many turns after the one that loaded it a tool
	// stays loaded (the rest of that turn too).
	loadTurns = 3
	// searchResults is the most tools one search loads; matches scoring
	// under searchCutoff of the best one are left out (a word of the query that
	// a description of another server happens to use is enough for a
	// match; each match costs its schema in the requests of four turns).
	searchResults = 5
	searchCutoff  = 0.75
	// maxQuery bounds the query that is ranked (longer is absurd).
	maxQuery = 1000
	// matchDescription bounds a description in the search result; the
	// whole one comes with the schema.
	matchDescription = 240
)

const toolSearchDescription = "Load tools the system prompt lists under More tools: give words for what you need " +
	"(\"switch browser tab\") or tool names; the best matches load for your next step."

var toolSearchSchema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}`)

// PlanOptions decide how tools are offered.
type PlanOptions struct {
	Mode          ToolSearch
	ContextTokens int
	// CountTokens counts as the model does; about four bytes a token when
	// nil.
	CountTokens func(string) int
	// Builtins are the built-ins offered (nil: every one); the deferrable
	// ones come in the catalogue (BuiltinCatalog).
	Builtins []chat.Tool
}

// ToolPlan is how a catalogue's tools are offered to the model.
type ToolPlan struct {
	// Search is set when some tools are deferred: tool_search is offered.
	Search bool
	// Mode is the mode the plan was made in.
	Mode ToolSearch
	// FullTokens is what the whole list costs in each request: every MCP
	// tool and the built-ins, with their schemas.
	FullTokens int
	// Threshold is auto's: tool search is on above it.
	Threshold int
	// OfferedTokens is what the tool list costs in each request under
	// the plan, before any tool is loaded: the built-ins (tool_search
	// included), the tools not deferred, and the system prompt's list of
	// the deferred ones.
	OfferedTokens int
	// Deferred holds the exposed names of the deferred MCP tools.
	Deferred map[string]bool
	// MissingAlwaysLoad maps a server to the alwaysLoad names it does
	// not offer (a check warning).
	MissingAlwaysLoad map[string][]string
	// builtins are the built-ins the plan is for (PlanOptions.Builtins).
	builtins []chat.Tool
}

// PlanTools decides which of tools (the catalogue, refusals left out, and
// BuiltinCatalog) are deferred. Off defers none; on defers every tool that is not always
// loaded; auto does so when FullTokens is over Threshold. A server's
// deferLoading overrides that for its tools (true: deferred unless mode is
// off; false: never), and its alwaysLoad names are never deferred.
func PlanTools(o PlanOptions, tools []chat.CatalogTool, servers []mcpconfig.ServerConfig) ToolPlan {
	count := o.CountTokens
	if count == nil {
		count = func(s string) int { return (len(s) + 3) / 4 }
	}
	if o.Mode == "" {
		o.Mode = ToolSearchAuto
	}
	ctx := o.ContextTokens
	if ctx <= 0 {
		ctx = DefaultContextTokens
	}
	if o.Builtins == nil {
		o.Builtins = builtinTools(nil, nil)
	}
	p := ToolPlan{Mode: o.Mode, Deferred: map[string]bool{}, Threshold: min(autoSearchTokens, ctx*autoSearchPercent/100),
		builtins: o.Builtins}
	byName := map[string]mcpconfig.ServerConfig{}
	for _, s := range servers {
		byName[s.Name] = s
	}
	p.FullTokens = toolTokens(count, builtinSpecs(p.builtins, false)) + mcpToolTokens(count, tools)
	over := p.FullTokens > p.Threshold
	offers := map[string]map[string]bool{} // server → names it offers (both spellings)
	for _, t := range tools {
		if offers[t.Server] == nil {
			offers[t.Server] = map[string]bool{}
		}
		offers[t.Server][t.MCPName], offers[t.Server][t.Name] = true, true
		s := byName[t.Server]
		if o.Mode == ToolSearchOff || slices.Contains(s.AlwaysLoad, t.MCPName) || slices.Contains(s.AlwaysLoad, t.Name) {
			continue
		}
		switch {
		case s.DeferLoading != nil:
			if *s.DeferLoading {
				p.Deferred[t.Name] = true
			}
		case o.Mode == ToolSearchOn || over:
			p.Deferred[t.Name] = true
		}
	}
	for _, s := range servers {
		for _, n := range s.AlwaysLoad {
			if offers[s.Name] != nil && !offers[s.Name][n] {
				if p.MissingAlwaysLoad == nil {
					p.MissingAlwaysLoad = map[string][]string{}
				}
				p.MissingAlwaysLoad[s.Name] = append(p.MissingAlwaysLoad[s.Name], n)
			}
		}
	}
	p.Search = len(p.Deferred) > 0
	var offered, deferred []chat.CatalogTool
	for _, t := range tools {
		if p.Deferred[t.Name] {
			deferred = append(deferred, t)
		} else {
			offered = append(offered, t)
		}
	}
	p.OfferedTokens = toolTokens(count, builtinSpecs(p.builtins, p.Search)) + mcpToolTokens(count, offered)
	if p.Search {
		p.OfferedTokens += count(deferredSection(deferred))
	}
	return p
}

// toolTokens is what specs cost in a request: as chat.CatalogToolTokens
// counts, the name, description and schema of each plus the providers'
// framing of a tool.
func toolTokens(count func(string) int, specs []llm.Tool) int {
	n := 0
	for _, t := range specs {
		n += count(t.Name) + count(t.Description) + count(string(t.Schema)) + 8
	}
	return n
}

// mcpToolTokens is what the catalogue's tools cost in a request, counted
// the same way.
func mcpToolTokens(count func(string) int, tools []chat.CatalogTool) int {
	n := 0
	for _, t := range tools {
		n += count(t.Name) + count(t.Description) + count(string(t.InputSchema)) + 8
	}
	return n
}

// builtinSpecs are the specs of the built-in tools of builtins offered in
// every request, and tool_search's when search is on. The deferrable ones
// are in the catalogue instead (BuiltinCatalog).
func builtinSpecs(builtins []chat.Tool, search bool) []llm.Tool {
	tools := slices.Clip(builtins)
	if search {
		tools = append(tools, searchTool{})
	}
	specs := make([]llm.Tool, 0, len(tools))
	for _, t := range tools {
		if chat.Deferred(t) {
			continue
		}
		s := t.Spec()
		specs = append(specs, llm.Tool{Name: s.Name, Description: s.Description, Schema: s.Schema})
	}
	return specs
}

// deferredSection is the system prompt's list of the deferred tools, one
// line per server, in catalogue order.
func deferredSection(deferred []chat.CatalogTool) string {
	if len(deferred) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## More tools\nNot in your tool list yet: call " + ToolSearchName +
		" with what you need (or their names) to load them with their parameters, or call one by its name.\n")
	server := ""
	for _, t := range deferred {
		if t.Group() != server {
			if server != "" {
				b.WriteByte('\n')
			}
			server = t.Group()
			b.WriteString("- " + server + ": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(t.Name)
	}
	return b.String()
}

// toolIndex ranks the deferred tools of a catalogue.
type toolIndex struct {
	tools  []chat.CatalogTool // in catalogue order
	byName map[string]int     // lower-cased exposed name → index
	bm25   *bm25Index
}

func newToolIndex(tools []chat.CatalogTool) *toolIndex {
	ix := &toolIndex{tools: tools, byName: make(map[string]int, len(tools))}
	docs := make([][]string, len(tools))
	for i, t := range tools {
		ix.byName[strings.ToLower(t.Name)] = i
		var words []string
		name := searchWords(t.Name)
		if t.MCPName != t.Name {
			name = append(name, searchWords(t.MCPName)...)
		}
		for range nameWeight {
			words = append(words, name...)
		}
		words = append(words, searchWords(t.Group())...)
		words = append(words, searchWords(t.Description)...)
		for _, p := range parameterNames(t.InputSchema) {
			words = append(words, searchWords(p)...)
		}
		docs[i] = words
	}
	ix.bm25 = newBM25Index(docs)
	return ix
}

// search returns the tools for query: the ones it names exactly first (in
// its order), then the best BM25 matches, at most searchResults in all,
// leaving out matches under searchCutoff of the best score.
func (ix *toolIndex) search(query string) []chat.CatalogTool {
	if ix == nil {
		return nil
	}
	query = strings.TrimSpace(query)
	if query == "" || len(query) > maxQuery {
		return nil
	}
	var out []chat.CatalogTool
	taken := map[int]bool{}
	for _, f := range strings.FieldsFunc(query, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if i, ok := ix.byName[strings.ToLower(strings.Trim(f, "`'\"()[]"))]; ok && !taken[i] && len(out) < searchResults {
			taken[i] = true
			out = append(out, ix.tools[i])
		}
	}
	ranked := ix.bm25.search(searchWords(query))
	for _, r := range ranked {
		if len(out) >= searchResults || r.score < searchCutoff*ranked[0].score {
			break
		}
		if !taken[r.doc] {
			taken[r.doc] = true
			out = append(out, ix.tools[r.doc])
		}
	}
	return out
}

// parameterNames are the top-level property names of a JSON schema.
func parameterNames(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(s.Properties))
}

// requiredNames are a JSON schema's required property names.
func requiredNames(schema json.RawMessage) []string {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	return s.Required
}

// searchQuery is the query of a tool_search call's arguments, "" when
// there is none.
func searchQuery(args json.RawMessage) string {
	var a struct {
		Query any `json:"query"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	switch q := a.Query.(type) {
	case string:
		return q
	case []any: // a list of names
		var parts []string
		for _, e := range q {
			if s, ok := e.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, " ")
	}
	return ""
}

// searchResultText answers a tool_search call: the matches with their
// servers, descriptions and parameters (a * marks the required ones), or,
// when nothing matches, every deferred tool by server — never an error.
func (ix *toolIndex) searchResultText(query string, loaded map[string]bool) string {
	matches := ix.search(query)
	if len(matches) == 0 {
		var b strings.Builder
		switch q := strings.TrimSpace(query); {
		case q == "":
			b.WriteString("The query is empty. ")
		case len(q) > maxQuery:
			b.WriteString("The query is too long to search. ")
		default:
			fmt.Fprintf(&b, "No tool matches %q. ", truncateRunes(q, 80))
		}
		b.WriteString("These are the tools you can load, by server:\n")
		for line := range strings.Lines(deferredSection(ix.tools)) {
			if strings.HasPrefix(line, "- ") {
				b.WriteString(line)
			}
		}
		b.WriteString("\nSearch again with a few words of what you want to do, or with tool names from this list.")
		return b.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s loaded: from your next step on, %s in your tool list with %s parameters.\n",
		plural(len(matches), "tool"), pick(len(matches) == 1, "it is", "they are"), pick(len(matches) == 1, "its", "their"))
	for _, t := range matches {
		desc := strings.Join(strings.Fields(t.Description), " ")
		if desc == "" {
			desc = "(no description)"
		}
		fmt.Fprintf(&b, "- %s (%s): %s", t.Name, t.Group(), truncateRunes(desc, matchDescription))
		if loaded[t.Name] {
			b.WriteString(" [already loaded]")
		}
		params := parameterNames(t.InputSchema)
		req := requiredNames(t.InputSchema)
		for i, p := range params {
			if slices.Contains(req, p) {
				params[i] = p + "*"
			}
		}
		if len(params) > 0 {
			b.WriteString(" Parameters: " + strings.Join(params, ", ") + ".")
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// truncateRunes cuts s to at most n bytes on a character boundary, with
// "…" when cut.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
