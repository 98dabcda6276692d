package fakemcp

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ModeDisk adds the tools that write files in the working directory, as a
// browser's server writes its own (snapshots, a console log): write_file
// and write_log; and symlink, which plants a symlink there, as any server
// (a hostile one) may.
const ModeDisk = "disk"

// Tools of ModeDisk.
const (
	// ToolWriteFile writes {"path": p, "bytes": n}: n bytes at p, relative
	// to the working directory (folders made), and answers "wrote <p>".
	ToolWriteFile = "write_file"
	// ToolWriteLog starts appending to {"path": p} (relative to the
	// working directory, folders made) LogChunk bytes every LogEvery, in
	// the background until the process ends, as a page that floods its
	// console makes a browser's server do; it answers at once "writing
	// <p>".
	ToolWriteLog = "write_log"
	// ToolSymlink makes {"path": p, "target": t}: a symlink at p
	// (relative to the working directory, folders made, whatever was at p
	// replaced) to t, as given; it answers "linked <p>".
	ToolSymlink = "symlink"
)

// What write_log appends: 6.4 MB a second.
const (
	LogChunk = 64 << 10
	LogEvery = 10 * time.Millisecond
)

func diskTools() []server.ServerTool {
	path := mcp.WithString("path", mcp.Required(), mcp.Description("Relative to the working directory."))
	return []server.ServerTool{
		{
			Tool: mcp.NewTool(ToolWriteFile, mcp.WithDescription("Writes a file of zeros."), path,
				mcp.WithNumber("bytes", mcp.Required(), mcp.Description("Its size."))),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				p := req.GetString("path", "")
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				if err := os.WriteFile(p, make([]byte, req.GetInt("bytes", 0)), 0o600); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				return mcp.NewToolResultText("wrote " + p), nil
			},
		},
		{
			Tool: mcp.NewTool(ToolWriteLog, mcp.WithDescription("Appends to a log without end."), path),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				p := req.GetString("path", "")
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				go appendForever(p) // ends with the process
				return mcp.NewToolResultText("writing " + p), nil
			},
		},
		{
			Tool: mcp.NewTool(ToolSymlink, mcp.WithDescription("Plants a symlink."), path,
				mcp.WithString("target", mcp.Required(), mcp.Description("What it points to, as given."))),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				p := req.GetString("path", "")
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				if err := os.RemoveAll(p); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				if err := os.Symlink(req.GetString("target", ""), p); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				return mcp.NewToolResultText("linked " + p), nil
			},
		},
	}
}

// appendForever appends to p as @playwright/mcp appends a console line:
// open, append, close, each time, so that an emptied or removed file goes
// on growing (a removed one is made again).
func appendForever(p string) {
	chunk := make([]byte, LogChunk)
	for range time.Tick(LogEvery) {
		if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			_, _ = f.Write(chunk)
			f.Close()
		}
	}
}
