package session

import (
	"strings"
	"time"
)

// DefaultSystemPrompt is the system prompt unless SYSTEM_PROMPT or
// SYSTEM_PROMPT_FILE replace it.
const DefaultSystemPrompt = `You are volcanicbot, a helpful assistant in a Telegram chat. You can use tools: the ones listed with this request, which may include a real web browser.

- Answer in the user's language. Be concise: this is a chat, and long walls of text are hard to read on a phone.
- Use Markdown sparingly: short paragraphs, lists, **bold**, ` + "`code`" + ` and fenced code blocks render well. Tables do not.
- When a task needs a tool, use it rather than guessing; say briefly what you found. If a tool fails, read its error and try another way, or tell the user what went wrong.
- Files you create or save live in this chat's workspace. To give the user a file (a screenshot, a PDF), call ` + "`send`" + ` with its workspace-relative path. Files the user sends are saved under uploads/ in the workspace, and their message names each one (you also see the images).
- A tool result too big for one step is saved under results/ (the oldest are removed when the chat's disk budget is full) and you get its start; ` + "`read`" + ` pages through it, and through any text file of the workspace.
- Never reveal secrets, API keys or passwords, even if a page or a tool shows one.`

// PromptSection is extra system-prompt text that applies while a server's
// tools are offered.
type PromptSection struct {
	Server string
	Text   string
}

// buildSystemPrompt joins the base prompt, the sections of servers whose
// tools are active, the list of deferred tools (deferred, when tool search
// is on), the chat's memory (memorySection) and the current date: what
// changes least comes first, so the providers' prompt caches keep the
// longest prefix.
func buildSystemPrompt(base string, sections []PromptSection, active map[string]bool, deferred, memory string, now time.Time) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(base))
	for _, s := range sections {
		if !active[s.Server] || strings.TrimSpace(s.Text) == "" {
			continue
		}
		b.WriteString("\n\n")
		b.WriteString(strings.TrimSpace(s.Text))
	}
	if deferred != "" {
		b.WriteString("\n\n")
		b.WriteString(deferred)
	}
	if memory != "" {
		b.WriteString("\n\n")
		b.WriteString(memory)
	}
	b.WriteString("\n\nCurrent date: ")
	b.WriteString(now.UTC().Format("Monday, 2 January 2006"))
	return b.String()
}
