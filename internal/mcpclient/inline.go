package mcpclient

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// Some servers answer with links to files they wrote instead of the content:
// @playwright/mcp 0.0.83's browser_navigate says "[Snapshot](browser/page-….yml)".
// When a text result links to a small text file inside the chat's
// workspace, its content is put into the result right after the link, so
// the model reads the page in the same step. Screenshots and other binary
// files stay links.

// MaxInlineBytes caps one inlined file. Inlined text also counts against
// the result's cap (Options.MaxResultTokens): the files are inlined while
// room is left, and the rest stay links.
const MaxInlineBytes = 50 * 1024

// minInlineBytes is the least room worth inlining a file into.
const minInlineBytes = 1024

// inlineExts are the text files worth inlining, with the fence language.
var inlineExts = map[string]string{
	".yml": "yaml", ".yaml": "yaml", ".md": "markdown", ".txt": "", ".log": "",
	".json": "json", ".csv": "", ".html": "html",
}

// markdownLink matches [text](target) with a target without spaces.
var markdownLink = regexp.MustCompile(`\[[^\]\n]*\]\(([^)\s]+)\)`)

// inlineLinkedFiles rewrites the text parts of r in place, inlining at
// most budget bytes in all (what the result's cap leaves). base is the
// directory relative links are resolved against (the server's working
// directory); only files inside workspace are read. Files left out for
// want of room are said so at the end.
func inlineLinkedFiles(r *Result, base, workspace string, budget int) {
	if workspace == "" {
		return
	}
	in := inliner{base: base, budget: budget}
	for i := range r.Content {
		c := &r.Content[i]
		if c.Kind != chat.TextPart || !strings.Contains(c.Text, "](") {
			continue
		}
		if in.root == "" { // resolved on the first link: most results have none
			var err error
			if in.root, err = filepath.EvalSymlinks(workspace); err != nil {
				return
			}
		}
		c.Text = in.text(c.Text)
	}
	if in.skipped > 0 {
		r.Truncated = true
		r.Content = append(r.Content, textContent(fmt.Sprintf(
			"[%s not inlined: the result is at its size limit; they are in the workspace]",
			plural(in.skipped, "linked file"))))
	}
}

// inliner inlines the files one result links to, within its budget.
type inliner struct {
	base, root string
	budget     int // bytes left
	skipped    int // files left out for want of room
}

func (in *inliner) text(text string) string {
	locs := markdownLink.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	seen := map[string]bool{}
	for _, loc := range locs {
		target := text[loc[2]:loc[3]]
		if seen[target] {
			continue
		}
		limit := min(MaxInlineBytes, in.budget)
		if limit < minInlineBytes {
			limit = 0 // no room: only whether it would have been inlined
		}
		content, lang, ok := readInlinable(target, in.base, in.root, limit)
		if !ok {
			continue
		}
		seen[target] = true
		// Insert after the end of the line holding the link.
		end := loc[1]
		if nl := strings.IndexByte(text[end:], '\n'); nl >= 0 {
			end += nl
		} else {
			end = len(text)
		}
		if limit == 0 || end < last {
			in.skipped++
			continue
		}
		in.budget -= len(content)
		b.WriteString(text[last:end])
		b.WriteString("\n```")
		b.WriteString(lang)
		b.WriteByte('\n')
		b.WriteString(content)
		if !strings.HasSuffix(content, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("```")
		last = end
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// readInlinable reads at most limit bytes of target if it is a text file
// inside root.
func readInlinable(target, base, root string, limit int) (content, lang string, ok bool) {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "#") {
		return "", "", false
	}
	target, _, _ = strings.Cut(target, "#") // "console.log#L1": the file, whole
	lang, ok = inlineExts[strings.ToLower(filepath.Ext(target))]
	if !ok {
		return "", "", false
	}
	p := target
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", "", false
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", "", false
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return "", "", false
	}
	if limit <= 0 {
		return "", lang, true
	}
	f, err := os.Open(real)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	buf := make([]byte, min(fi.Size(), int64(limit)+1, MaxInlineBytes+1))
	n, _ := io.ReadFull(f, buf)
	buf = buf[:n]
	truncated := len(buf) > limit || fi.Size() > int64(limit)
	if len(buf) > limit {
		buf = buf[:limit]
	}
	for i := 0; i < utf8.UTFMax-1 && truncated && len(buf) > 0 && !utf8.Valid(buf); i++ {
		buf = buf[:len(buf)-1] // the cut may have split a rune
	}
	if !utf8.Valid(buf) {
		return "", "", false // not text after all
	}
	content = string(buf)
	if truncated {
		content += fmt.Sprintf("\n[file truncated at %d KB of %d KB]", len(buf)/1024, (fi.Size()+1023)/1024)
	}
	return content, lang, true
}
