package bot

import (
	"encoding/json"
	"net/url"
	"strings"
)

// Limits of a progress line.
const (
	maxToolName   = 48
	maxArgSummary = 60
)

// toolEmoji picks an emoji by what the tool's name says it does; the
// first rule whose word appears in the name wins (names may carry a
// server prefix, as in "pw_browser_click").
var toolEmoji = []struct{ word, emoji string }{
	{"browser", "🌐"},
	{"screenshot", "📸"},
	{"search", "🔍"},
	{"fetch", "🔗"},
	{"http", "🔗"},
	{"url", "🔗"},
	{"shell", "💻"},
	{"exec", "💻"},
	{"bash", "💻"},
	{"command", "💻"},
	{"terminal", "💻"},
	{"file", "📄"},
	{"read", "📄"},
	{"write", "📄"},
	{"edit", "📄"},
	{"dir", "📁"},
	{"memory", "🧠"},
	{"send", "📤"},
}

func emojiFor(name string) string {
	lower := strings.ToLower(name)
	for _, r := range toolEmoji {
		if strings.Contains(lower, r.word) {
			return r.emoji
		}
	}
	return "🔧"
}

// summaryKeys are the arguments worth showing, in order of preference.
// Free text (what is typed into a page, file contents) is never shown.
var summaryKeys = []string{"url", "path", "filename", "file", "query", "q", "command", "cmd", "element", "selector", "name"}

// toolLine is one progress line: "🌐 browser_navigate example.com/docs".
func toolLine(name string, args json.RawMessage, scrub func(string) string) string {
	line := emojiFor(name) + " " + truncate(oneLine(name), maxToolName)
	if s := argSummary(args); s != "" {
		line += " " + truncate(oneLine(scrub(s)), maxArgSummary)
	}
	return line
}

// argSummary is the first interesting string argument; a URL loses its
// scheme.
func argSummary(args json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, k := range summaryKeys {
		var s string
		if json.Unmarshal(m[k], &s) != nil || strings.TrimSpace(s) == "" {
			continue
		}
		if k == "url" {
			return shortURL(s)
		}
		return s
	}
	return ""
}

// shortURL is host and path without scheme, credentials or fragment, and
// "?…" for a query (it may hold tokens).
func shortURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	out := u.Host + strings.TrimSuffix(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		out += "?…"
	}
	return out
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncate cuts s to at most n runes, marking the cut with "…".
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
