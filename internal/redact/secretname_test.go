package redact

import (
	"slices"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	secret := []string{
		// well-known names
		"TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "GH_TOKEN",
		"GOOGLE_APPLICATION_CREDENTIALS", "NPM_TOKEN", "HF_TOKEN", "DATABASE_URL", "DB_URL",
		// AWS_*, AZURE secrets
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION",
		"AZURE_CLIENT_SECRET", "AZURE_STORAGE_KEY",
		// substrings
		"CLIENT_SECRET", "SECRETS_FILE", "PGPASSWORD", "DB_PASSWORD", "MYSQL_ROOT_PASSWD",
		"GPG_PASSPHRASE", "DOCKER_CREDENTIALS", "SESSION_COOKIE", "COOKIEJAR",
		// words
		"API_KEY", "PRIVATE_KEY", "KEY", "SSH_KEYS", "DB_PASS", "SMTP_PASS", "MYSQL_PWD",
		"GH_AUTH", "SSH_AUTH_SOCK", "HTTP_AUTHORIZATION", "SENTRY_DSN", "DB_CREDS", "CI_JOB_JWT",
		// suffix forms
		"APIKEY", "OPENAIAPIKEY", "ACCESSKEY", "MY_ACCESSKEY", "SECRETKEY", "AUTHTOKEN",
		"ACCESS_TOKENS", "NODE_AUTH_TOKEN", "GITHUB_OAUTH", "PGDSN", "SESSION_SIGNINGKEY",
		// any case, any separator
		"github_token", "Openai_Api_Key", "npm_config__authToken", "npm_config_//registry.example.com/:_authToken",
		"my.api.key", "db-pass",
	}
	notSecret := []string{
		// allow-list
		"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
		"TMPDIR", "PWD", "OLDPWD", "PLAYWRIGHT_BROWSERS_PATH",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "Path",
		// look-alikes
		"KEYBOARD", "XKB_KEYMAP", "MONKEY", "PASSTHROUGH", "BYPASS_CACHE", "GIT_ASKPASS", "AUTHOR",
		"GIT_AUTHOR_NAME", "XAUTHORITY", "TOKENIZERS_PARALLELISM",
		// SESSION alone is not secret
		"XDG_SESSION_ID", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS", "SESSION_MANAGER",
		// ordinary
		"XDG_RUNTIME_DIR", "NODE_ENV", "NODE_OPTIONS", "NPM_CONFIG_CACHE", "NPM_CONFIG_REGISTRY",
		"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "HOSTNAME", "_", "LLM_PROVIDER", "LLM_MODEL",
		"OPENAI_BASE_URL", "TELEGRAM_ALLOWED_USERS", "VOLCANIC_DATA_DIR", "PLAYWRIGHT_HEADLESS", "DISPLAY",
		"",
	}
	for _, name := range secret {
		if !IsSecretName(name) {
			t.Errorf("IsSecretName(%q) = false, want true", name)
		}
	}
	for _, name := range notSecret {
		if IsSecretName(name) {
			t.Errorf("IsSecretName(%q) = true, want false", name)
		}
	}
}

func TestURLCredentials(t *testing.T) {
	tests := []struct {
		in          string
		want        []string
		hasPassword bool
	}{
		{"", nil, false},
		{"http://proxy.corp:3128", nil, false},
		{"http://user:hunter22pw@proxy:3128", []string{"hunter22pw"}, true},
		{"postgres://app:p@ss:w0rd@db:5432/app?sslmode=disable", []string{"p@ss:w0rd"}, true},
		{"redis://:s3cretpassw@cache:6379/0", []string{"s3cretpassw"}, true},
		{"http://user:p%40ssw0rd@proxy", []string{"p%40ssw0rd", "p@ssw0rd"}, true},
		{"http://tokenonlyuser@proxy", []string{"tokenonlyuser"}, false},
		{"https://registry.example.com/@scope/pkg", nil, false},
		{"a=http://u:pw1@h, b=http://u:pw2@h", []string{"pw1", "pw2"}, true},
		{"http://u:@host", []string{"u"}, false},
		{"not a url user:pass@host", nil, false},
	}
	for _, tt := range tests {
		got, hasPassword := urlCredentials(tt.in)
		if !slices.Equal(got, tt.want) || hasPassword != tt.hasPassword {
			t.Errorf("urlCredentials(%q) = %q, %v; want %q, %v", tt.in, got, hasPassword, tt.want, tt.hasPassword)
		}
	}
}
