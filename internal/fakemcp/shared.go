package fakemcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Tools of the shared-host mode: state kept per MCP session, and the
// session's root as the client names it.
const (
	ToolWhoAmI       = "whoami"        // "root: <path of the first root>"
	ToolRemember     = "remember"      // {"value": s}: the session keeps s
	ToolRecall       = "recall"        // "remembered: <s>", or "remembered nothing"
	ToolSaveState    = "save_state"    // {"filename": f}: writes what the session keeps to <root>/f
	ToolRestoreState = "restore_state" // {"filename": f}: reads it back
	ToolDropContext  = "drop_context"  // the session's context is lost (a crashed browser): its value too
	ToolCutNextSave  = "cut_next_save" // the session's next save_state writes half its file and answers success
)

// serveShared is the shared-host mode: the fake's tools and the session
// tools over streamable HTTP on 127.0.0.1 at the port of --port, an MCP
// session per client, until SIGTERM.
func serveShared(modes map[string]bool, log eventLog, args []string) error {
	port := ""
	for i, a := range args {
		if a == "--port" && i+1 < len(args) {
			port = args[i+1]
		}
	}
	if port == "" {
		return errors.New("shared-host needs --port N")
	}
	f := newServer(modes, log, false, "")
	s := &sessions{values: map[string]string{}, roots: map[string]string{}, cut: map[string]bool{}}
	f.mcp.AddTools(s.tools(f.mcp)...)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		return err
	}
	hosts := os.Getenv(AllowedHostsEnv)
	// With a list of its own the fake checks the Host as @playwright/mcp
	// does, in place of mcp-go's loopback-only check.
	handler := allowedHosts(server.NewStreamableHTTPServer(f.mcp, server.WithDisableLocalhostProtection(hosts != "")), hosts)
	srv := &http.Server{Handler: handler}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		_ = srv.Close()
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// AllowedHostsEnv, in the shared-host mode, is what @playwright/mcp reads
// it from: a comma-separated list of the only Host headers it serves
// (unset: any); others are answered 403 "Access is only allowed at …", as
// @playwright/mcp does.
const AllowedHostsEnv = "PLAYWRIGHT_MCP_ALLOWED_HOSTS"

func allowedHosts(h http.Handler, list string) http.Handler {
	if list == "" {
		return h
	}
	allowed := strings.Split(strings.ToLower(list), ",")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(allowed, strings.ToLower(r.Host)) {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, "Access is only allowed at "+strings.Join(allowed, ", "))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// sessions is what each MCP session remembers, by session id: as
// @playwright/mcp does with a browser context, a session opens its
// context on its first call of a session tool, asking the client for its
// roots then (and only then), and keeps its value in it; ToolDropContext
// loses the context (a browser that died), and the next call opens
// another, empty one.
type sessions struct {
	mu     sync.Mutex
	values map[string]string
	roots  map[string]string // the open contexts' roots
	cut    map[string]bool   // the next save is cut short
}

func (s *sessions) tools(m *server.MCPServer) []server.ServerTool {
	text := func(format string, args ...any) *mcp.CallToolResult {
		return mcp.NewToolResultText(fmt.Sprintf(format, args...))
	}
	id := func(ctx context.Context) string {
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			return cs.SessionID()
		}
		return ""
	}
	askRoot := func(ctx context.Context) (string, error) {
		res, err := m.RequestRoots(ctx, mcp.ListRootsRequest{})
		if err != nil {
			return "", err
		}
		if len(res.Roots) == 0 {
			return "", errors.New("the client lists no roots")
		}
		u, err := url.Parse(res.Roots[0].URI)
		if err != nil || u.Scheme != "file" {
			return "", fmt.Errorf("root %q is not a file URI", res.Roots[0].URI)
		}
		return u.Path, nil
	}
	// root is the session's context's root, opening the context first.
	root := func(ctx context.Context) (string, error) {
		s.mu.Lock()
		r, ok := s.roots[id(ctx)]
		s.mu.Unlock()
		if ok {
			return r, nil
		}
		r, err := askRoot(ctx)
		if err != nil {
			return "", err
		}
		s.mu.Lock()
		s.roots[id(ctx)] = r
		s.mu.Unlock()
		return r, nil
	}
	opened := func(ctx context.Context) *mcp.CallToolResult {
		if _, err := root(ctx); err != nil {
			return mcp.NewToolResultError(err.Error())
		}
		return nil
	}
	file := mcp.WithString("filename", mcp.Required())
	return []server.ServerTool{
		{Tool: mcp.NewTool(ToolWhoAmI, mcp.WithDescription("The session's root.")),
			Handler: func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				r, err := root(ctx)
				if err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				return text("root: %s", r), nil
			}},
		{Tool: mcp.NewTool(ToolRemember, mcp.WithDescription("Keep a value in this session."), mcp.WithString("value", mcp.Required())),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if res := opened(ctx); res != nil {
					return res, nil
				}
				s.mu.Lock()
				s.values[id(ctx)] = req.GetString("value", "")
				s.mu.Unlock()
				return text("kept"), nil
			}},
		{Tool: mcp.NewTool(ToolRecall, mcp.WithDescription("The value this session keeps.")),
			Handler: func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if res := opened(ctx); res != nil {
					return res, nil
				}
				s.mu.Lock()
				v, ok := s.values[id(ctx)]
				s.mu.Unlock()
				if !ok {
					return text("remembered nothing"), nil
				}
				return text("remembered: %s", v), nil
			}},
		{Tool: mcp.NewTool(ToolSaveState, mcp.WithDescription("Save the session's value to a file of its root."), file),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				r, err := root(ctx)
				if err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				s.mu.Lock()
				b, _ := json.Marshal(map[string]string{"value": s.values[id(ctx)]})
				if s.cut[id(ctx)] { // a write cut short that the server did not notice
					delete(s.cut, id(ctx))
					b = b[:len(b)/2]
				}
				s.mu.Unlock()
				path := filepath.Join(r, req.GetString("filename", ""))
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				if err := os.WriteFile(path, b, 0o644); err != nil { // as a server with umask 022 writes
					return mcp.NewToolResultError(err.Error()), nil
				}
				return text("saved"), nil
			}},
		{Tool: mcp.NewTool(ToolRestoreState, mcp.WithDescription("Restore the session's value from a file of its root."), file),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				r, err := root(ctx)
				if err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				b, err := os.ReadFile(filepath.Join(r, req.GetString("filename", "")))
				if err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				var st struct {
					Value string `json:"value"`
				}
				if err := json.Unmarshal(b, &st); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				s.mu.Lock()
				s.values[id(ctx)] = st.Value
				s.mu.Unlock()
				return text("restored"), nil
			}},
		{Tool: mcp.NewTool(ToolCutNextSave, mcp.WithDescription("Cut the session's next save short, as a full disk does.")),
			Handler: func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				s.mu.Lock()
				s.cut[id(ctx)] = true
				s.mu.Unlock()
				return text("the next save is cut"), nil
			}},
		{Tool: mcp.NewTool(ToolDropContext, mcp.WithDescription("Lose the session's context and what it keeps, as a crashed browser does.")),
			Handler: func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				s.mu.Lock()
				delete(s.values, id(ctx))
				delete(s.roots, id(ctx))
				s.mu.Unlock()
				return text("dropped"), nil
			}},
	}
}
