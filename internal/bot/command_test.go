package bot

import (
	"slices"
	"testing"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		text string
		ok   bool
		want command
	}{
		{"/start", true, command{Name: "start"}},
		{"/Help", true, command{Name: "help"}},
		{"/new@volcanic_test_bot", true, command{Name: "new", Bot: "volcanic_test_bot"}},
		{"/stop@OtherBot", true, command{Name: "stop", Bot: "OtherBot"}},
		{"/mcp fetch", true, command{Name: "mcp", Args: []string{"fetch"}}},
		{"/mcp restart playwright", true, command{Name: "mcp", Args: []string{"restart", "playwright"}}},
		{"/mcp@volcanic_test_bot   restart\tx ", true, command{Name: "mcp", Bot: "volcanic_test_bot", Args: []string{"restart", "x"}}},
		{"  /help", true, command{Name: "help"}},
		{"\n/new\nand more", true, command{Name: "new", Args: []string{"and", "more"}}},
		{"/unknown_cmd arg", true, command{Name: "unknown_cmd", Args: []string{"arg"}}},
		{"/allow-more -100123", true, command{Name: "allow_more", Args: []string{"-100123"}}},
		{"/allow_more@volcanic_test_bot", true, command{Name: "allow_more", Bot: "volcanic_test_bot"}},
		{"/-x", false, command{}},
		{"/x- y", false, command{}},
		{"/", false, command{}},
		{"/ help", false, command{}},
		{"/usr/bin/env", false, command{}},
		{"/new@", false, command{}},
		{"/new@bot/x", false, command{}},
		{"/naïve", false, command{}},
		{"hello /start", false, command{}},
		{"", false, command{}},
		{"/abcdefghijklmnopqrstuvwxyz0123456", false, command{}}, // 33 characters
	}
	for _, tt := range tests {
		got, ok := parseCommand(tt.text)
		if ok != tt.ok || got.Name != tt.want.Name || got.Bot != tt.want.Bot || !slices.Equal(got.Args, tt.want.Args) {
			t.Errorf("parseCommand(%q) = %+v, %v; want %+v, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBotCommands(t *testing.T) {
	var names []string
	for _, c := range botCommands() {
		names = append(names, c.Command)
		if c.Description == "" || len(c.Description) > 256 {
			t.Errorf("/%s: description %q", c.Command, c.Description)
		}
	}
	for _, want := range []string{"start", "help", "new", "stop", "mcp"} {
		if !slices.Contains(names, want) {
			t.Errorf("commands %v lack %s", names, want)
		}
	}
}
