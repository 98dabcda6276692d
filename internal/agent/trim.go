package agent

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// The last step of the budget: the newest tool results are cut when even
// they alone are more than the context window holds (a 2 MB page, forty
// parallel snapshots, a hundred screenshots). Every text longer than a
// common cap is cut to its head, so the largest lose most and small ones
// nothing; only when no text is left are images left out too, the earliest
// first.

const imageLeftOut = "[image left out to fit the context window]"

// trimToolResults returns m with its tool results cut so that its estimate
// is at most target, or as small as cutting makes it: every text to an
// empty head and every image left out. m is not modified; ids and names
// stay.
func trimToolResults(m llm.Message, target int) llm.Message {
	var texts []string // every text of m's results, in order
	images := 0
	for _, p := range m.Parts {
		if p.ToolResult == nil {
			continue
		}
		for _, c := range p.ToolResult.Content {
			switch c.Kind {
			case llm.PartText:
				texts = append(texts, c.Text)
			case llm.PartImage:
				images++
			}
		}
	}
	// The estimate of m with every text capped at limit bytes and the
	// first drop images left out.
	rest := EstimateMessage(m)
	longest := 0
	for _, t := range texts {
		rest -= EstimateText(t)
		longest = max(longest, len(t))
	}
	rest -= images * (imageTokens - EstimateText(imageLeftOut))
	cost := func(limit, drop int) int {
		n := rest + (images-drop)*(imageTokens-EstimateText(imageLeftOut))
		for _, t := range texts {
			head, note := cutText(t, limit)
			n += (len(head)+len(note))/bytesPerToken + 1
		}
		return n
	}
	// Images go only when the texts cannot make room, as few as will do.
	drop := sort.Search(images+1, func(k int) bool { return cost(0, k) <= target })
	drop = min(drop, images)
	// The largest cap that fits: cost falls with the cap (but for a note
	// the size of a few tokens where a text starts to be cut), so a search
	// finds one that fits and is close to the largest.
	limit := longest
	if cost(longest, drop) > target {
		limit = sort.Search(longest, func(c int) bool { return cost(c+1, drop) > target })
	}
	if limit >= longest && drop == 0 {
		return m
	}

	parts := make([]llm.Part, len(m.Parts))
	for i, p := range m.Parts {
		parts[i] = p
		if p.ToolResult == nil {
			continue
		}
		r := *p.ToolResult
		r.Content = make([]llm.Part, len(p.ToolResult.Content))
		for j, c := range p.ToolResult.Content {
			r.Content[j] = c
			switch {
			case c.Kind == llm.PartText:
				if head, note := cutText(c.Text, limit); note != "" {
					r.Content[j].Text = head + note
				}
			case c.Kind == llm.PartImage && drop > 0:
				r.Content[j] = llm.Part{Kind: llm.PartText, Text: imageLeftOut}
				drop--
			}
		}
		parts[i].ToolResult = &r
	}
	return llm.Message{Role: m.Role, Parts: parts}
}

// cutText returns the head of s to keep within limit bytes and the note to
// put after it, or s and "" when s fits. The head ends at a line end when
// there is one in its last quarter, else at a character boundary.
func cutText(s string, limit int) (head, note string) {
	if len(s) <= limit {
		return s, ""
	}
	head = s[:max(limit, 0)]
	if i := strings.LastIndexByte(head, '\n'); i >= 0 && i+1 >= len(head)*3/4 {
		head = head[:i+1]
	} else {
		for len(head) > 0 && !utf8.RuneStart(s[len(head)]) {
			head = head[:len(head)-1]
		}
	}
	note = fmt.Sprintf("[%s of this %s output were left out to fit the context window. "+
		"If you need them, ask for less at a time: a narrower query, a smaller page or a specific part.]",
		chat.ByteSize(len(s)-len(head)), chat.ByteSize(len(s)))
	if head != "" && !strings.HasSuffix(head, "\n") {
		note = "\n" + note
	}
	return head, note
}
