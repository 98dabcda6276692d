package fakemcp

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ModeChanging declares tools.listChanged and adds the tools that change
// the list (each change sends notifications/tools/list_changed), and logs
// an EventList per tools/list. Over stdio a changing tool answers once its
// notifications are written: the client reads them before the result. On
// protocol 2026-07-28 they go only on a subscriptions/listen stream that
// asked for them, on both transports (see listen.go); ToolEndListens ends
// those streams from the server's side (stdio).
const ModeChanging = "changing"

// Tools of ModeChanging.
const (
	// ToolAddTool adds {"name": s}, a tool that answers "I am <s>".
	ToolAddTool = "add_tool"
	// ToolRemoveTool removes the tool {"name": s}.
	ToolRemoveTool = "remove_tool"
	// ToolFlood sends {"n": k} notifications/tools/list_changed at once
	// (at most 100: mcp-go's queue drops more).
	ToolFlood = "flood"
)

// EventList is logged per tools/list in changing mode.
const EventList = "list"

func (f *fake) changingTools() []server.ServerTool {
	name := mcp.WithString("name", mcp.Required(), mcp.Description("The tool's name."))
	return []server.ServerTool{
		f.endListensTool(),
		{
			Tool: mcp.NewTool(ToolAddTool, mcp.WithDescription("Adds a tool."), name),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				n := req.GetString("name", "")
				f.changing(ctx, 1, func() {
					f.mcp.AddTool(mcp.NewTool(n, mcp.WithDescription("A tool added at run time.")),
						func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
							return mcp.NewToolResultText("I am " + n), nil
						})
				})
				return mcp.NewToolResultText("added " + n), nil
			},
		},
		{
			Tool: mcp.NewTool(ToolRemoveTool, mcp.WithDescription("Removes a tool."), name),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				n := req.GetString("name", "")
				f.changing(ctx, 1, func() { f.mcp.DeleteTools(n) })
				return mcp.NewToolResultText("removed " + n), nil
			},
		},
		{
			Tool: mcp.NewTool(ToolFlood, mcp.WithDescription("Sends many list_changed notifications."),
				mcp.WithInteger("n", mcp.Required(), mcp.Description("How many."))),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				k := min(req.GetInt("n", 0), 100)
				f.changing(ctx, k, func() {
					for range k {
						f.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationToolsListChanged), nil)
					}
				})
				return mcp.NewToolResultText("flooded"), nil
			},
		},
	}
}

// changing runs change, which sends k notifications/tools/list_changed,
// and over stdio waits (until ctx ends) for them to be written.
func (f *fake) changing(ctx context.Context, k int, change func()) {
	if f.changes == nil {
		change()
		return
	}
	want := f.changes.count() + k
	change()
	f.changes.wait(ctx, want)
}
