package fakemcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Tool names. The normal set is always offered by the mcp-go server.
const (
	ToolEcho           = "echo"            // {"text": string} → the text; the only tool annotated read-only
	ToolImage          = "image"           // → a 1×1 PNG (PNG1x1)
	ToolFail           = "fail"            // → isError with text FailText
	ToolSlow           = "slow"            // blocks until cancelled or 60 s
	ToolWeird          = "weird.name/x"    // → its own name
	ToolWeirdSanitised = "weird_name_x"    // → its own name; collides with ToolWeird when sanitised
	ToolNoSchema       = "no_schema"       // no inputSchema in tools/list; → "no schema"
	ToolRichSchema     = "rich_schema"     // inputSchema RichSchema; → its arguments as JSON text
	ToolStructured     = "structured"      // → "content": [] and structuredContent StructuredJSON
	ToolLinks          = "links"           // → resource_link, text resource, blob resource, audio
	ToolBigImage       = "big_image"       // → a PNG of more than 5 MB (BigImageBytes)
	ToolLongText       = "long_text"       // → LongTextLines lines "line 1" … "line 3000"
	ToolSleep          = "sleep"           // {"ms": integer} → "slept <ms> ms" after ms
	ToolJSONRPCError   = "jsonrpc_error"   // → a JSON-RPC error (-32603, JSONRPCErrorMessage)
	ToolUnknownContent = "unknown_content" // → text, then a content element of type "hologram"

	// LongToolName is a tool name of 64 characters, longer than the 48 allowed.
	LongToolName = "a_tool_whose_name_is_far_too_long_for_the_limit_of_48_characters"

	ToolEnv  = "env"  // mode env: → os.Environ sorted, one per line
	ToolSend = "send" // mode builtin-clash: {"path", "caption"} → "fake send <path>"

	// With --output-dir in argv:
	ToolBrowserNavigate   = "browser_navigate"        // {"url"} → "navigated to <url>"
	ToolBrowserScreenshot = "browser_take_screenshot" // {"filename"} → writes PNG1x1, returns text + image
)

// Results of the normal tools.
const (
	FailText            = "it failed"
	JSONRPCErrorMessage = "fake jsonrpc error"
	LongTextLines       = 3000
	// StructuredJSON is the structured tool's structuredContent, byte for byte.
	StructuredJSON = `{"city":"Reykjavik","temperature":-2.5,"unit":"celsius","tags":["windy","dark"],"station":{"id":42,"active":true}}`
	// RichSchema is rich_schema's inputSchema, byte for byte as sent (compact,
	// keys deliberately not in sorted order).
	RichSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","description":"Search with every keyword a client might drop.","properties":{"query":{"type":"string","description":"What to look for.","minLength":1},"target":{"description":"A point or a named place.","anyOf":[{"$ref":"#/$defs/point"},{"type":"string","enum":["origin","center"]}]},"options":{"type":"object","properties":{"depth":{"type":"integer","minimum":0,"maximum":5,"default":2},"filters":{"type":"array","items":{"type":"object","properties":{"field":{"type":"string"},"op":{"type":"string","enum":["eq","ne","lt","gt"]},"value":{}},"required":["field","op"],"additionalProperties":false}}},"additionalProperties":false}},"required":["query"],"additionalProperties":false,"$defs":{"point":{"type":"object","description":"A point in the plane.","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}}}`
)

// ToolNames returns the names of the tools the fake offers in the given
// modes, sorted (the tools/list order). Pass "--output-dir" as a mode to
// include the browser tools.
func ToolNames(modes ...string) []string {
	set := parseModes(strings.Join(modes, ","))
	if set[ModeRawEcho] {
		return []string{ToolEcho}
	}
	browser := set["--output-dir"]
	delete(set, "--output-dir")
	f := &fake{modes: set, browser: browser}
	var names []string
	for _, t := range f.tools() {
		names = append(names, t.Tool.Name)
	}
	slices.Sort(names)
	return names
}

func (f *fake) tools() []server.ServerTool {
	if f.modes[ModeManyTools] {
		return manyServerTools()
	}
	text := func(s string) server.ToolHandlerFunc {
		return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(s), nil
		}
	}
	noArgs := func(name, desc string, h server.ToolHandlerFunc) server.ServerTool {
		return server.ServerTool{Tool: mcp.NewTool(name, mcp.WithDescription(desc)), Handler: h}
	}
	tools := []server.ServerTool{
		{
			Tool: mcp.NewTool(ToolEcho,
				mcp.WithDescription("Echoes the text back."),
				mcp.WithReadOnlyHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
				mcp.WithString("text", mcp.Required(), mcp.Description("The text to echo."))),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(req.GetString("text", "")), nil
			},
		},
		noArgs(ToolImage, "Returns a 1x1 PNG image.", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewImageContent(base64.StdEncoding.EncodeToString(PNG1x1()), "image/png"),
			}}, nil
		}),
		noArgs(ToolFail, "Always fails with an error result.", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError(FailText), nil
		}),
		noArgs(ToolSlow, "Blocks until cancelled (or 60 seconds).", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				f.ended(req)
				return nil, ctx.Err()
			case <-time.After(60 * time.Second):
				return mcp.NewToolResultText("slow finished"), nil
			}
		}),
		noArgs(ToolWeird, "A tool whose name needs sanitising.", text(ToolWeird)),
		noArgs(ToolWeirdSanitised, "A tool whose name collides with weird.name/x once that is sanitised.", text(ToolWeirdSanitised)),
		noArgs(LongToolName, "A tool whose name is longer than 48 characters.", text(LongToolName)),
		noArgs(ToolNoSchema, "A tool with no inputSchema at all.", text("no schema")),
		{
			Tool: mcp.NewToolWithRawSchema(ToolRichSchema, "Takes a schema with anyOf, $defs, $schema and nested objects.",
				json.RawMessage(RichSchema)),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args := []byte(req.Params.RawArguments)
				if len(args) == 0 {
					var err error
					if args, err = json.Marshal(req.Params.Arguments); err != nil {
						return nil, err
					}
				}
				return mcp.NewToolResultText(string(args)), nil
			},
		},
		noArgs(ToolStructured, "Returns only structuredContent.", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, RawStructuredContent: json.RawMessage(StructuredJSON)}, nil
		}),
		noArgs(ToolLinks, "Returns a resource link, embedded text and blob resources, and audio.", links),
		noArgs(ToolBigImage, "Returns a PNG larger than 5 MB.", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			bigImageBase64() // made now, spliced in by the output writer
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewImageContent(bigImagePlaceholder, "image/png"),
			}}, nil
		}),
		noArgs(ToolLongText, "Returns 3000 lines of text.", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var b strings.Builder
			for i := 1; i <= LongTextLines; i++ {
				fmt.Fprintf(&b, "line %d\n", i)
			}
			return mcp.NewToolResultText(b.String()), nil
		}),
		{
			Tool: mcp.NewTool(ToolSleep,
				mcp.WithDescription("Sleeps ms milliseconds, then answers."),
				mcp.WithInteger("ms", mcp.Required(), mcp.Description("How long to sleep, in milliseconds."))),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ms := req.GetInt("ms", 0)
				t := time.NewTimer(time.Duration(ms) * time.Millisecond)
				defer t.Stop()
				select {
				case <-ctx.Done():
					f.ended(req)
					return nil, ctx.Err()
				case <-t.C:
					return mcp.NewToolResultText(fmt.Sprintf("slept %d ms", ms)), nil
				}
			},
		},
		noArgs(ToolJSONRPCError, "Answers with a JSON-RPC error instead of a result.", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New(JSONRPCErrorMessage)
		}),
		noArgs(ToolUnknownContent, "Returns a content element of an unknown type.", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent("a hologram follows"),
				hologram{},
			}}, nil
		}),
	}
	if f.modes[ModeEnv] {
		tools = append(tools, noArgs(ToolEnv, "Returns the server's environment, sorted, one variable per line.",
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(strings.Join(sortedEnviron(), "\n")), nil
			}))
	}
	if f.modes[ModeBuiltinClash] {
		tools = append(tools, server.ServerTool{
			Tool: mcp.NewTool(ToolSend,
				mcp.WithDescription("A server tool that clashes with the built-in send."),
				mcp.WithString("path", mcp.Required(), mcp.Description("A file.")),
				mcp.WithString("caption", mcp.Description("A caption."))),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("fake send " + req.GetString("path", "")), nil
			},
		})
	}
	if f.modes[ModeChanging] {
		tools = append(tools, f.changingTools()...)
	}
	if f.modes[ModeAsk] {
		tools = append(tools, f.askTools()...)
	}
	if f.modes[ModeDisk] {
		tools = append(tools, diskTools()...)
	}
	if f.browser {
		tools = append(tools, f.browserTools()...)
	}
	return tools
}

func (f *fake) browserTools() []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcp.NewTool(ToolBrowserNavigate,
				mcp.WithDescription("Navigate to a URL"),
				mcp.WithString("url", mcp.Required(), mcp.Description("The URL to navigate to"))),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("navigated to " + req.GetString("url", "")), nil
			},
		},
		{
			Tool: mcp.NewTool(ToolBrowserScreenshot,
				mcp.WithDescription("Take a screenshot of the current page."),
				mcp.WithString("filename", mcp.Description("File name to save the screenshot to, relative to the working directory. Defaults to page-{timestamp}.png in the output directory."))),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				name := req.GetString("filename", "")
				if name == "" {
					name = filepath.Join(f.outputDir, fmt.Sprintf("page-%d.png", time.Now().UnixNano()))
				}
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				if err := os.WriteFile(name, PNG1x1(), 0o644); err != nil {
					return mcp.NewToolResultError(err.Error()), nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{
					mcp.NewTextContent("Took the screenshot and saved it as " + name),
					mcp.NewImageContent(base64.StdEncoding.EncodeToString(PNG1x1()), "image/png"),
				}}, nil
			},
		},
	}
}

func links(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewResourceLink("file:///fake/readme.md", "readme", "The fake's readme.", "text/markdown"),
		mcp.NewEmbeddedResource(mcp.TextResourceContents{
			URI: "file:///fake/notes.txt", MIMEType: "text/plain", Text: "embedded notes",
		}),
		mcp.NewEmbeddedResource(mcp.BlobResourceContents{
			URI: "file:///fake/data.bin", MIMEType: "application/octet-stream",
			Blob: base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 3, 4, 5, 6, 7}),
		}),
		mcp.NewAudioContent(base64.StdEncoding.EncodeToString(WAV()), "audio/wav"),
	}}, nil
}

// hologram is a content element of a type no MCP revision defines.
// mcp.Content can't be implemented outside mcp-go (its method is
// unexported), but embedding a TextContent promotes it, and MarshalJSON
// decides what goes on the wire.
type hologram struct{ mcp.TextContent }

func (hologram) MarshalJSON() ([]byte, error) {
	return []byte(`{"type":"hologram","data":"AAEC","projection":"3d"}`), nil
}
