package fakemcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ModeResources declares resources and offers four (two texts, a PNG, a
// binary blob), in pages of two (tools/list's pages too), and the resource template
// fake://users/{id}, whose read answers "user <id>".
const ModeResources = "resources"

// Resources of ModeResources.
const (
	ResourceNotes  = "fake://notes.txt"
	ResourceLogo   = "fake://logo.png"
	ResourceData   = "fake://data.bin"
	ResourceUsers  = "fake://users/{id}"
	ResourceReadme = "fake://readme.md"
	NotesText      = "the notes of the fake"
)

func (f *fake) addResources() {
	text := func(uri, body string) server.ResourceHandlerFunc {
		return func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: body}}, nil
		}
	}
	blob := func(uri, mime string, data []byte) server.ResourceHandlerFunc {
		return func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uri, MIMEType: mime, Blob: base64.StdEncoding.EncodeToString(data)}}, nil
		}
	}
	f.mcp.AddResource(mcp.NewResource(ResourceNotes, "notes", mcp.WithMIMEType("text/plain"),
		mcp.WithResourceDescription("The fake's notes.")), text(ResourceNotes, NotesText))
	f.mcp.AddResource(mcp.NewResource(ResourceLogo, "logo", mcp.WithMIMEType("image/png")),
		blob(ResourceLogo, "image/png", PNG1x1()))
	f.mcp.AddResource(mcp.NewResource(ResourceData, "data", mcp.WithMIMEType("application/octet-stream")),
		blob(ResourceData, "application/octet-stream", []byte{0, 1, 2, 3, 4, 5, 6, 7}))
	f.mcp.AddResource(mcp.NewResource(ResourceReadme, "readme", mcp.WithMIMEType("text/markdown")),
		text(ResourceReadme, "# The fake"))
	f.mcp.AddResourceTemplate(mcp.NewResourceTemplate(ResourceUsers, "user", mcp.WithTemplateDescription("A user by id.")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id, ok := strings.CutPrefix(req.Params.URI, "fake://users/")
			if !ok || id == "" {
				return nil, fmt.Errorf("no such user: %s", req.Params.URI)
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "user " + id}}, nil
		})
}
