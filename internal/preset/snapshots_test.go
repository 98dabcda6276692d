package preset

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// Results in @playwright/mcp 0.0.83's format, as the MCP client hands them
// on (a navigate's snapshot file inlined after its link).
func navigateResult(url, file string, tabs []string, current int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Ran Playwright code\n```js\nawait page.goto('%s');\n```\n", url)
	if len(tabs) > 1 {
		b.WriteString("### Open tabs\n")
		for i, t := range tabs {
			mark := ""
			if i == current {
				mark = " (current)"
			}
			fmt.Fprintf(&b, "- %d:%s [%s](%s)\n", i, mark, t, t)
		}
	}
	fmt.Fprintf(&b, "### Page\n- Page URL: %s\n- Page Title: %s\n### Snapshot\n- [Snapshot](%s)\n```yaml\n%s```\n### Events\n- New console entries: browser/console-1.log#L1",
		url, url, file, pageYAML(url))
	return b.String()
}

func snapshotResult(url string, tabs []string, current int) string {
	var b strings.Builder
	if len(tabs) > 1 {
		b.WriteString("### Open tabs\n")
		for i, t := range tabs {
			mark := ""
			if i == current {
				mark = " (current)"
			}
			fmt.Fprintf(&b, "- %d:%s [%s](%s)\n", i, mark, t, t)
		}
	}
	fmt.Fprintf(&b, "### Page\n- Page URL: %s\n### Snapshot\n```yaml\n%s```", url, pageYAML(url))
	return b.String()
}

func pageYAML(url string) string {
	var b strings.Builder
	b.WriteString("- generic [active] [ref=e1]:\n")
	for i := range 20 {
		fmt.Fprintf(&b, "  - link \"%s section %d\" [ref=e%d] [cursor=pointer]:\n    - /url: '#s%d'\n", url, i, i+2, i)
	}
	return b.String()
}

func browserResult(id, name, text string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartToolResult, ToolResult: &llm.ToolResult{
		CallID: id, Name: name, Content: []llm.Part{{Kind: llm.PartText, Text: text}}}}}}
}

func userText(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Kind: llm.PartText, Text: s}}}
}

func directCall(id, name string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartToolCall,
		ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{}`)}}}}
}

func browserServer(tool string) string {
	if strings.HasPrefix(tool, "browser_") {
		return "playwright"
	}
	return "other"
}

// The latest snapshot of each tab stays whole; every earlier one of the
// same tab becomes a line (naming its file when there is one); the rest of
// each result stays; the history is not modified.
func TestSupersedeSnapshots(t *testing.T) {
	one := []string{"a"}
	two := []string{"http://a/", "http://b/"}
	history := []llm.Message{
		userText("browse"),
		directCall("1", "browser_navigate"), browserResult("1", "browser_navigate", navigateResult("http://a/", "browser/page-1.yml", one, 0)),
		directCall("2", "browser_snapshot"), browserResult("2", "browser_snapshot", snapshotResult("http://a/", one, 0)),
		directCall("3", "browser_navigate"), browserResult("3", "browser_navigate", navigateResult("http://b/", "browser/page-3.yml", two, 1)),
		directCall("4", "other_snapshot"), browserResult("4", "other_snapshot", snapshotResult("http://a/", one, 0)),
		directCall("5", "browser_snapshot"), browserResult("5", "browser_snapshot", snapshotResult("http://a/", two, 0)),
	}
	before := llmtest.CloneHistory(history)
	got := SupersedeSnapshots(history, browserServer)
	text := func(msgs []llm.Message, i int) string { return msgs[i].Parts[0].ToolResult.Content[0].Text }
	if !strings.Contains(text(got, 2), "- [Snapshot](browser/page-1.yml) — an older snapshot of this tab, left out") ||
		strings.Contains(text(got, 2), "section 3") {
		t.Errorf("the first navigate's snapshot (tab 0) is not replaced:\n%s", text(got, 2))
	}
	if !strings.Contains(text(got, 2), "- Page URL: http://a/") || !strings.Contains(text(got, 2), "### Events\n- New console entries") {
		t.Errorf("the rest of the result went too:\n%s", text(got, 2))
	}
	if !strings.Contains(text(got, 4), "[an older snapshot of this tab, left out: a later one follows]") {
		t.Errorf("the inline snapshot of tab 0 is not replaced:\n%s", text(got, 4))
	}
	for _, i := range []int{6, 8, 10} { // tab 1's only one, another server's, tab 0's latest
		if text(got, i) != text(history, i) {
			t.Errorf("message %d changed:\n%s", i, text(got, i))
		}
	}
	for i := 2; i < len(history); i += 2 {
		if text(history, i) != text(before, i) {
			t.Fatalf("the history was modified at %d", i)
		}
	}
	if got := SupersedeSnapshots(history[:3], browserServer); &got[0] != &history[0] {
		t.Error("a history with nothing superseded was copied")
	}
}
