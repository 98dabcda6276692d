package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// modelSteps counts the model's answers since the user's own last message,
// in either wire format.
func modelSteps(req llmtest.Request) int {
	msgs, _ := req.JSON["messages"].([]any)
	n := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i].(map[string]any)
		switch m["role"] {
		case "assistant":
			n++
		case "user":
			own := true
			if blocks, ok := m["content"].([]any); ok {
				for _, b := range blocks {
					if bm, ok := b.(map[string]any); ok && bm["type"] == "tool_result" {
						own = false
					}
				}
			}
			if i > 0 && msgs[i-1].(map[string]any)["role"] == "tool" {
				own = false // OpenAI: the images after tool results
			}
			if own {
				return n
			}
		}
	}
	return n
}

// wireTools are the tool names of a wire request, and the raw tools.
func wireTools(t *testing.T, req llmtest.Request) ([]string, []json.RawMessage) {
	t.Helper()
	var body struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, raw := range body.Tools {
		var tool struct {
			Name     string `json:"name"` // Anthropic
			Function struct {
				Name string `json:"name"`
			} `json:"function"` // OpenAI
		}
		_ = json.Unmarshal(raw, &tool)
		names = append(names, tool.Name+tool.Function.Name)
	}
	return names, body.Tools
}

// Search → load → call through the whole daemon and the real adapters of
// both providers: the deferred tool is found, appended after the stable
// tools (which stay byte for byte), called, and the cache fields of the
// answers reach the debug log.
func TestE2EToolSearchLoadsAndCalls(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			usage := llm.Usage{InputTokens: 3000, CacheReadTokens: 2048, CacheWriteTokens: 512, OutputTokens: 30}
			reply := func(req llmtest.Request) llmtest.Reply {
				var r llmtest.Reply
				res, _ := toolResultText(req)
				switch modelSteps(req) {
				case 0:
					r = call("tool_search", `{"query":"echo"}`)
				case 1:
					r = call("echo", `{"text":"found and called"}`)
				default:
					r = llmtest.Text("the tool said: " + res)
				}
				r.Usage = usage
				return r
			}
			d := startDaemon(t, reply, daemonOptions{provider: provider, extra: []string{"LLM_TOOL_SEARCH=on"}})
			d.tg.Message(alice, alice, "find echo")
			d.waitText(alice, "the tool said: found and called")
			reqs := d.model.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			first, firstRaw := wireTools(t, reqs[0])
			if !slices.Equal(first, []string{"send", "read", "memory", "ask_user", "tool_search"}) {
				t.Errorf("first request's tools %q, want the built-ins only", first)
			}
			if !strings.Contains(string(reqs[0].Body), `- fake: `) {
				t.Error("the system prompt does not list the deferred tools")
			}
			for i := 1; i < 3; i++ {
				names, raw := wireTools(t, reqs[i])
				if !slices.Equal(names, append(slices.Clone(first), "echo")) {
					t.Errorf("request %d: tools %q, want the built-ins then echo", i+1, names)
					continue
				}
				for j := range firstRaw {
					if string(raw[j]) != string(firstRaw[j]) {
						t.Errorf("request %d: stable tool %d changed:\n%s\n%s", i+1, j, firstRaw[j], raw[j])
					}
				}
				if last := len(first) - 1; provider == "anthropic" && (!strings.Contains(string(raw[last]), `"cache_control"`) || !strings.Contains(string(raw[last+1]), `"cache_control"`)) {
					t.Errorf("request %d: the last stable tool and the last tool are not both marked for the cache", i+1)
				}
			}
			if res, _ := toolResultText(reqs[1]); !strings.Contains(res, "- echo (fake): Echoes the text back.") {
				t.Errorf("search result %q", res)
			}
			d.waitLog(`"cached_tokens":2048`)
			d.waitLog(`"cache_write_tokens":512`)
		})
	}
}

var snapshotLinkRe = regexp.MustCompile(`\[Snapshot\]\(((?:browser|\.playwright-mcp)/page-[^)]+\.yml)\)`)

// The real browser under tool search (auto: the browser's and the fake's
// tools are over the threshold): the core tools are there, a tab tool is
// found and loaded, a deferred tool called by its name runs, read pages
// through a snapshot file, and the first page's snapshot is left out of
// later requests once the tab has a newer one.
func TestBrowserToolSearch(t *testing.T) {
	env := browserEnv(t)
	srv := site(t)
	var snapshotFile string
	reply := func(req llmtest.Request) llmtest.Reply {
		res, _ := toolResultText(req)
		if strings.Contains(res, "there is no tool named") {
			return llmtest.Text("unknown tool: " + res)
		}
		switch modelSteps(req) {
		case 0:
			return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, srv.URL+"/first"))
		case 1:
			if m := snapshotLinkRe.FindStringSubmatch(res); m != nil {
				snapshotFile = m[1]
			}
			return call("tool_search", `{"query":"open a new browser tab"}`)
		case 2:
			return call("browser_tabs", `{"action":"new"}`)
		case 3:
			return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, srv.URL+"/second"))
		case 4:
			return call("browser_navigate_back", `{}`)
		case 5:
			return call("browser_snapshot", `{}`)
		case 6:
			return call("read", fmt.Sprintf(`{"path":%q}`, snapshotFile))
		}
		return llmtest.Text("read: " + res)
	}
	d := startDaemon(t, reply, daemonOptions{extra: env})
	d.tg.Message(alice, alice, "browse")
	d.waitText(alice, "read: ")
	got := strings.Join(d.texts(alice), "\n")
	if !strings.Contains(got, "Unique heading first 7d3f") || strings.Contains(got, "unknown tool") {
		t.Errorf("the last answer: %s", got)
	}
	reqs := d.model.Requests()
	names, _ := wireTools(t, reqs[0])
	for _, core := range []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_close", "tool_search", "read"} {
		if !slices.Contains(names, core) {
			t.Errorf("the first request lacks %s: %q", core, names)
		}
	}
	if slices.Contains(names, "browser_tabs") || slices.Contains(names, "echo") {
		t.Errorf("deferred tools in the first request: %q", names)
	}
	last := reqs[len(reqs)-1]
	names, _ = wireTools(t, last)
	if n := len(names); n < 2 || names[n-2] != "browser_tabs" || names[n-1] != "browser_navigate_back" {
		t.Errorf("the last request's tools end %q, want browser_tabs then browser_navigate_back", names)
	}
	body := string(last.Body)
	if !strings.Contains(body, "an older snapshot of this tab, left out") {
		t.Error("no snapshot was left out of the last request")
	}
	if strings.Count(body, "Unique heading first 7d3f") > 2 { // the snapshot and the read, not the first navigate's
		t.Errorf("the first page's heading appears %d times in the last request", strings.Count(body, "Unique heading first 7d3f"))
	}
}
