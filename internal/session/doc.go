// Package session runs volcanicbot's chats: a manager mapping chat ids to
// session goroutines, each owning its workspace, its conversation (kept on
// disk) and its MCP connections, and the agent loop that alternates between
// the model and tools.
//
// The pieces:
//
//   - The Manager (manager.go) maps chat ids to sessions. Its lock guards
//     only that map and whether it is closed; each session has a lock of
//     its own for its queue and its running turn.
//   - A session (session.go) is one chat: a goroutine that runs while
//     there is work (and a while after), handles the chat's inputs in
//     order — messages, /new — and releases the conversation when idle.
//     /stop cancels the running turn from outside it.
//   - The agent loop (turn.go) is a turn's steps: each builds a request —
//     the system prompt with the sections of the servers whose tools are
//     offered (prompt.go), the history within the context budget
//     (agent.FitBudget), the tools (tools.go) — calls the model, runs the tool
//     calls it asks for, and repeats until the model answers or the step
//     cap is reached.
//   - Tools (tools.go) are the built-ins — send (send.go) and read
//     (read.go), both opening workspace files by one set of rules
//     (workspacefile.go), memory (memory.go) and tool_search — and the MCP tools: the catalogue's entries
//     (chat.CatalogTool, from the Catalogue port) bound to the chat's
//     MCPSession (ports.go; mcpclient satisfies both, cmd/volcanicbot wires
//     them). Every one is a chat.Tool (builtins.go; MCPSession.Bind): the
//     turn's registry (registry.go) finds a call's tool by name and calls
//     it, its arguments checked first (by the tool, or as one JSON object),
//     approved when it is chat.Guarded, and on its lane when it is
//     chat.Sequenced. A name no tool has gets the unknown tool's answer.
//   - Memory (memory.go, memorystore.go): the built-in memory tool keeps
//     the notes the user asks for in one file of the chat's private
//     folder, replaced whole on every change; they are in the system
//     prompt of each of the chat's requests, after /new and restarts too,
//     and /memory reads and deletes them through the Manager.
//   - Tool search (toolsearch.go, bm25.go): when the whole tool list would
//     cost too much, most MCP tools are deferred — named in the system
//     prompt, found with tool_search, loaded after the stable part of the
//     tool list for the rest of the turn and three turns after, worked out
//     from the conversation itself.
//   - Snapshots over time (shaping.go): a browser page snapshot that a
//     later one of the same tab supersedes is one line in the request; the
//     browser preset knows the format (preset.SupersedeSnapshots).
//   - The transcript (transcript.go) is the conversation on disk, one line
//     per message, with images beside it; what is read back is validated
//     and repaired (valid.go), and what is written is capped (caps.go) and
//     never follows a torn line. Uploads (uploads.go) are the files users
//     send, saved in the workspace.
//   - A message is taken (Message.Taken) once the transcript holds it, so
//     the bot can keep it until then and hand it in again after a restart;
//     a turn a restart cut off is told so once (resume.go).
//   - The disk budget (disk.go): what the bot and its servers generate in
//     a chat's folders (its workspace, and its private folder beside it)
//     is pruned oldest first to the chat's budget after
//     each step that called tools, /new and the first read of the
//     conversation; the manager's disk watcher (diskwatch.go) measures the
//     chats with a live server every few seconds and stops a server whose
//     log keeps growing with no call in flight (a page flooding its
//     console).
//   - A panic in a turn, or in one of its tool calls, ends that turn with
//     a reply to the chat, not the process.
//   - The ports (ports.go) are what a session needs from the chat it
//     serves; the bot implements them.
package session
