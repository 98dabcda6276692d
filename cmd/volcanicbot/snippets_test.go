package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
)

// Snippets of other clients' configurations, as their READMEs give them,
// through `check`.

// Cline's marketplace names a server after its repository: the
// configuration is valid, check discovers it and shows it under that
// name, and says which internal name its tools and files use. Before, the
// whole configuration was refused ("server name must be 1 to 64
// characters from A-Z, …").
func TestCheckTakesAMarketplaceName(t *testing.T) {
	const name = "github.com/upstash/context7-mcp"
	dir := writeSettings(t, map[string][]string{name: {fakemcp.ModeNormal}, "fetch": {fakemcp.ModeNormal}})
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check"}, &out, &errOut, baseEnviron(t, dir))
	got := out.String()
	if !strings.Contains(got, "configuration: ok") {
		t.Fatalf("configuration refused:\n%s\n%s", got, errOut.String())
	}
	for _, want := range []string{"\n" + name + "  ", `server "` + name + `": the server name "` + name + `" is kept for /mcp; tools, files and logs call the server "github.com_upstash_context7-mcp"`} {
		if !strings.Contains(got, want) {
			t.Errorf("check lacks %q:\n%s", want, got)
		}
	}
	// The fake's tools are in both servers: the refusals name the entry
	// as written and suggest a prefix that frees the names.
	if !strings.Contains(got, `set "toolPrefix" for server "`+name+`" (e.g. "context7_")`) {
		t.Errorf("no usable toolPrefix suggestion for the marketplace name:\n%s", got)
	}
	_ = code // the refused tools fail check; that is another test's
}
