package session

// What a request carries of the history is shaped by who knows the
// results' format: the browser preset leaves out the page snapshots that
// later ones of the same tab supersede (preset.SupersedeSnapshots, called
// by the turn's request); the transcript keeps them all.

// serverOf names who offers an MCP tool of ts (its Group; "" for others).
func (ts *toolset) serverOf(tool string) string { return ts.mcp[tool].Group() }
