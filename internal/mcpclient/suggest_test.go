package mcpclient

import (
	"testing"
)

// The toolPrefix a refusal suggests resolves the clash it reports: it is
// the whole server name, not one cut to 16 characters ("desktop-commande_"),
// short for a marketplace name, different from every other server's name,
// natural prefix and suggestion, and with it the refused tools' names are
// free.
func TestSuggestedToolPrefix(t *testing.T) {
	tests := []struct {
		name string
		cats []Catalog
		want map[string]string // server → the prefix suggested for it
	}{
		{"the whole name", []Catalog{
			catalogOf("filesystem", "", "read_file"),
			catalogOf("desktop-commander", "", "read_file"),
		}, map[string]string{"desktop-commander": "desktop-commander_"}},
		{"not another server's natural prefix", []Catalog{
			catalogOf("filesystem", "", "read_file", "desktop-commande_x"),
			catalogOf("desktop-commande", "", "x"),
			catalogOf("desktop-commander-that-is-long", "", "read_file"),
		}, map[string]string{"desktop-commander-that-is-long": "desktop-commander-that-is-long_"}},
		{"not another server's name", []Catalog{
			catalogOf("a", "", "x"),
			catalogOf("b", "", "x"),
			catalogOf("b_", "", "y"),
		}, map[string]string{"b": "b2_"}},
		{"two servers, two suggestions", []Catalog{
			catalogOf("filesystem", "", "read_file"),
			catalogOf("desktop-commander-one-of-two", "", "read_file"),
			catalogOf("desktop-commander-one-of-twoo", "", "read_file"),
		}, map[string]string{"desktop-commander-one-of-two": "desktop-commander-one-of-two_", "desktop-commander-one-of-twoo": "desktop-commander-one-of-twoo_"}},
		{"the names it gives are free", []Catalog{
			catalogOf("a", "", "x", "b_x"),
			catalogOf("b", "", "x"),
		}, map[string]string{"b": "b2_"}},
		{"a marketplace name", []Catalog{
			catalogOf("filesystem", "", "search"),
			catalogOf("github.com_upstash_context7-mcp", "github.com/upstash/context7-mcp", "search"),
		}, map[string]string{"github.com_upstash_context7-mcp": "context7_"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, refused := ResolveTools(tt.cats, nil, nil)
			got := map[string]string{}
			for _, r := range refused {
				got[r.Server] = r.Prefix
			}
			for server, want := range tt.want {
				if got[server] != want {
					t.Errorf("suggested for %s: %q, want %q (refusals %+v)", server, got[server], want, refused)
				}
			}
		})
	}
}

func catalogOf(server, label string, tools ...string) Catalog {
	return Catalog{Server: server, Label: label, Tools: ExposeTools(server, "", toolsNamed(tools...))}
}
