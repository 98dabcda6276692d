package main

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// The conversation: 40 facts stated in the first 40 turns, 159 browsing
// turns that read 100 lines of a real manual each (the built-in read tool
// on files of the chat's workspace), and a last turn that asks for the
// facts. Every user message starts with its tag, [t001] … [t200], which
// the model's answer repeats (the driver waits for it).

const (
	turns     = 200
	factTurns = 40
	readLines = 100 // lines of a page a read call reads
	readCalls = 2   // read calls a browsing turn makes
	// answerExcerpt is how much of what it read a browsing answer quotes.
	answerExcerpt = 2000
	lineWidth     = 100 // the pages are wrapped at this many bytes
)

// subjects of the facts; each gets a value no page holds.
var subjects = []string{
	"my locker code", "the staging server's name", "my sister's birthday", "the project's budget code",
	"the Wi-Fi network at the office", "my train to Lyon", "the dentist's phone extension", "our team's Slack channel",
	"the invoice number from Acme", "my passport's expiry month", "the name of my cat", "the room of Friday's review",
	"the licence plate of the van", "my gym membership number", "the parcel's tracking code", "the printer's IP address",
	"the bug we are chasing", "the release we ship next", "my favourite tea", "the customer's contact person",
	"the database replica's port", "the recipe's secret ingredient", "the hotel in Porto", "the flight to Oslo",
	"the landlord's IBAN prefix", "the seminar's room code", "my bike lock combination", "the vendor's quote number",
	"the nickname of the build bot", "the meeting's dial-in PIN", "the library card number", "the rental car's colour",
	"the podcast I should finish", "the plant that needs water", "the kid's school class", "the conference hashtag",
	"the laptop's asset tag", "the garage door code", "the insurance policy number", "the book club's next title",
}

// factValue is fact i's value: a word and a number no page holds.
func factValue(i int) string {
	words := []string{"kestrel", "basalt", "juniper", "quasar", "marlin", "saffron", "tundra", "zephyr"}
	return fmt.Sprintf("%s-%04d", words[i%len(words)], (i*7919+1237)%10000)
}

// userTurns are the 200 messages, and each browsing turn's page and line.
func userTurns(pages []page) []string {
	out := make([]string, 0, turns)
	for i := range factTurns {
		out = append(out, fmt.Sprintf("[t%03d] Remember: %s is %s.", i+1, subjects[i], factValue(i)))
	}
	p, line := 0, 1
	for t := factTurns; t < turns-1; t++ {
		if line > pages[p].lines {
			p, line = (p+1)%len(pages), 1
		}
		out = append(out, fmt.Sprintf("[t%03d] Please read pages/%s from line %d (%d lines) and tell me what it covers.",
			t+1, pages[p].name, line, readCalls*readLines))
		line += readCalls * readLines
	}
	return append(out, fmt.Sprintf("[t%03d] List everything I asked you to remember.", turns))
}

// page is a manual as text in the chat's workspace.
type page struct {
	name  string
	lines int
}

// sources are the manuals read: the Go spec, and Debian's HTML manuals
// where installed.
var sources = []string{
	"doc/go_spec.html", // under GOROOT
	"/usr/share/doc/python3/python-policy.html",
	"/usr/share/doc/zlib1g-dev/examples/zlib_how.html",
	"/usr/share/doc/libjs-underscore/index.html",
	"/usr/share/doc/libffi8/html/Using-libffi.html",
}

// writePages writes each source there is as text, wrapped, to
// dir/pages/<name>.txt.
func writePages(goroot, dir string) ([]page, error) {
	if err := os.MkdirAll(filepath.Join(dir, "pages"), 0o700); err != nil {
		return nil, err
	}
	var out []page
	for _, src := range sources {
		if !filepath.IsAbs(src) {
			src = filepath.Join(goroot, src)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			continue
		}
		text := wrap(htmlText(string(b)))
		name := strings.TrimSuffix(filepath.Base(src), ".html") + ".txt"
		if err := os.WriteFile(filepath.Join(dir, "pages", name), []byte(text), 0o600); err != nil {
			return nil, err
		}
		out = append(out, page{name: name, lines: strings.Count(text, "\n")})
	}
	if len(out) == 0 || out[0].name != "go_spec.txt" {
		return nil, fmt.Errorf("%s is missing (-goroot)", filepath.Join(goroot, sources[0]))
	}
	return out, nil
}

var (
	scriptRe = regexp.MustCompile(`(?is)<(script|style)\b.*?</(script|style)>`)
	blockRe  = regexp.MustCompile(`(?i)<(br|/p|/h[1-6]|/li|/tr|/pre|/div|/dt|/dd|/table)\b[^>]*>`)
	tagRe    = regexp.MustCompile(`<[^>]*>`)
	spaceRe  = regexp.MustCompile(`[ \t\r]+`)
)

// htmlText is the text of a page: tags out, entities decoded, one line
// per block, no empty lines.
func htmlText(s string) string {
	s = scriptRe.ReplaceAllString(s, "")
	s = blockRe.ReplaceAllString(s, "\n")
	s = html.UnescapeString(tagRe.ReplaceAllString(s, ""))
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(spaceRe.ReplaceAllString(l, " ")); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// wrap breaks lines longer than lineWidth at spaces.
func wrap(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		for len(l) > lineWidth {
			i := strings.LastIndexByte(l[:lineWidth], ' ')
			if i <= 0 {
				i = lineWidth
			}
			b.WriteString(l[:i] + "\n")
			l = strings.TrimLeft(l[i:], " ")
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

var (
	tagOf   = regexp.MustCompile(`^\[t\d{3}\]`)
	readOf  = regexp.MustCompile(`read (pages/\S+) from line (\d+) \((\d+) lines\)`)
	keepFor = func(s string) bool { return strings.Contains(s, "Remember:") || strings.Contains(s, "I read lines") }
)

// honest is the scripted model. It answers from what the request holds
// and nothing else: the tag and the task from the user's last message, a
// summary by keeping the sentences of the text it was sent that state a
// fact ("Remember: …") or what a page read established ("I read lines …"),
// the facts asked for from every "Remember:" sentence the request holds.
func honest(req llmtest.Request) llmtest.Reply {
	if llmtest.AsksForSummary(req) {
		r := llmtest.Summariser(keepFor)(req)
		// As a real model, it stops at max_tokens (about 4 bytes each).
		if limit, _ := req.JSON["max_tokens"].(float64); limit > 0 && len(r.Text) > int(limit)*4 {
			r.Text, r.StopReason = r.Text[:int(limit)*4], "max_tokens"
		}
		return r
	}
	user, results, read := lastUser(req.JSON)
	tag := tagOf.FindString(user)
	switch m := readOf.FindStringSubmatch(user); {
	case m != nil && results < readCalls:
		// The pages in calls of readLines lines each.
		from, _ := strconv.Atoi(m[2])
		return llmtest.ToolCalls(llm.ToolCall{ID: fmt.Sprintf("call_%s_%d", strings.Trim(tag, "[]"), results), Name: "read",
			Arguments: json.RawMessage(fmt.Sprintf(`{"path":%q,"offset":%d,"limit":%d}`, m[1], from+results*readLines, readLines))})
	case m != nil:
		// What it read, with a long excerpt of it: a browsing answer.
		from, _ := strconv.Atoi(m[2])
		n, _ := strconv.Atoi(m[3])
		excerpt := strings.Join(strings.Fields(read), " ")
		excerpt = excerpt[:min(len(excerpt), answerExcerpt)]
		return llmtest.Text(fmt.Sprintf("%s I read lines %d to %d of %s\n\nIt covers: %s …", tag, from, from+n-1, m[1], excerpt))
	case strings.Contains(user, "List everything"):
		var facts []string
		for _, s := range llmtest.Sentences(llmtest.PromptText(req)) {
			if i := strings.Index(s, "Remember: "); i >= 0 && !contains(facts, s[i:]) {
				facts = append(facts, s[i:])
			}
		}
		return llmtest.Text(tag + " " + strings.Join(facts, "\n"))
	}
	return llmtest.Text(tag + " Noted.")
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// lastUser is the text of the last user message of an Anthropic request
// that the user wrote (its last text block), how many tool results came
// after it, and their text.
func lastUser(body map[string]any) (text string, results int, read string) {
	msgs, _ := body["messages"].([]any)
	var got []string
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] != "user" {
			continue
		}
		blocks, _ := m["content"].([]any)
		for j := len(blocks) - 1; j >= 0; j-- {
			b, _ := blocks[j].(map[string]any)
			switch b["type"] {
			case "tool_result":
				results++
				var texts []string
				collectText(b["content"], &texts)
				got = append(texts, got...)
			case "text":
				if s, _ := b["text"].(string); tagOf.MatchString(s) {
					return s, results, strings.Join(got, "\n")
				}
			}
		}
	}
	return "", results, strings.Join(got, "\n")
}

// collectText appends the texts of a tool result's content.
func collectText(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case []any:
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					*out = append(*out, s)
				}
			}
		}
	}
}
