package session

import (
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/preset"
)

// What a request carries of the history is shaped by who knows the
// results' format: the browser preset leaves out the page snapshots that
// later ones of the same tab supersede (preset.SupersedeSnapshots); the
// transcript keeps them all.

// supersedeSnapshots is history as a request carries it. serverOf names
// the server of a tool. history is not modified.
func supersedeSnapshots(history []llm.Message, serverOf func(tool string) string) []llm.Message {
	return preset.SupersedeSnapshots(history, serverOf)
}

// serverOf names who offers an MCP tool of ts (its Group; "" for others).
func (ts *toolset) serverOf(tool string) string { return ts.mcp[tool].Group() }
