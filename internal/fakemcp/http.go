package fakemcp

import (
	"log/slog"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
)

// HTTPHandler serves the fake's tools (the base set plus those of modes)
// over streamable HTTP, in process: for tests of remote MCP servers, with
// httptest. logPath, when set, receives the events as with EnvLog. In mode
// ask it also serves the visit pages, /visit/<elicitationId> (visit.go).
func HTTPHandler(logPath string, modes ...string) http.Handler {
	set := map[string]bool{ModeNormal: true}
	for _, m := range modes {
		set[m] = true
	}
	f := newServer(set, eventLog{path: logPath}, false, "")
	mcpHandler := server.NewStreamableHTTPServer(f.mcp, server.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)),
		server.WithHTTPContextFunc(withHost))
	if !set[ModeAsk] {
		return mcpHandler
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/visit/", f.serveVisit)
	mux.Handle("/", mcpHandler)
	return mux
}
