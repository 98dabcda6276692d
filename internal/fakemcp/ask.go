package fakemcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ModeAsk adds the tools that ask the client: elicit, elicit_url, sample,
// sample_many (samplemany.go), roots and needs_visit (visit.go). They are written the 2026-07-28 way (an input_required result,
// then the retry with the answers); mcp-go's server turns that into
// server-initiated requests for a client on an older protocol, so one tool
// covers both eras and both transports.
const ModeAsk = "ask"

// ModeRootsOnInit asks the client for its roots as soon as it sends
// notifications/initialized — outside any request, as server-filesystem
// does — and logs an EventRoots with the answer.
const ModeRootsOnInit = "roots-on-init"

// askRootsOnInit sets up ModeRootsOnInit on f's server.
func (f *fake) askRootsOnInit() {
	f.mcp.AddNotificationHandler("notifications/initialized", func(ctx context.Context, _ mcp.JSONRPCNotification) {
		go func() { // the answer comes through the loop that called this
			res, err := f.mcp.RequestRoots(ctx, mcp.ListRootsRequest{})
			ev := Event{Event: EventRoots}
			if err != nil {
				ev.Reason = "error: " + err.Error()
			} else {
				uris := make([]string, len(res.Roots))
				for i, r := range res.Roots {
					uris[i] = r.URI
				}
				ev.Reason = strings.Join(uris, ",")
			}
			f.log.add(ev)
		}()
	})
}

// Tools of ModeAsk.
const (
	// ToolElicit asks a form: {"message": s, "schema": object} (AskSchema
	// when left out) → "accept {…content…}", "decline" or "cancel"; with
	// "quiet": true, "accept (fields: a, b)" — the answers are then only in
	// the log (an EventElicited with the content as Arguments), never in
	// what the model reads.
	ToolElicit = "elicit"
	// ToolElicitURL asks the user to open {"url": s} (elicitationId e-1)
	// → the action; with {"visit": true} the page is one of the fake's
	// visit pages (visit.go), whose GET completes the elicitation.
	ToolElicitURL = "elicit_url"
	// ToolSample asks the client's model: {"prompt": s} → "model <m>: <text>".
	ToolSample = "sample"
	// ToolRoots asks the client for its roots → "roots: <uri>, …".
	ToolRoots = "roots"
)

// AskSchema is elicit's form when the call names none: a string, an
// integer with a default, a boolean and an enum.
const AskSchema = `{"type":"object","properties":{"name":{"type":"string","title":"Your name","minLength":2},` +
	`"age":{"type":"integer","minimum":0,"maximum":150,"default":30},"subscribe":{"type":"boolean","title":"Subscribe?"},` +
	`"color":{"type":"string","enum":["red","green","blue"],"enumNames":["Red","Green","Blue"]}},"required":["name","subscribe"]}`

func (f *fake) askTools() []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcp.NewTool(ToolElicit, mcp.WithDescription("Asks the user to fill in a form."),
				mcp.WithString("message", mcp.Description("The question.")),
				mcp.WithObject("schema", mcp.Description("The form's requestedSchema.")),
				mcp.WithBoolean("quiet", mcp.Description("Say only which fields were answered."))),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if r := server.ElicitationResponse(req.Params.InputResponses, "answer"); r != nil {
					content, _ := json.Marshal(r.Content)
					f.log.add(Event{Event: EventElicited, Tool: ToolElicit, Reason: string(r.Action), Arguments: content})
					if req.GetBool("quiet", false) {
						return mcp.NewToolResultText(quietText(r)), nil
					}
					return mcp.NewToolResultText(elicitText(r)), nil
				}
				schema := json.RawMessage(AskSchema)
				if s, ok := req.GetArguments()["schema"]; ok {
					b, err := json.Marshal(s)
					if err != nil {
						return nil, err
					}
					schema = b
				}
				return server.NewInputRequestBuilder("").Elicit("answer", mcp.ElicitationParams{
					Message: req.GetString("message", "Tell me about yourself"), RequestedSchema: schema,
				}).ToolResult(), nil
			},
		},
		{
			Tool: mcp.NewTool(ToolElicitURL, mcp.WithDescription("Asks the user to open a page."),
				mcp.WithString("url", mcp.Description("The page.")),
				mcp.WithBoolean("visit", mcp.Description("Send the user to the fake's own visit page instead."))),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if r := server.ElicitationResponse(req.Params.InputResponses, "visit"); r != nil {
					return mcp.NewToolResultText(elicitText(r)), nil
				}
				id, u := "e-1", req.GetString("url", "")
				if req.GetBool("visit", false) {
					id = f.newVisitID()
					var err error
					if u, err = f.page(ctx, id); err != nil {
						return nil, err
					}
				}
				return server.NewInputRequestBuilder("").Elicit("visit", mcp.ElicitationParams{
					Mode: mcp.ElicitationModeURL, Message: "Please sign in", ElicitationID: id, URL: u,
				}).ToolResult(), nil
			},
		},
		f.needsVisitTool(),
		f.sampleManyTool(),
		{
			Tool: mcp.NewTool(ToolSample, mcp.WithDescription("Asks the client's model."),
				mcp.WithString("prompt", mcp.Required(), mcp.Description("What to ask."))),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if r := server.SamplingResponse(req.Params.InputResponses, "completion"); r != nil {
					var c struct {
						Text string `json:"text"`
					}
					if b, err := json.Marshal(r.Content); err == nil {
						_ = json.Unmarshal(b, &c)
					}
					text := c.Text
					return mcp.NewToolResultText(fmt.Sprintf("model %s: %s", r.Model, text)), nil
				}
				return server.NewInputRequestBuilder("").Sample("completion", mcp.CreateMessageParams{
					Messages:     []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
					SystemPrompt: "Answer briefly.", MaxTokens: 100,
				}).ToolResult(), nil
			},
		},
		{
			Tool: mcp.NewTool(ToolRoots, mcp.WithDescription("Lists the client's roots.")),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if r := server.RootsResponse(req.Params.InputResponses, "roots"); r != nil {
					uris := make([]string, len(r.Roots))
					for i, root := range r.Roots {
						uris[i] = root.URI
					}
					return mcp.NewToolResultText("roots: " + strings.Join(uris, ", ")), nil
				}
				return server.NewInputRequestBuilder("").Roots("roots").ToolResult(), nil
			},
		},
	}
}

// elicitText is the action and, when accepted, the content as JSON.
func elicitText(r *mcp.ElicitationResult) string {
	if r.Action != mcp.ElicitationResponseActionAccept {
		return string(r.Action)
	}
	b, _ := json.Marshal(r.Content)
	return "accept " + string(b)
}

// quietText is the action and, when accepted, the names of the fields
// answered.
func quietText(r *mcp.ElicitationResult) string {
	if r.Action != mcp.ElicitationResponseActionAccept {
		return string(r.Action)
	}
	var names []string
	if m, ok := r.Content.(map[string]any); ok {
		for k := range m {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return "accept (fields: " + strings.Join(names, ", ") + ")"
}
