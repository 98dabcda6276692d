package fakemcp

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// URL-mode elicitation as a real server does it (mode ask): the page the
// user is sent to is the fake's own, /visit/<elicitationId>, and a GET of
// it is the interaction finished: the fake sends
// notifications/elicitation/complete for that id (any id: a test visits
// an unknown one too) and logs an EventVisited. Over HTTP the page is
// served by HTTPHandler beside the MCP endpoint; over stdio by a listener
// on 127.0.0.1 the fake opens at its first visit page, for its life.

// EventVisited is a GET of a visit page: Reason is its elicitationId.
const EventVisited = "visited"

// Tools of the visits.
const (
	// ToolNeedsVisit answers URLElicitationRequiredError (-32042, on
	// 2025-11-25) naming one URL-mode elicitation, its page a visit page,
	// until that page was visited → "connected".
	ToolNeedsVisit = "needs_visit"
	// NeedsVisitID is needs_visit's elicitationId.
	NeedsVisitID = "connect-1"
)

// visits are the fake's visit pages.
type visits struct {
	mu      sync.Mutex
	base    string // stdio: the listener's http://127.0.0.1:port
	next    int
	visited map[string]bool
}

// hostKey carries the HTTP request's host to the tools (HTTPHandler).
type hostKey struct{}

// withHost is HTTPHandler's context function.
func withHost(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, hostKey{}, r.Host)
}

// page is the URL of id's visit page.
func (f *fake) page(ctx context.Context, id string) (string, error) {
	if host, ok := ctx.Value(hostKey{}).(string); ok && host != "" {
		return "http://" + host + "/visit/" + id, nil
	}
	v := &f.visits
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.base == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		go func() { _ = http.Serve(l, http.HandlerFunc(f.serveVisit)) }() // lives as long as the process
		v.base = "http://" + l.Addr().String()
	}
	return v.base + "/visit/" + id, nil
}

// newVisitID is a fresh elicitationId for a visit page.
func (f *fake) newVisitID() string {
	f.visits.mu.Lock()
	defer f.visits.mu.Unlock()
	f.visits.next++
	return "visit-" + strconv.Itoa(f.visits.next)
}

func (f *fake) wasVisited(id string) bool {
	f.visits.mu.Lock()
	defer f.visits.mu.Unlock()
	return f.visits.visited[id]
}

// serveVisit serves GET /visit/<id>: the interaction at the page is over.
func (f *fake) serveVisit(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, "/visit/")
	if !ok || id == "" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	f.visits.mu.Lock()
	if f.visits.visited == nil {
		f.visits.visited = map[string]bool{}
	}
	f.visits.visited[id] = true
	f.visits.mu.Unlock()
	f.log.add(Event{Event: EventVisited, Reason: id})
	f.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationElicitationComplete), map[string]any{"elicitationId": id})
	_, _ = w.Write([]byte("Done: you may close this page.\n"))
}

// needsVisitTool is ToolNeedsVisit.
func (f *fake) needsVisitTool() server.ServerTool {
	return server.ServerTool{
		Tool: mcp.NewTool(ToolNeedsVisit, mcp.WithDescription("Needs the user to connect an account at a page first.")),
		Handler: func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if f.wasVisited(NeedsVisitID) {
				return mcp.NewToolResultText("connected"), nil
			}
			u, err := f.page(ctx, NeedsVisitID)
			if err != nil {
				return nil, err
			}
			return nil, mcp.URLElicitationRequiredError{Elicitations: []mcp.ElicitationParams{{
				Mode: mcp.ElicitationModeURL, ElicitationID: NeedsVisitID, URL: u, Message: "Connect your account first",
			}}}
		},
	}
}
