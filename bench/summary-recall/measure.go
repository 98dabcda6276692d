package main

import (
	"crypto/sha256"
	"encoding/json"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// What a request costs and what of it the prompt cache reads, from the
// Anthropic request body the fake received. A request is a row of blocks
// in the order the provider caches them — the tools, the system prompt,
// then every content block of every message — each with its tokens (the
// o200k tokenizer; framing of 8 a tool, 4 a message, imageTokens an image)
// and whether it carries a cache mark (cache_control) — the adapter marks
// the last tool, the last stable tool, the system prompt and the last
// block of the conversation.
//
// The cache hit of a request is the tokens of its longest prefix of
// blocks that is identical to the previous request's and ends at a cache
// mark of the previous request: what the provider would read from the
// cache the previous request wrote. The share is the hits over all prompt
// tokens, the summary requests included (they are misses: another system
// prompt, no tools).

const imageTokens = 1600

// block is one cacheable unit of a request.
type block struct {
	key    [32]byte // identity: what it holds, its role, whether it opens a message
	tokens int
	mark   bool
}

// counter counts blocks' tokens, each distinct block once.
type counter struct {
	tok   *llm.Tokenizer
	known map[[32]byte]int
}

func newCounter() *counter { return &counter{tok: &llm.Tokenizer{}, known: map[[32]byte]int{}} }

// blocks is the request body as blocks.
func (c *counter) blocks(body []byte) []block {
	var req struct {
		Tools    []map[string]any `json:"tools"`
		System   []map[string]any `json:"system"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	var out []block
	for _, t := range req.Tools {
		out = append(out, c.block("tool", t, 8))
	}
	for _, s := range req.System {
		out = append(out, c.block("system", s, 4))
	}
	for _, m := range req.Messages {
		for j, b := range m.Content {
			frame, kind := 0, m.Role
			if j == 0 {
				frame, kind = 4, m.Role+"|opens"
			}
			out = append(out, c.block(kind, b, frame))
		}
	}
	return out
}

// block is v (a tool, a system block or a content block) of kind.
func (c *counter) block(kind string, v map[string]any, frame int) block {
	_, mark := v["cache_control"]
	delete(v, "cache_control")
	raw, _ := json.Marshal(v)
	key := sha256.Sum256(append([]byte(kind+"\x00"), raw...))
	n, ok := c.known[key]
	if !ok {
		n = frame + c.count(v)
		c.known[key] = n
	}
	return block{key: key, tokens: n, mark: mark}
}

// count is the tokens of what v says: texts, names, descriptions, schemas
// and tool inputs; an image is imageTokens.
func (c *counter) count(v map[string]any) int {
	n := 0
	for k, e := range v {
		switch k {
		case "text", "name", "description":
			s, _ := e.(string)
			n += c.tok.Count(s)
		case "input", "input_schema":
			raw, _ := json.Marshal(e)
			n += c.tok.Count(string(raw))
		case "content":
			switch e := e.(type) {
			case string:
				n += c.tok.Count(e)
			case []any:
				for _, p := range e {
					if pm, ok := p.(map[string]any); ok {
						n += c.count(pm)
					}
				}
			}
		case "source":
			n += imageTokens
		}
	}
	return n
}

// tally is a run's requests, counted.
type tally struct {
	requests, summaries int
	tokens, hits        int // all prompt tokens; those the cache would read
	largest             int
	prev                []block
}

// add counts a request's blocks.
func (t *tally) add(bs []block, summary bool) {
	t.requests++
	if summary {
		t.summaries++
	}
	total := 0
	for _, b := range bs {
		total += b.tokens
	}
	t.tokens += total
	t.largest = max(t.largest, total)
	t.hits += cacheHit(t.prev, bs)
	t.prev = bs
}

// cacheHit is the tokens of the longest prefix of cur identical to prev's
// that ends at one of prev's cache marks.
func cacheHit(prev, cur []block) int {
	hit, sum := 0, 0
	for i := 0; i < len(prev) && i < len(cur); i++ {
		if prev[i].key != cur[i].key {
			break
		}
		sum += cur[i].tokens
		if prev[i].mark {
			hit = sum
		}
	}
	return hit
}

// carried counts the facts whose values text holds.
func carried(text string) int {
	n := 0
	for i := range factTurns {
		if strings.Contains(text, factValue(i)) {
			n++
		}
	}
	return n
}
