package mcpclient

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Some servers answer with links to files they wrote instead of the content:
// @playwright/mcp 0.0.83's browser_navigate says "[Snapshot](browser/page-….yml)".
// When a text result links to a small text file inside the chat's
// workspace, its content is put into the result right after the link, so
// the model reads the page in the same step. Screenshots and other binary
// files stay links.

// MaxInlineBytes caps one inlined file.
const MaxInlineBytes = 50 * 1024

// inlineExts are the text files worth inlining, with the fence language.
var inlineExts = map[string]string{
	".yml": "yaml", ".yaml": "yaml", ".md": "markdown", ".txt": "", ".log": "",
	".json": "json", ".csv": "", ".html": "html",
}

// markdownLink matches [text](target) with a target without spaces.
var markdownLink = regexp.MustCompile(`\[[^\]\n]*\]\(([^)\s]+)\)`)

// inlineLinkedFiles rewrites the text parts of r in place. base is the
// directory relative links are resolved against (the server's working
// directory); only files inside workspace are read.
func inlineLinkedFiles(r *Result, base, workspace string) {
	if workspace == "" {
		return
	}
	root := "" // resolved on the first link: most results have none
	for i := range r.Content {
		c := &r.Content[i]
		if c.Type != ContentText || !strings.Contains(c.Text, "](") {
			continue
		}
		if root == "" {
			var err error
			if root, err = filepath.EvalSymlinks(workspace); err != nil {
				return
			}
		}
		c.Text = inlineText(c.Text, base, root)
	}
}

func inlineText(text, base, root string) string {
	locs := markdownLink.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	seen := map[string]bool{}
	for _, loc := range locs {
		target := text[loc[2]:loc[3]]
		content, lang, ok := readInlinable(target, base, root)
		if !ok || seen[target] {
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
		if end < last {
			continue
		}
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

// readInlinable reads target if it is a small text file inside root.
func readInlinable(target, base, root string) (content, lang string, ok bool) {
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
	f, err := os.Open(real)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	buf := make([]byte, min(fi.Size(), MaxInlineBytes+1))
	n, _ := f.Read(buf)
	buf = buf[:n]
	truncated := len(buf) > MaxInlineBytes || fi.Size() > MaxInlineBytes
	if len(buf) > MaxInlineBytes {
		buf = buf[:MaxInlineBytes]
	}
	for i := 0; i < utf8.UTFMax-1 && truncated && len(buf) > 0 && !utf8.Valid(buf); i++ {
		buf = buf[:len(buf)-1] // the cut may have split a rune
	}
	if !utf8.Valid(buf) {
		return "", "", false // not text after all
	}
	content = string(buf)
	if truncated {
		content += "\n[file truncated at 50 KB]"
	}
	return content, lang, true
}
