package mcpclient

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// A server that offers resources gets the resource tools: listing pages
// through the resources and shows the templates, reading maps a text, an
// image and another blob as tool results are mapped, a template filled in
// reads too. A server without resources adds no tools.
func TestResources(t *testing.T) {
	res, _ := fakeServer(t, "docs", fakemcp.ModeResources)
	plain, _ := fakeServer(t, "plain")
	plain.ToolPrefix = "p_"
	h := newHarness(t, nil, res, plain)
	ctx := t.Context()
	tools, refusals := h.client.Tools(ctx)
	if len(refusals) != 0 {
		t.Errorf("refusals %v", refusals)
	}
	var list, read Tool
	for _, tl := range tools {
		switch tl.Name {
		case ListResourcesTool:
			list = tl
		case ReadResourceTool:
			read = tl
		}
	}
	if list.Group() != ResourcesGroup || read.Group() != ResourcesGroup || list.Server != "" || read.Server != "" {
		t.Fatalf("the resource tools are missing: %+v %+v", list, read)
	}
	if !strings.Contains(string(read.InputSchema), `"enum":["docs"]`) {
		t.Errorf("read's schema names the wrong servers: %s", read.InputSchema)
	}
	s := h.session("")
	if r := detailOf(t, s, "docs").Resources; r == nil || r.List != ListResourcesTool || r.Read != ReadResourceTool {
		t.Errorf("/mcp docs does not say it offers resources: %+v", r)
	}
	if r := detailOf(t, s, "plain").Resources; r != nil {
		t.Errorf("/mcp plain offers resources: %+v", r)
	}

	first := h.call(s, list, `{}`)
	text := first.Text()
	if first.IsError || !strings.Contains(text, "Resources of docs:") || !strings.Contains(text, fakemcp.ResourceUsers+" — user: A user by id.") ||
		strings.Contains(text, "plain") {
		t.Fatalf("the first listing:\n%s", text)
	}
	all := text
	cursorRe := regexp.MustCompile(`\{"server":"docs","cursor":"[^"]*"\}`)
	uris := regexp.MustCompile(`(?m)^- (fake://\S+)`)
	var seen []string
	for page := 0; ; page++ {
		for _, m := range uris.FindAllStringSubmatch(text, -1) {
			if m[1] != fakemcp.ResourceUsers {
				seen = append(seen, m[1])
			}
		}
		next := cursorRe.FindString(text)
		if next == "" {
			break
		}
		if page > 5 {
			t.Fatalf("no end to the pages:\n%s", text)
		}
		r := h.call(s, list, next)
		text = r.Text()
		all += text
		if r.IsError || strings.Contains(text, "Resource templates") {
			t.Fatalf("page %d (%s): %s", page+2, next, text)
		}
	}
	slices.Sort(seen)
	want := []string{fakemcp.ResourceData, fakemcp.ResourceLogo, fakemcp.ResourceNotes, fakemcp.ResourceReadme}
	if !slices.Equal(seen, want) || !strings.Contains(all, fakemcp.ResourceNotes+" — notes (text/plain): The fake's notes.") {
		t.Errorf("listed %v over the pages, want %v:\n%s", seen, want, all)
	}

	for _, tt := range []struct {
		uri, want string
		image     bool
		isError   bool
	}{
		{uri: fakemcp.ResourceNotes, want: "Resource " + fakemcp.ResourceNotes + ":\n" + fakemcp.NotesText},
		{uri: fakemcp.ResourceData, want: "[resource " + fakemcp.ResourceData + ": application/octet-stream, 8 bytes omitted]"},
		{uri: "fake://users/7", want: "Resource fake://users/7:\nuser 7"},
		{uri: fakemcp.ResourceLogo, image: true},
		{uri: "fake://nothing", isError: true},
	} {
		args, _ := json.Marshal(map[string]string{"server": "docs", "uri": tt.uri})
		r := h.call(s, read, string(args))
		switch {
		case tt.isError:
			if !r.IsError || !strings.Contains(r.Text(), "fake://nothing") {
				t.Errorf("%s: %q (error %v), want an error naming it", tt.uri, r.Text(), r.IsError)
			}
		case tt.image:
			if r.IsError || len(r.Content) != 1 || r.Content[0].Kind != chat.ImagePart || !bytes.Equal(r.Content[0].Data, fakemcp.PNG1x1()) {
				t.Errorf("%s: %+v, want the PNG", tt.uri, r)
			}
		default:
			if r.IsError || r.Text() != tt.want {
				t.Errorf("%s: %q (error %v), want %q", tt.uri, r.Text(), r.IsError, tt.want)
			}
		}
	}

	for _, args := range []string{`{"server":"plain","uri":"x"}`, `{"server":"nope"}`} {
		if r := h.call(s, list, args); !r.IsError || !strings.Contains(r.Text(), "offers resources; those that do: docs") {
			t.Errorf("%s: %q, want the servers that offer resources", args, r.Text())
		}
	}
	if r := h.call(s, read, `{"server":"docs"}`); !r.IsError {
		t.Errorf("read without a uri: %q", r.Text())
	}
}

// No server with resources: no resource tools, and a server's own tool of
// the name is kept; with one, such a tool is refused like a built-in's.
func TestResourceToolNames(t *testing.T) {
	own := Tool{Server: "a", MCPName: ListResourcesTool, Name: ListResourcesTool}
	tools, refused := ResolveTools([]Catalog{{Server: "a", Tools: []Tool{own}}}, nil, nil)
	if len(tools) != 1 || tools[0].Server != "a" || len(refused) != 0 {
		t.Errorf("without resources: %v %v", tools, refused)
	}
	tools, refused = ResolveTools([]Catalog{{Server: "a", Tools: []Tool{own}}, {Server: "b", ServerInfo: ServerInfo{Resources: true}}}, nil, nil)
	if len(tools) != 2 || tools[0].Group() != ResourcesGroup || len(refused) != 1 || refused[0].Reason != RefusedBuiltin {
		t.Errorf("with resources: %v %v", tools, refused)
	}
}
