package mcpconfig

import (
	"slices"
	"testing"
)

// ${private} is the chat's private folder for a preset's entry (the
// per-chat browser's profile) and stays as written in any entry a user
// configured: no server of the user's is handed the bot's own state, even
// by naming it. It is never a host variable.
func TestPrivateOnlyForPresets(t *testing.T) {
	dirs := Dirs{Workspace: "/data/chats/42", Private: "/data/private/42"}
	env := stubEnv{host: map[string]string{"private": "/from/the/host"}}
	for _, tt := range []struct {
		source Source
		want   []string
	}{
		{SourcePreset, []string{"--user-data-dir", "/data/private/42/browser-profile", "--out", "/data/chats/42/out"}},
		{SourceSettings, []string{"--user-data-dir", "${private}/browser-profile", "--out", "/data/chats/42/out"}},
		{SourceConfig, []string{"--user-data-dir", "${private}/browser-profile", "--out", "/data/chats/42/out"}},
	} {
		c := ServerConfig{Name: "b", Source: tt.source, Command: "/bin/b",
			Args: []string{"--user-data-dir", "${private}/browser-profile", "--out", "${workspace}/out"}}
		sp, err := c.Expand(dirs, env)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(sp.Args, tt.want) {
			t.Errorf("%v: args %q, want %q", tt.source, sp.Args, tt.want)
		}
		if unset := c.UnsetVariables(env.Lookup); len(unset) != 0 {
			t.Errorf("%v: ${private} taken for a host variable: %q", tt.source, unset)
		}
	}
	// A preset's entry without a private folder (none was given) keeps it
	// as written rather than naming a folder at the root.
	sp, err := ServerConfig{Name: "b", Source: SourcePreset, Command: "/bin/b", Args: []string{"${private}/p"}}.Expand(Dirs{Workspace: "/w"}, env)
	if err != nil || sp.Args[0] != "${private}/p" {
		t.Errorf("no private folder: %q (%v)", sp.Args, err)
	}
}
