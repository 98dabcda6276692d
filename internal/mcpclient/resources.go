package mcpclient

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// The resource tools: when a server offers resources (its capabilities
// say so), the model gets this pair, over every such server, beside the
// servers' own tools (and deferred like them under tool search).
const (
	ListResourcesTool = "list_mcp_resources"
	ReadResourceTool  = "read_mcp_resource"
	// ResourcesGroup is the resource tools' Group (their Server is "":
	// they run on every server that offers resources). No configured
	// server can have the name (it has a space).
	ResourcesGroup = "MCP resources"
)

// maxResourceDescription caps one resource's or template's description
// in a listing, in runes.
const maxResourceDescription = 300

// resourceTools is the pair of tools for servers, the servers that offer
// resources, in catalogue order.
func resourceTools(servers []string) []Tool {
	enum, _ := json.Marshal(servers)
	list := fmt.Sprintf(`{"type":"object","properties":{`+
		`"server":{"type":"string","enum":%s,"description":"The MCP server whose resources to list; omit it for the first page of every server's"},`+
		`"cursor":{"type":"string","description":"The cursor a listing gave for the server's next page of resources"},`+
		`"templates_cursor":{"type":"string","description":"The cursor a listing gave for the server's next page of resource templates"}},`+
		`"additionalProperties":false}`, enum)
	read := fmt.Sprintf(`{"type":"object","properties":{`+
		`"server":{"type":"string","enum":%s,"description":"The MCP server that offers the resource"},`+
		`"uri":{"type":"string","description":"The resource's URI: one list_mcp_resources gave, or a resource template's with its variables filled in"}},`+
		`"required":["server","uri"],"additionalProperties":false}`, enum)
	return []Tool{
		{kind: resourceKind{}, MCPName: ListResourcesTool, Name: ListResourcesTool, InputSchema: json.RawMessage(list),
			Description: "List the resources (files, documents, data) that MCP servers offer, and their resource templates " +
				"(URI patterns to fill in). A page that has more ends with the cursor of the next. Read one with " + ReadResourceTool + ".",
			Annotations: chat.Annotations{ReadOnlyHint: new(true)}},
		{kind: resourceKind{}, MCPName: ReadResourceTool, Name: ReadResourceTool, InputSchema: json.RawMessage(read),
			Description: "Read a resource of an MCP server by its URI (from " + ListResourcesTool + ", or a resource template with its " +
				"variables filled in): its text, or its image.",
			Annotations: chat.Annotations{ReadOnlyHint: new(true)}},
	}
}

// resourceServers returns the names of the catalogues' servers that offer
// resources.
func resourceServers(catalogs []Catalog) []string {
	var out []string
	for _, c := range catalogs {
		if c.ServerInfo.Resources {
			out = append(out, c.Server)
		}
	}
	return out
}

// resources runs a resource tool for the session.
func (s *Session) resources(ctx context.Context, tool Tool, args json.RawMessage) (Result, error) {
	var a struct {
		Server          string `json:"server"`
		Cursor          string `json:"cursor"`
		TemplatesCursor string `json:"templates_cursor"`
		URI             string `json:"uri"`
	}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &a); err != nil {
			return ErrorResult(ResourcesGroup, tool.Name, fmt.Sprintf("%s: invalid arguments: %v", tool.Name, err)), nil
		}
	}
	var servers []*connection
	if a.Server != "" {
		conn, ok := s.conns[a.Server]
		if !ok || !conn.offersResources() {
			return ErrorResult(ResourcesGroup, tool.Name, fmt.Sprintf("%s: no MCP server named %q offers resources; those that do: %s",
				tool.Name, a.Server, strings.Join(s.resourceServers(), ", "))), nil
		}
		servers = append(servers, conn)
	} else {
		for _, name := range s.resourceServers() {
			servers = append(servers, s.conns[name])
		}
	}
	switch tool.MCPName {
	case ListResourcesTool:
		if len(servers) == 0 {
			return ErrorResult(ResourcesGroup, tool.Name, tool.Name+": no MCP server offers resources now"), nil
		}
		if a.Server == "" && (a.Cursor != "" || a.TemplatesCursor != "") {
			return ErrorResult(ResourcesGroup, tool.Name, tool.Name+": a cursor belongs to one server: give its server too"), nil
		}
		var b strings.Builder
		for i, conn := range servers {
			if i > 0 {
				b.WriteByte('\n')
			}
			if err := conn.listResources(ctx, &b, a.Cursor, a.TemplatesCursor); err != nil {
				return Result{}, err
			}
		}
		res := Result{Content: []chat.Part{{Kind: chat.TextPart, Text: b.String()}}, Server: ResourcesGroup, Tool: tool.Name}
		servers[0].bound(&res, tool)
		return res, nil
	case ReadResourceTool:
		if a.Server == "" || a.URI == "" {
			return ErrorResult(ResourcesGroup, tool.Name, tool.Name+": give the server and the resource's uri"), nil
		}
		return servers[0].readResource(ctx, tool, a.URI)
	}
	return ErrorResult(ResourcesGroup, tool.Name, fmt.Sprintf("unknown resource tool %q", tool.Name)), nil
}

// resourceServers names the session's servers that offer resources, by
// their catalogues, in configuration order.
func (s *Session) resourceServers() []string {
	var out []string
	for _, cfg := range s.client.servers {
		if conn, ok := s.conns[cfg.Name]; ok && conn.offersResources() {
			out = append(out, cfg.Name)
		}
	}
	return out
}

// offersResources reports whether the server's catalogue says it offers
// resources.
func (c *connection) offersResources() bool {
	cat, ok := c.deps.cache.peek(c.cfg)
	return ok && c.cfg.Enabled && cat.ServerInfo.Resources
}

// request sends one request other than a tool call to the chat's process
// of the server (started if need be), under the call timeout. Only the
// caller's own cancellation (and ErrClosed) is returned as ctxErr; the
// server's failures are err.
func (c *connection) request(ctx context.Context, method string, params any) (raw json.RawMessage, err, ctxErr error) {
	srv, err := c.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return nil, nil, err
		}
		return nil, err, nil
	}
	defer c.release(srv)
	callCtx := ctx
	if c.cfg.CallTimeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, c.cfg.CallTimeout)
		defer cancel()
	}
	raw, err = srv.rpc.request(callCtx, method, params)
	if err != nil && ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if err != nil && callCtx.Err() != nil {
		err = fmt.Errorf("no answer within %s", fmtSeconds(c.cfg.CallTimeout))
	}
	return raw, err, nil
}

// listResources writes one page of the server's resources and one of its
// resource templates to b, with the cursors of the next pages.
func (c *connection) listResources(ctx context.Context, b *strings.Builder, cursor, templatesCursor string) error {
	if err := c.listResourcePage(ctx, b, cursor); err != nil {
		return err
	}
	if cursor != "" && templatesCursor == "" {
		return nil // a later page of resources: the templates were on the first
	}
	return c.listTemplatePage(ctx, b, templatesCursor)
}

// listResourcePage writes the page of the server's resources at cursor
// to b, with the cursor of the next page; a failure of the server is
// written too. Only the caller's cancellation is returned.
func (c *connection) listResourcePage(ctx context.Context, b *strings.Builder, cursor string) error {
	name := c.cfg.Name
	var page struct {
		Resources []struct {
			URI         string `json:"uri"`
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			MIMEType    string `json:"mimeType"`
			Size        *int64 `json:"size"`
		} `json:"resources"`
		NextCursor string `json:"nextCursor"`
	}
	raw, err, ctxErr := c.request(ctx, string(mcp.MethodResourcesList), cursorParams(cursor))
	if ctxErr != nil {
		return ctxErr
	}
	if err == nil {
		err = json.Unmarshal(raw, &page)
	}
	switch {
	case err != nil:
		fmt.Fprintf(b, "%s: listing its resources failed: %s\n", name, c.redact(err.Error()))
	case len(page.Resources) == 0 && cursor == "":
		fmt.Fprintf(b, "%s offers no resources.\n", name)
	default:
		fmt.Fprintf(b, "Resources of %s:\n", name)
		for _, r := range page.Resources {
			fmt.Fprintf(b, "- %s", r.URI)
			if label := cmp.Or(r.Title, r.Name); label != "" && label != r.URI {
				fmt.Fprintf(b, " — %s", label)
			}
			var about []string
			if r.MIMEType != "" {
				about = append(about, r.MIMEType)
			}
			if r.Size != nil {
				about = append(about, fmt.Sprintf("%d bytes", *r.Size))
			}
			if len(about) > 0 {
				fmt.Fprintf(b, " (%s)", strings.Join(about, ", "))
			}
			if d := oneLine(r.Description); d != "" {
				fmt.Fprintf(b, ": %s", d)
			}
			b.WriteByte('\n')
		}
		if page.NextCursor != "" && page.NextCursor != cursor {
			fmt.Fprintf(b, "More resources: %s with {\"server\":%q,\"cursor\":%q}\n", ListResourcesTool, name, page.NextCursor)
		}
	}
	return nil
}

// listTemplatePage writes the page of the server's resource templates at
// templatesCursor to b, with the cursor of the next page; a failure of
// the server is written too, but for a server that does not answer the
// method (it has none). Only the caller's cancellation is returned.
func (c *connection) listTemplatePage(ctx context.Context, b *strings.Builder, templatesCursor string) error {
	name := c.cfg.Name
	var tpage struct {
		ResourceTemplates []struct {
			URITemplate string `json:"uriTemplate"`
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			MIMEType    string `json:"mimeType"`
		} `json:"resourceTemplates"`
		NextCursor string `json:"nextCursor"`
	}
	raw, err, ctxErr := c.request(ctx, string(mcp.MethodResourcesTemplatesList), cursorParams(templatesCursor))
	if ctxErr != nil {
		return ctxErr
	}
	if err == nil {
		err = json.Unmarshal(raw, &tpage)
	}
	var rpcErr *RPCError
	switch {
	case errors.As(err, &rpcErr) && rpcErr.Code == mcp.METHOD_NOT_FOUND:
		// A server without templates need not answer the method.
	case err != nil:
		fmt.Fprintf(b, "%s: listing its resource templates failed: %s\n", name, c.redact(err.Error()))
	case len(tpage.ResourceTemplates) == 0:
	default:
		fmt.Fprintf(b, "Resource templates of %s (fill in the {variables} and read the URI):\n", name)
		for _, t := range tpage.ResourceTemplates {
			fmt.Fprintf(b, "- %s", t.URITemplate)
			if label := cmp.Or(t.Title, t.Name); label != "" {
				fmt.Fprintf(b, " — %s", label)
			}
			if t.MIMEType != "" {
				fmt.Fprintf(b, " (%s)", t.MIMEType)
			}
			if d := oneLine(t.Description); d != "" {
				fmt.Fprintf(b, ": %s", d)
			}
			b.WriteByte('\n')
		}
		if tpage.NextCursor != "" && tpage.NextCursor != templatesCursor {
			fmt.Fprintf(b, "More resource templates: %s with {\"server\":%q,\"templates_cursor\":%q}\n", ListResourcesTool, name, tpage.NextCursor)
		}
	}
	return nil
}

// readResource reads uri and maps its contents as a tool result's are: a
// text as text, an image blob as an image, another blob as a note.
func (c *connection) readResource(ctx context.Context, tool Tool, uri string) (Result, error) {
	raw, err, ctxErr := c.request(ctx, string(mcp.MethodResourcesRead), struct {
		URI string `json:"uri"`
	}{uri})
	if ctxErr != nil {
		return Result{}, ctxErr
	}
	var res struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	if err != nil {
		return ErrorResult(c.cfg.Name, tool.Name, c.redact(fmt.Sprintf("%s %s: %v", tool.Name, uri, err))), nil
	}
	content := make([]any, 0, len(res.Contents))
	for _, item := range res.Contents {
		var r resourceWire
		if json.Unmarshal(item, &r) != nil {
			content = append(content, map[string]string{"type": "text", "text": "[resource omitted: not an object]"})
			continue
		}
		if r.Text == nil && len(r.Blob) > 0 && strings.HasPrefix(r.MIMEType, "image/") {
			content = append(content, map[string]any{"type": "image", "data": r.Blob, "mimeType": r.MIMEType})
			continue
		}
		content = append(content, map[string]any{"type": "resource", "resource": item})
	}
	if len(content) == 0 {
		content = append(content, map[string]string{"type": "text", "text": "Resource " + uri + ": no contents"})
	}
	call, err := json.Marshal(map[string]any{"content": content})
	if err != nil {
		return ErrorResult(c.cfg.Name, tool.Name, fmt.Sprintf("%s: %v", tool.Name, err)), nil
	}
	out, err := mapValidResult(ResourcesGroup, tool.Name, call)
	if err != nil {
		return ErrorResult(c.cfg.Name, tool.Name, fmt.Sprintf("%s: invalid result: %v", tool.Name, err)), nil
	}
	c.bound(&out, tool)
	return out, nil
}

func cursorParams(cursor string) any {
	if cursor == "" {
		return nil
	}
	return struct {
		Cursor string `json:"cursor"`
	}{cursor}
}

// oneLine is s on one line, capped at maxResourceDescription runes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxResourceDescription {
		return s
	}
	r := []rune(s)
	return string(r[:maxResourceDescription]) + "…"
}
