package agent

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// browsing builds turns of 40 tool steps each with 20 KB page snapshots.
func browsing(turns, steps int) ([]llm.Message, int) {
	var h []llm.Message
	current := 0
	for t := range turns {
		current = len(h)
		h = append(h, userText(fmt.Sprintf("turn %d", t)))
		for s := range steps {
			id := fmt.Sprintf("%d-%d", t, s)
			h = append(h, callMsg(id), resultMsg(id, 20_000, s%5 == 0))
		}
		h = append(h, llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartText, Text: "done"}}})
	}
	return h, current
}

func total(fixed int, msgs []llm.Message) int {
	n := fixed
	for _, m := range msgs {
		n += EstimateMessage(m)
	}
	return n
}

func TestBudgetElidesOldToolResultsFirst(t *testing.T) {
	h, current := browsing(3, 40)
	const limit, fixed = 100_000, 5_000
	out := FitBudget(h, current, fixed, limit)
	if got := total(fixed, out); got > limit {
		t.Errorf("request of ~%d tokens exceeds the limit %d", got, limit)
	}
	// Nothing of the current turn is cut, and calls keep their results.
	if got := llmtest.LastUserText(llm.Request{Messages: out}); got != "turn 2" {
		t.Errorf("the current turn's message is %q", got)
	}
	calls, results := map[string]bool{}, map[string]bool{}
	for _, m := range out {
		for _, p := range m.Parts {
			if p.ToolCall != nil {
				calls[p.ToolCall.ID] = true
			}
			if p.ToolResult != nil {
				results[p.ToolResult.CallID] = true
			}
		}
	}
	for id := range calls {
		if !results[id] {
			t.Errorf("call %s lost its result", id)
		}
	}
	if len(h) != 3*82 {
		t.Errorf("history was modified: %d messages", len(h))
	}
}

// A 40-step browsing turn after a long conversation: the request stays
// bounded however long the history grows.
func TestBudgetBoundsAGrowingConversation(t *testing.T) {
	const limit, fixed = 60_000, 3_000
	for _, turns := range []int{1, 5, 20} {
		h, current := browsing(turns, 40)
		h = h[:len(h)-1] // mid-turn: the newest message holds tool results
		out := FitBudget(h, current, fixed, limit)
		if got := total(fixed, out); got > limit {
			t.Errorf("%d turns: ~%d tokens, limit %d", turns, got, limit)
		}
		if got := llmtest.LastToolResults(llm.Request{Messages: out}); llmtest.ResultText(got[0]) == elidedNote {
			t.Errorf("%d turns: the newest tool result was elided", turns)
		}
	}
}

func TestBudgetKeepsShortHistoriesWhole(t *testing.T) {
	h := []llm.Message{userText("a"), {Role: llm.RoleAssistant, Parts: []llm.Part{{Kind: llm.PartText, Text: "b"}}}, userText("c")}
	out := FitBudget(h, 2, 100, 10_000)
	if len(out) != 3 || &out[0] != &h[0] {
		t.Errorf("a short history was copied or cut")
	}
}

// page is n bytes (at most 2 MB, and a few fewer to end on a character) of
// text in lines, with multi-byte characters, like a page snapshot.
func page(n int) string {
	return string(trimPartialRune([]byte(pageText()[:n])))
}

var pageText = sync.OnceValue(func() string {
	var b strings.Builder
	for i := 0; b.Len() < 2<<20; i++ {
		fmt.Fprintf(&b, "- row %d: Grüße, 東京 — a line of a page snapshot\n", i)
	}
	return b.String()
})

// results is one user message with a tool result per text (and images
// images in the last one), after the assistant message calling them.
func results(prefix string, images int, texts ...string) []llm.Message {
	call := llm.Message{Role: llm.RoleAssistant}
	res := llm.Message{Role: llm.RoleUser}
	for i, text := range texts {
		id := fmt.Sprintf("%s%d", prefix, i)
		call.Parts = append(call.Parts, llm.Part{Kind: llm.PartToolCall,
			ToolCall: &llm.ToolCall{ID: id, Name: "browser_snapshot", Arguments: []byte(`{}`)}})
		content := []llm.Part{{Kind: llm.PartText, Text: text}}
		if i == len(texts)-1 {
			for range images {
				content = append(content, llm.Part{Kind: llm.PartImage, Image: &llm.Image{MIMEType: "image/png", Path: "images/x.png"}})
			}
		}
		res.Parts = append(res.Parts, llm.Part{Kind: llm.PartToolResult,
			ToolResult: &llm.ToolResult{CallID: id, Name: "browser_snapshot", Content: content}})
	}
	return []llm.Message{call, res}
}

// checkPairs reports calls without results and results without calls.
func checkPairs(t *testing.T, msgs []llm.Message) {
	t.Helper()
	calls, answered := map[string]bool{}, map[string]bool{}
	for i, m := range msgs {
		for _, p := range m.Parts {
			if p.ToolCall != nil {
				calls[p.ToolCall.ID] = true
			}
			if p.ToolResult != nil {
				answered[p.ToolResult.CallID] = true
				if i == 0 || !slices.ContainsFunc(msgs[i-1].Parts, func(q llm.Part) bool {
					return q.ToolCall != nil && q.ToolCall.ID == p.ToolResult.CallID
				}) {
					t.Errorf("result %s does not follow its call", p.ToolResult.CallID)
				}
			}
		}
	}
	for id := range calls {
		if !answered[id] {
			t.Errorf("call %s lost its result", id)
		}
	}
}

// The newest tool results are sent whole when they fit, and cut when
// nothing else is left to cut: no request is over the limit.
func TestBudgetCutsTheNewestResultsLast(t *testing.T) {
	const limit = 100_000
	old, _ := browsing(3, 40)
	cases := []struct {
		name    string
		fixed   int
		history []llm.Message
		whole   int // results of the newest message that must stay whole
		images  int // images of the newest results that must be sent
	}{
		{"one huge result", 5_000, append([]llm.Message{userText("read it")}, results("a", 0, page(1_800_000))...), 0, 0},
		{"one huge of several", 5_000, append([]llm.Message{userText("read them")},
			results("b", 0, page(8_000), page(1_800_000), page(12_000), page(6_000))...), 3, 0},
		{"forty parallel results of 50 KB", 5_000, append([]llm.Message{userText("all pages")},
			results("c", 0, slices.Repeat([]string{page(50 << 10)}, 40)...)...), 0, 0},
		{"image-heavy", 5_000, append([]llm.Message{userText("screens")}, results("d", 80, page(40_000))...), 0, 50},
		{"huge result after a long conversation", 5_000,
			append(append(slices.Clone(old), userText("one more")), results("e", 2, page(900_000), page(900_000))...), 0, 2},
		{"system prompt and tools near the limit", limit - 1_500,
			append([]llm.Message{userText("read it")}, results("f", 0, page(200_000), page(300))...), 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			current := 0
			for i, m := range c.history {
				if StartsTurn(m) {
					current = i
				}
			}
			before := llmtest.CloneHistory(c.history)
			out := FitBudget(c.history, current, c.fixed, limit)
			if got := total(c.fixed, out); got > limit {
				t.Errorf("request of ~%d tokens, limit %d", got, limit)
			}
			checkPairs(t, out)
			if !reflect.DeepEqual(llmtest.CloneHistory(c.history), before) {
				t.Error("the history was modified")
			}
			if got := llmtest.LastUserText(llm.Request{Messages: out}); got != llmtest.LastUserText(llm.Request{Messages: c.history}) {
				t.Errorf("the user's message became %q", got)
			}
			sent := llmtest.LastToolResults(llm.Request{Messages: out})
			orig := llmtest.LastToolResults(llm.Request{Messages: c.history})
			cut := 0
			for i, r := range sent {
				text, was := llmtest.ResultText(r), llmtest.ResultText(orig[i])
				if text == was {
					continue
				}
				cut++
				head, note, ok := strings.Cut(text, "[")
				if !ok || !strings.HasPrefix(was, head) || !utf8.ValidString(head) ||
					(head != "" && !strings.HasSuffix(head, "\n")) {
					t.Errorf("result %d: the kept head is not the start of the text cut at a line end: %.80q", i, head)
				}
				if !strings.Contains(note, "left out") || !strings.Contains(note, "ask for less") {
					t.Errorf("result %d: the note does not say what was left out and what to do: %q", i, note)
				}
			}
			if cut == 0 {
				t.Error("nothing of the newest results was cut")
			}
			if len(sent)-cut < c.whole {
				t.Errorf("%d of %d results were cut, want %d kept whole", cut, len(sent), c.whole)
			}
			images := 0
			for _, r := range sent {
				for _, p := range r.Content {
					if p.Kind == llm.PartImage {
						images++
					}
				}
			}
			if images < c.images {
				t.Errorf("%d images sent, want at least %d: text goes first", images, c.images)
			}
		})
	}
}

// However the history looks, the request fits the limit or is as small as
// the budget can make it (what it sends with a limit of 0, where the newest
// results are down to notes); calls keep their results and the history is
// not changed.
func FuzzFitBudget(f *testing.F) {
	f.Add(uint8(0), uint8(1), uint16(60_000), uint8(0), uint16(20_000), uint16(5_000))
	f.Add(uint8(2), uint8(4), uint16(30_000), uint8(30), uint16(8_000), uint16(1_000))
	f.Add(uint8(1), uint8(40), uint16(2_000), uint8(3), uint16(30_000), uint16(29_000))
	f.Fuzz(func(t *testing.T, oldTurns, n uint8, size uint16, images uint8, limit, fixed uint16) {
		h, _ := browsing(int(oldTurns%4), 3)
		current := len(h)
		h = append(h, userText("now"))
		var texts []string
		for i := range int(n%48) + 1 {
			texts = append(texts, page(int(size)%20_000*(1+i%3)))
		}
		h = append(h, results("z", int(images%64), texts...)...)
		before := llmtest.CloneHistory(h)
		out := FitBudget(h, current, int(fixed), int(limit))
		smallest := FitBudget(h, current, int(fixed), 0)
		floor := total(int(fixed), smallest)
		for _, r := range llmtest.LastToolResults(llm.Request{Messages: smallest}) {
			for _, p := range r.Content {
				if p.Kind == llm.PartImage || len(p.Text) > 400 {
					t.Fatalf("with no room, a newest result still holds %s", p.Kind)
				}
			}
		}
		if got := total(int(fixed), out); got > max(int(limit), floor) {
			t.Errorf("~%d tokens, limit %d, the smallest request %d", got, limit, floor)
		}
		checkPairs(t, out)
		if !reflect.DeepEqual(llmtest.CloneHistory(h), before) {
			t.Error("the history was modified")
		}
	})
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}
