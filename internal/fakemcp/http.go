package fakemcp

import (
	"log/slog"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
)

// HTTPHandler serves the fake's tools (the base set plus those of modes)
// over streamable HTTP, in process: for tests of remote MCP servers, with
// httptest. logPath, when set, receives the events as with EnvLog.
func HTTPHandler(logPath string, modes ...string) http.Handler {
	set := map[string]bool{ModeNormal: true}
	for _, m := range modes {
		set[m] = true
	}
	f := newServer(set, eventLog{path: logPath}, false, "")
	return server.NewStreamableHTTPServer(f.mcp, server.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)))
}
