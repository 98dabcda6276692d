package redact

import (
	"slices"
	"strings"
	"testing"
)

func ptr(s string) *string { return &s }

// envMap turns Apply's output back into a map, checking it is sorted and has
// no duplicates.
func envMap(t *testing.T, env []string) map[string]string {
	t.Helper()
	m := make(map[string]string, len(env))
	var names []string
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("entry %q has no '='", kv)
		}
		if _, dup := m[name]; dup {
			t.Fatalf("duplicate entry for %s", name)
		}
		m[name] = value
		names = append(names, name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("entries not sorted by name: %q", names)
	}
	return m
}

// testHost is the host snapshot of the filter tests.
func testHost() []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin",
		"HOME=/home/bot",
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"TZ=Europe/Berlin",
		"PLAYWRIGHT_BROWSERS_PATH=/opt/ms-playwright",
		"NODE_OPTIONS=--max-old-space-size=512",
		"XDG_SESSION_ID=42",
		"TOKENIZERS_PARALLELISM=false",
		"TELEGRAM_BOT_TOKEN=123456:telegram-secret-token",
		"OPENAI_API_KEY=sk-openai-secret",
		"GITHUB_TOKEN=ghp_githubsecret",
		"AWS_REGION=eu-west-1",
		"DB_PASS=short",
		"EMPTY_SECRET=",
		"REDIS_URL=redis://:redispassw0rd@cache:6379/0",
		"HTTPS_PROXY=http://proxyuser:proxypassw0rd@proxy:3128",
		"http_proxy=http://proxy:3128",
		"NOEQUALS",
		"GITHUB_TOKEN=ghp_second_duplicate",
	}
}

func TestEnvFilterApply(t *testing.T) {
	f := NewEnvFilter(testHost())
	tests := []struct {
		name     string
		explicit map[string]*string
		want     map[string]*string // nil value: must be absent
	}{
		{
			name:     "secrets removed, the rest kept",
			explicit: nil,
			want: map[string]*string{
				"PATH":                     ptr("/usr/local/bin:/usr/bin"),
				"HOME":                     ptr("/home/bot"),
				"LANG":                     ptr("C.UTF-8"),
				"LC_ALL":                   ptr("C.UTF-8"),
				"TZ":                       ptr("Europe/Berlin"),
				"PLAYWRIGHT_BROWSERS_PATH": ptr("/opt/ms-playwright"),
				"NODE_OPTIONS":             ptr("--max-old-space-size=512"),
				"XDG_SESSION_ID":           ptr("42"),
				"TOKENIZERS_PARALLELISM":   ptr("false"),
				"HTTPS_PROXY":              ptr("http://proxyuser:proxypassw0rd@proxy:3128"),
				"http_proxy":               ptr("http://proxy:3128"),
				"TELEGRAM_BOT_TOKEN":       nil,
				"OPENAI_API_KEY":           nil,
				"GITHUB_TOKEN":             nil,
				"AWS_REGION":               nil,
				"DB_PASS":                  nil,
				"EMPTY_SECRET":             nil,
				"REDIS_URL":                nil,
				"NOEQUALS":                 nil,
			},
		},
		{
			name:     "explicit beats the deny-list",
			explicit: map[string]*string{"GITHUB_TOKEN": ptr("ghp_explicit"), "OPENAI_API_KEY": ptr("")},
			want: map[string]*string{
				"GITHUB_TOKEN":       ptr("ghp_explicit"),
				"OPENAI_API_KEY":     ptr(""),
				"TELEGRAM_BOT_TOKEN": nil,
				"PATH":               ptr("/usr/local/bin:/usr/bin"),
			},
		},
		{
			name:     "explicit overrides a kept variable and adds new ones",
			explicit: map[string]*string{"PATH": ptr("/bin"), "DEBUG": ptr("pw:api"), "A=B": ptr("skipped"), "": ptr("skipped")},
			want:     map[string]*string{"PATH": ptr("/bin"), "DEBUG": ptr("pw:api"), "A=B": nil, "": nil},
		},
		{
			name:     "null removes",
			explicit: map[string]*string{"HOME": nil, "TZ": nil, "NOT_SET": nil},
			want:     map[string]*string{"HOME": nil, "TZ": nil, "NOT_SET": nil, "LANG": ptr("C.UTF-8")},
		},
		{
			name:     "null removes an explicit-only secret too",
			explicit: map[string]*string{"GITHUB_TOKEN": nil},
			want:     map[string]*string{"GITHUB_TOKEN": nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := envMap(t, f.Apply(tt.explicit))
			for name, want := range tt.want {
				v, ok := got[name]
				switch {
				case want == nil && ok:
					t.Errorf("%s present (%q), want absent", name, v)
				case want != nil && !ok:
					t.Errorf("%s absent, want %q", name, *want)
				case want != nil && v != *want:
					t.Errorf("%s = %q, want %q", name, v, *want)
				}
			}
		})
	}
}

func TestEnvFilterApplyDoesNotShareState(t *testing.T) {
	f := NewEnvFilter([]string{"A=1"})
	_ = f.Apply(map[string]*string{"A": nil, "B": ptr("2")})
	if got := f.Apply(nil); !slices.Equal(got, []string{"A=1"}) {
		t.Errorf("second Apply = %q, want [A=1]", got)
	}
}

func TestEnvFilterEmpty(t *testing.T) {
	f := NewEnvFilter(nil)
	if got := f.Apply(map[string]*string{"X": ptr("1")}); !slices.Equal(got, []string{"X=1"}) {
		t.Errorf("Apply = %q", got)
	}
	if len(f.Secrets()) != 0 || len(f.Removed()) != 0 {
		t.Errorf("Secrets %q, Removed %q: want none", f.Secrets(), f.Removed())
	}
}

func TestEnvFilterLookup(t *testing.T) {
	f := NewEnvFilter(testHost())
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"GITHUB_TOKEN", "ghp_githubsecret", true}, // unfiltered, first entry wins
		{"PATH", "/usr/local/bin:/usr/bin", true},
		{"EMPTY_SECRET", "", true},
		{"NOEQUALS", "", false},
		{"github_token", "", false},
		{"UNSET", "", false},
	}
	for _, tt := range tests {
		if v, ok := f.Lookup(tt.name); v != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tt.name, v, ok, tt.want, tt.ok)
		}
	}
}

func TestEnvFilterSecretsAndRemoved(t *testing.T) {
	f := NewEnvFilter(testHost())
	wantSecrets := []string{
		"123456:telegram-secret-token",
		"ghp_githubsecret",
		"ghp_second_duplicate",
		"proxypassw0rd",
		"redis://:redispassw0rd@cache:6379/0",
		"redispassw0rd",
		"sk-openai-secret",
		"eu-west-1", // 9 characters: AWS_* is removed whole
	}
	slices.Sort(wantSecrets)
	if got := f.Secrets(); !slices.Equal(got, wantSecrets) {
		t.Errorf("Secrets() = %q\nwant %q", got, wantSecrets)
	}
	wantRemoved := []string{"AWS_REGION", "DB_PASS", "EMPTY_SECRET", "GITHUB_TOKEN", "OPENAI_API_KEY", "REDIS_URL", "TELEGRAM_BOT_TOKEN"}
	if got := f.Removed(); !slices.Equal(got, wantRemoved) {
		t.Errorf("Removed() = %q\nwant %q", got, wantRemoved)
	}
	// The results are copies.
	f.Secrets()[0] = "changed"
	f.Removed()[0] = "changed"
	if f.Secrets()[0] == "changed" || f.Removed()[0] == "changed" {
		t.Error("Secrets or Removed exposes the filter's state")
	}
}

func TestEnvFilterSecretsLength(t *testing.T) {
	tests := []struct {
		value string
		want  bool
	}{
		{"1234567", false},
		{"12345678", true},
		{"        ", false},     // white space only
		{"\t\n  \t\n  ", false}, // white space only
		{"пароль12", true},      // 8 characters, 14 bytes
		{"пароль1", false},      // 7 characters, 13 bytes
	}
	for _, tt := range tests {
		f := NewEnvFilter([]string{"API_KEY=" + tt.value})
		if got := slices.Contains(f.Secrets(), tt.value); got != tt.want {
			t.Errorf("value %q: in Secrets() = %v, want %v", tt.value, got, tt.want)
		}
		if !slices.Equal(f.Removed(), []string{"API_KEY"}) {
			t.Errorf("value %q: Removed() = %q, want [API_KEY] whatever the length", tt.value, f.Removed())
		}
	}
}

func TestEnvFilterProxyUsernameOnly(t *testing.T) {
	f := NewEnvFilter([]string{"ALL_PROXY=socks5://longtokenuser@proxy:1080", "NO_PROXY=localhost,127.0.0.1"})
	if got := f.Secrets(); !slices.Equal(got, []string{"longtokenuser"}) {
		t.Errorf("Secrets() = %q, want the proxy user name", got)
	}
	if len(f.Removed()) != 0 {
		t.Errorf("Removed() = %q, want none", f.Removed())
	}
}

func TestExplicitSecrets(t *testing.T) {
	got := ExplicitSecrets(map[string]*string{
		"GITHUB_TOKEN": ptr("ghp_fromconfig"),
		"API_KEY":      ptr("short"),
		"CONN_URL":     ptr("mysql://root:rootpassw0rd@db/app"),
		"MODE":         ptr("production-mode"),
		"REMOVED":      nil,
		"PASSWORD":     nil,
	})
	want := []string{"ghp_fromconfig", "rootpassw0rd"}
	if !slices.Equal(got, want) {
		t.Errorf("ExplicitSecrets = %q, want %q", got, want)
	}
}

func TestPathValuesAreNotSecrets(t *testing.T) {
	f := NewEnvFilter([]string{
		"AWS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt",
		"GOOGLE_APPLICATION_CREDENTIALS=/run/secrets/gcp-key.json",
		"API_TOKEN=/not-a-path but a token",
		"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
	})
	if got := f.Secrets(); len(got) != 1 || got[0] != "/not-a-path but a token" {
		t.Errorf("secrets = %q", got)
	}
	env := strings.Join(f.Apply(nil), "\n")
	if strings.Contains(env, "AWS_CA_BUNDLE") || strings.Contains(env, "GOOGLE_APPLICATION_CREDENTIALS") {
		t.Errorf("credential variables passed:\n%s", env)
	}
	if !strings.Contains(env, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt") {
		t.Errorf("SSL_CERT_FILE was removed:\n%s", env)
	}
}
