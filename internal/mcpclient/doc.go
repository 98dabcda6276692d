// Package mcpclient runs MCP servers for volcanicbot: the process-wide tool
// catalogue, per-chat server connections, tool naming, result mapping and
// what /mcp tells, as data (the bot writes it in words). What to run comes from mcpconfig; it knows nothing
// of Telegram, of the LLM or of presets.
//
// The pieces, from the outside in:
//
//   - Client (client.go) is the process-wide side: the configured servers,
//     the catalogue cache and one spawner, and a Session per chat. Close
//     ends everything it started, discoveries included.
//   - The catalogue cache (catalog.go) discovers each server's tools once
//     per process, in a temporary directory, and shares the outcome; only a
//     server's first discovery is ever waited for, and a turn waits for it
//     a few seconds at most (ToolsWithin). Each server's last list is kept
//     on disk (catalogstore.go) and offered at once after a restart.
//   - A Session (client.go) is one chat's servers: a connection per
//     configured server, in the chat's workspace. Session.Tool binds a
//     catalogue's Tool to it as a chat.Tool of its own type (chattool.go):
//     a server's tool, the resource tools, the login tool.
//   - The ceiling of a server's live processes (limiter.go, maxLive)
//     stops the least recently used idle one for a newcomer, or lets it
//     wait in line; a chat's running turn holds what it calls (hold.go).
//   - A connection (connection.go) starts its server on the first call
//     (acquire.go), stops it when idle (stop.go), reports a crash to the
//     next call and starts a new process after it (exit.go), and keeps what
//     /mcp shows. Its background work runs on a WaitGroup that close waits
//     for. A call (call.go) runs on the process it acquired; a failure of
//     the server becomes an error result.
//   - A Shared server's one process (host.go) serves every chat's
//     connection, each in a session of its own; it is pinged while a call
//     is in flight and before a stop, and replaced for every chat when it
//     does not answer (watchdog.go).
//   - The spawner (spawner.go) turns a configuration into a live server:
//     expanded for a workspace, its endpoint opened, the protocol
//     negotiated, a failure explained.
//   - An endpoint (endpoint.go) is what a live server runs on: a child
//     process speaking stdio (stdio.go, on internal/stdio) or an HTTP
//     connection (http.go, on mcp-go's streamable HTTP transport). It says
//     in neutral terms how it ended; the connection maps that to a state.
//   - rpc (protocol.go) is the MCP protocol over an endpoint: the
//     handshake (initialize, or server/discover on 2026-07-28), tools/list
//     and tools/call, with cancellation.
//   - A live server that negotiated 2026-07-28 and declares
//     tools.listChanged keeps a subscriptions/listen stream open for its
//     tool list (listen.go), reopened with a growing wait while the server
//     lives, ended with it.
//   - Results are mapped for the model (result.go: text capped, images
//     kept, every content type handled) and linked files inlined within the
//     cap (inline.go); tool names are sanitised and clashes resolved
//     (naming.go); /mcp's status of each server is made in status.go.
//
// internal/jsonscan is the JSON fast path every line and result goes
// through, fuzzed against encoding/json.
package mcpclient
