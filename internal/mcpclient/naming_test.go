package mcpclient

import (
	"bytes"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitizeToolName(t *testing.T) {
	long := strings.Repeat("a", 60)
	tests := []struct {
		name, prefix, mcpName, want string
	}{
		{"plain", "", "browser_navigate", "browser_navigate"},
		{"prefix", "gh_", "create_issue", "gh_create_issue"},
		{"dots and slash", "", "weird.name/x", "weird_name_x"},
		{"hyphen kept", "", "get-page", "get-page"},
		{"space and colon", "", "a b:c", "a_b_c"},
		{"prefix sanitised", "my.srv:", "t", "my_srv_t"},
		{"multi-byte rune is one _", "", "café", "caf_"},
		{"emoji is one _", "", "go🚀", "go_"},
		{"invalid utf-8 byte is one _", "", "a\xffb", "a_b"},
		{"truncated to 48", "", long, long[:48]},
		{"prefix counts toward 48", "pre_", long, "pre_" + long[:44]},
		{"long prefix alone", long, "x", long[:48]},
		{"truncated after sanitising", "", strings.Repeat("é", 60), strings.Repeat("_", 48)},
		{"exactly 48", "", long[:48], long[:48]},
		{"empty", "", "", "_"},
		{"empty name with prefix", "p_", "", "p_"},
		{"only bad characters", "", "...", "___"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SanitizeToolName(tt.prefix, tt.mcpName); got != tt.want {
				t.Errorf("SanitizeToolName(%q, %q) = %q, want %q", tt.prefix, tt.mcpName, got, tt.want)
			}
		})
	}
}

func FuzzSanitizeToolName(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"", "browser_navigate"}, {"gh_", "weird.name/x"}, {"", "café🚀"},
		{"x", "\xff\xfe"}, {strings.Repeat("p", 30), strings.Repeat("n", 30)}, {"", strings.Repeat("é", 50)},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, prefix, name string) {
		got := SanitizeToolName(prefix, name)
		assertToolName(t, got)
		if again := SanitizeToolName(prefix, name); again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		if again := SanitizeToolName("", got); again != got {
			t.Fatalf("not idempotent: %q then %q", got, again)
		}
		// One output character per input rune (invalid bytes count as one).
		want := min(utf8.RuneCountInString(prefix)+utf8.RuneCountInString(name), MaxToolNameLen)
		if want > 0 && len(got) != want {
			t.Fatalf("SanitizeToolName(%q, %q) = %q: %d characters, want %d", prefix, name, got, len(got), want)
		}
		// Allowed characters pass through at their place.
		if p := prefix + name; len(p) <= MaxToolNameLen && validToolName(p) && p != "" && got != p {
			t.Fatalf("valid name %q changed to %q", p, got)
		}
	})
}

func assertToolName(t *testing.T, name string) {
	t.Helper()
	if name == "" || len(name) > MaxToolNameLen {
		t.Fatalf("name %q: length %d, want 1..%d", name, len(name), MaxToolNameLen)
	}
	if !validToolName(name) {
		t.Fatalf("name %q has characters outside [A-Za-z0-9_-]", name)
	}
}

func toolsNamed(names ...string) []Tool {
	tools := make([]Tool, len(names))
	for i, n := range names {
		tools[i] = Tool{MCPName: n, Description: "d " + n}
	}
	return tools
}

func exposedNames(tools []Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

func TestExposeTools(t *testing.T) {
	long := strings.Repeat("x", 60)
	tests := []struct {
		name   string
		prefix string
		in     []string
		want   []string
	}{
		{"no clash", "", []string{"echo", "image"}, []string{"echo", "image"}},
		{"prefix", "fs_", []string{"read", "write"}, []string{"fs_read", "fs_write"}},
		{"sanitised clash", "", []string{"weird.name/x", "weird_name_x"}, []string{"weird_name_x", "weird_name_x_2"}},
		{"three way", "", []string{"a.b", "a/b", "a:b"}, []string{"a_b", "a_b_2", "a_b_3"}},
		{"suffix skips a real name", "", []string{"a.b", "a_b", "a_b_2"}, []string{"a_b", "a_b_3", "a_b_2"}},
		{"real name later keeps it", "", []string{"a_b_2", "a.b", "a_b"}, []string{"a_b_2", "a_b", "a_b_3"}},
		{"long names truncated then suffixed", "", []string{long, long + "y"},
			[]string{long[:48], long[:46] + "_2"}},
		{"suffix length grows", "", dupNames(long, 11), append([]string{long[:48]}, suffixedNames(long, 11)...)},
		{"empty names", "", []string{"", ""}, []string{"_", "__2"}},
		{"nothing", "", nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := toolsNamed(tt.in...)
			got := ExposeTools("srv", tt.prefix, in)
			if names := exposedNames(got); !reflect.DeepEqual(names, tt.want) {
				t.Fatalf("names = %q, want %q", names, tt.want)
			}
			for i, tool := range got {
				assertToolName(t, tool.Name)
				if tool.Server != "srv" || tool.MCPName != tt.in[i] || tool.Description != "d "+tt.in[i] {
					t.Errorf("tool %d = %+v: server, MCP name or description changed", i, tool)
				}
				if in[i].Name != "" || in[i].Server != "" {
					t.Errorf("input tool %d was modified", i)
				}
			}
		})
	}
}

func dupNames(base string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = base + strings.Repeat("z", i)
	}
	return s
}

func suffixedNames(long string, n int) []string {
	var s []string
	for k := 2; k <= n; k++ {
		suf := "_" + strconv.Itoa(k)
		s = append(s, long[:48-len(suf)]+suf)
	}
	return s
}

func FuzzExposeTools(f *testing.F) {
	f.Add("a.b|a_b|a_b_2", "")
	f.Add("x|x|x|x_2|x_3", "p_")
	f.Add(strings.Repeat("n", 50)+"|"+strings.Repeat("n", 49)+"|"+strings.Repeat("n", 46)+"_2", "")
	f.Fuzz(func(t *testing.T, names, prefix string) {
		got := ExposeTools("s", prefix, toolsNamed(strings.Split(names, "|")...))
		seen := map[string]bool{}
		for _, tool := range got {
			assertToolName(t, tool.Name)
			if seen[tool.Name] {
				t.Fatalf("duplicate exposed name %q in %q", tool.Name, exposedNames(got))
			}
			seen[tool.Name] = true
		}
	})
}

func TestResolveTools(t *testing.T) {
	cat := func(server string, names ...string) Catalog {
		return Catalog{Server: server, Tools: ExposeTools(server, "", toolsNamed(names...))}
	}
	tests := []struct {
		name     string
		catalogs []Catalog
		builtins []string
		want     []string // server/name of accepted tools, in order
		refused  []Refusal
	}{
		{
			name:     "no clash keeps source order",
			catalogs: []Catalog{cat("b", "x", "y"), cat("a", "z")},
			builtins: []string{"send"},
			want:     []string{"b/x", "b/y", "a/z"},
		},
		{
			name:     "built-in refused",
			catalogs: []Catalog{cat("fake", "read", "echo", "send")},
			builtins: []string{"send", "read"},
			want:     []string{"fake/echo"},
			refused: []Refusal{
				{Server: "fake", MCPName: "read", Name: "read", Reason: RefusedBuiltin},
				{Server: "fake", MCPName: "send", Name: "send", Reason: RefusedBuiltin},
			},
		},
		{
			name:     "first server wins",
			catalogs: []Catalog{cat("one", "echo", "a"), cat("two", "echo", "b")},
			want:     []string{"one/echo", "one/a", "two/b"},
			refused:  []Refusal{{Server: "two", MCPName: "echo", Name: "echo", Reason: RefusedTaken, Owner: "one"}},
		},
		{
			name:     "built-in beats the first server",
			catalogs: []Catalog{cat("one", "send"), cat("two", "send")},
			builtins: []string{"send"},
			refused: []Refusal{
				{Server: "one", MCPName: "send", Name: "send", Reason: RefusedBuiltin},
				{Server: "two", MCPName: "send", Name: "send", Reason: RefusedBuiltin},
			},
		},
		{
			name: "unexposed duplicates within one server",
			catalogs: []Catalog{{Server: "raw", Tools: []Tool{
				{MCPName: "a.b"}, {MCPName: "a_b"},
			}}},
			want:    []string{"raw/a_b"},
			refused: []Refusal{{Server: "raw", MCPName: "a_b", Name: "a_b", Reason: RefusedTaken, Owner: "raw"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&buf, nil))
			tools, refused := ResolveTools(tt.catalogs, tt.builtins, logger)
			got := []string{}
			for _, tool := range tools {
				got = append(got, tool.Server+"/"+tool.Name)
			}
			if tt.want == nil {
				tt.want = []string{}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("accepted = %q, want %q", got, tt.want)
			}
			for i := range refused {
				refused[i].Prefix = "" // suggest_test.go
			}
			if !reflect.DeepEqual(refused, tt.refused) {
				t.Errorf("refused = %+v, want %+v", refused, tt.refused)
			}
			if n := strings.Count(buf.String(), "level=WARN"); n != len(tt.refused) {
				t.Errorf("%d warnings, want %d:\n%s", n, len(tt.refused), buf.String())
			}
		})
	}
}

func TestResolveToolsWarnings(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	_, refused := ResolveTools([]Catalog{
		{Server: "alpha", Tools: ExposeTools("alpha", "", toolsNamed("echo"))},
		{Server: "beta", Tools: ExposeTools("beta", "", toolsNamed("echo", "read"))},
	}, []string{"read"}, logger)
	if len(refused) != 2 {
		t.Fatalf("refused = %+v, want 2", refused)
	}
	log := buf.String()
	for _, want := range []string{"owner=alpha", "server=beta", "toolPrefix", "is a built-in tool", "first server wins"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	taken := refused[0].String()
	for _, want := range []string{`MCP server "alpha" already provides "echo"`, `set "toolPrefix" for server "beta" (e.g. "beta_")`} {
		if !strings.Contains(taken, want) {
			t.Errorf("refusal %q lacks %q", taken, want)
		}
	}
	builtin := refused[1].String()
	if !strings.Contains(builtin, `set "toolPrefix" for server "beta"`) {
		t.Errorf("refusal %q lacks the toolPrefix hint", builtin)
	}
}

func TestResolveToolsNilLogger(t *testing.T) {
	tools, refused := ResolveTools([]Catalog{{Server: "s", Tools: ExposeTools("s", "", toolsNamed("send"))}}, []string{"send"}, nil)
	if len(tools) != 0 || len(refused) != 1 {
		t.Fatalf("tools = %v, refused = %v", tools, refused)
	}
}
