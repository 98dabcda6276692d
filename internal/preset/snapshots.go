package preset

import (
	"regexp"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// Snapshots over time: in a long browse the page snapshots fill the
// context, and every one but the latest of a tab describes a page that is
// no longer shown (its element refs no longer work either). So a request
// carries the latest snapshot of each tab whole, and each earlier one of
// the same tab as a one-line placeholder; the transcript keeps them all,
// and a snapshot the browser saved to a file stays readable with read.
//
// A snapshot is the "### Snapshot" section of a result in @playwright/mcp's
// format (0.0.83): the YAML inline (browser_snapshot), or a link to the
// file the server wrote with its content inlined after it by the MCP
// client (browser_navigate, browser_click, …). Its tab is the one marked
// "(current)" in the result's "### Open tabs" list; a result without the
// list comes from a browser with one tab, tab 0. Tabs are told apart by
// position, so closing a tab can make a snapshot of another one look like
// the same tab's — the older one is then left whole or replaced as its
// position says, either of which only costs tokens or a read. Tabs of
// different servers are different tabs.

// minSuperseded is the least snapshot worth replacing: a short one costs
// less than its placeholder explains.
const minSuperseded = 200

var (
	currentTab   = regexp.MustCompile(`(?m)^- (\d+): \(current\)`)
	snapshotLink = regexp.MustCompile(`\[Snapshot\]\(([^)\s]+)\)`)
)

// snapshotSection finds the "### Snapshot" section of a text: where its
// body starts and ends.
func snapshotSection(text string) (start, end int, ok bool) {
	const heading = "### Snapshot\n"
	i := strings.Index(text, "\n"+heading)
	switch {
	case strings.HasPrefix(text, heading):
		i = 0
	case i >= 0:
		i++
	default:
		return 0, 0, false
	}
	start = i + len(heading)
	end = len(text)
	if j := strings.Index(text[start:], "\n### "); j >= 0 {
		end = start + j
	}
	return start, end, true
}

// snapshotTab is the tab a result's snapshot shows.
func snapshotTab(text string) string {
	const heading = "### Open tabs\n"
	i := strings.Index(text, heading)
	if i < 0 {
		return "0"
	}
	list := text[i+len(heading):]
	if j := strings.Index(list, "\n### "); j >= 0 {
		list = list[:j]
	}
	if m := currentTab.FindStringSubmatch(list); m != nil {
		return m[1]
	}
	return "0"
}

// supersededText is text with its snapshot replaced by the placeholder.
func supersededText(text string, start, end int) string {
	line := "[an older snapshot of this tab, left out: a later one follows]"
	if m := snapshotLink.FindStringSubmatch(text[start:end]); m != nil {
		line = "- [Snapshot](" + m[1] + ") — an older snapshot of this tab, left out (a later one follows; read has this one)"
	}
	return text[:start] + line + text[end:]
}

type snapshotRef struct{ msg, part, content int }

// SupersedeSnapshots returns history with every snapshot that a later one
// of the same tab supersedes replaced by its placeholder. serverOf names
// the server of a tool. history is not modified; messages that change are
// copied.
func SupersedeSnapshots(history []llm.Message, serverOf func(tool string) string) []llm.Message {
	seen := map[string]bool{}
	var old []snapshotRef
	for i := len(history) - 1; i >= 0; i-- {
		parts := history[i].Parts
		for j := len(parts) - 1; j >= 0; j-- {
			r := parts[j].ToolResult
			if r == nil || r.IsError {
				continue
			}
			for k := len(r.Content) - 1; k >= 0; k-- {
				c := r.Content[k]
				if c.Kind != llm.PartText {
					continue
				}
				start, end, ok := snapshotSection(c.Text)
				if !ok {
					continue
				}
				key := serverOf(r.Name) + "\x00" + snapshotTab(c.Text)
				if seen[key] {
					if end-start >= minSuperseded {
						old = append(old, snapshotRef{i, j, k})
					}
					continue
				}
				seen[key] = true
			}
		}
	}
	if len(old) == 0 {
		return history
	}
	out := make([]llm.Message, len(history))
	copy(out, history)
	copied := map[int]bool{}
	for _, ref := range old {
		if !copied[ref.msg] {
			copied[ref.msg] = true
			parts := make([]llm.Part, len(out[ref.msg].Parts))
			copy(parts, out[ref.msg].Parts)
			for j := range parts {
				if r := parts[j].ToolResult; r != nil {
					rc := *r
					rc.Content = append([]llm.Part(nil), r.Content...)
					parts[j].ToolResult = &rc
				}
			}
			out[ref.msg] = llm.Message{Role: out[ref.msg].Role, Parts: parts}
		}
		c := &out[ref.msg].Parts[ref.part].ToolResult.Content[ref.content]
		start, end, _ := snapshotSection(c.Text)
		c.Text = supersededText(c.Text, start, end)
	}
	return out
}
