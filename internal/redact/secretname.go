package redact

import (
	"net/url"
	"strings"
)

// IsSecretName reports whether an environment variable of this name is kept
// from child processes. It is the deny rule of [EnvFilter]; the filter also
// removes variables whose value carries URL credentials, whatever their name.
//
// The name is upper-cased and split into words at every character that is not
// a letter or a digit (DB_PASS → DB, PASS; npm_config__authToken → NPM,
// CONFIG, AUTHTOKEN). It is a secret name when:
//
//   - it contains SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL or COOKIE
//     anywhere (CLIENT_SECRET, PGPASSWORD, GOOGLE_APPLICATION_CREDENTIALS);
//   - a word is KEY, KEYS, PASS, PWD, AUTH, AUTHORIZATION, DSN, CREDS or JWT
//     (API_KEY, DB_PASS, MYSQL_PWD, GH_AUTH, SENTRY_DSN), but not KEYBOARD,
//     PASSTHROUGH, BYPASS or AUTHOR;
//   - a word ends with TOKEN or TOKENS (GITHUB_TOKEN, AUTHTOKEN, but not
//     TOKENIZERS_PARALLELISM), with AUTH (OAUTH), with DSN or CREDS, or with
//     one of the key compounds APIKEY, ACCESSKEY, PRIVATEKEY, SECRETKEY,
//     AUTHKEY, MASTERKEY, SIGNINGKEY, ENCRYPTIONKEY, SESSIONKEY (OPENAIAPIKEY);
//   - it starts with AWS_, or is DATABASE_URL, DATABASE_URI, DB_URL or one of
//     the well-known names TELEGRAM_BOT_TOKEN, OPENAI_API_KEY,
//     ANTHROPIC_API_KEY, GITHUB_TOKEN, GH_TOKEN, NPM_TOKEN, HF_TOKEN,
//     GOOGLE_APPLICATION_CREDENTIALS (the rules above cover these too; the
//     list keeps them covered if the rules change).
//
// SESSION alone is deliberately not a secret word: XDG_SESSION_ID,
// XDG_SESSION_TYPE, DBUS_SESSION_BUS_ADDRESS and SESSION_MANAGER are common
// and harmless, and secret session variables carry TOKEN, KEY, SECRET or
// COOKIE as well (AWS_SESSION_TOKEN, SESSION_SECRET).
//
// Names on the allow-list are never secret names, whatever the rules say:
// PATH, HOME, USER, LOGNAME, SHELL, TERM, TZ, LANG, LANGUAGE, LC_*, TMPDIR,
// PWD, OLDPWD, PLAYWRIGHT_BROWSERS_PATH and the proxy variables HTTP_PROXY,
// HTTPS_PROXY, NO_PROXY and ALL_PROXY. The comparison ignores case.
func IsSecretName(name string) bool {
	u := strings.ToUpper(name)
	if allowedName(u) {
		return false
	}
	if knownSecretName(u) || strings.HasPrefix(u, "AWS_") {
		return true
	}
	for _, sub := range [...]string{"SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE"} {
		if strings.Contains(u, sub) {
			return true
		}
	}
	for word := range strings.FieldsFuncSeq(u, notAlnum) {
		if secretWord(word) {
			return true
		}
	}
	return false
}

// allowedName reports whether the upper-cased name is on the allow-list.
func allowedName(u string) bool {
	switch u {
	case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG", "LANGUAGE",
		"TMPDIR", "PWD", "OLDPWD", "PLAYWRIGHT_BROWSERS_PATH":
		return true
	}
	return strings.HasPrefix(u, "LC_") || proxyName(u)
}

// proxyName reports whether the upper-cased name is a proxy variable.
func proxyName(u string) bool {
	switch u {
	case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY":
		return true
	}
	return false
}

func knownSecretName(u string) bool {
	switch u {
	case "TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "GH_TOKEN",
		"NPM_TOKEN", "HF_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS",
		"DATABASE_URL", "DATABASE_URI", "DB_URL":
		return true
	}
	return false
}

// secretWord reports whether one upper-cased word of a name makes it secret.
func secretWord(w string) bool {
	switch w {
	case "KEY", "KEYS", "PASS", "PWD", "AUTH", "AUTHORIZATION", "DSN", "CREDS", "JWT":
		return true
	}
	for _, suffix := range [...]string{
		"TOKEN", "TOKENS", "AUTH", "DSN", "CREDS",
		"APIKEY", "ACCESSKEY", "PRIVATEKEY", "SECRETKEY", "AUTHKEY",
		"MASTERKEY", "SIGNINGKEY", "ENCRYPTIONKEY", "SESSIONKEY",
	} {
		if strings.HasSuffix(w, suffix) {
			return true
		}
	}
	return false
}

func notAlnum(r rune) bool {
	return (r < 'A' || r > 'Z') && (r < '0' || r > '9')
}

// urlCredentials looks for scheme://userinfo@host in v and returns the
// credentials found: the passwords when any URL has one (hasPassword is then
// true), otherwise the user names. Each is returned as written and, when it
// differs, percent-decoded. The authority ends at the first '/', '?', '#' or
// white space after "://", and the user information at its last '@', as in
// net/url; unlike url.Parse, a malformed URL still yields its credentials.
func urlCredentials(v string) (creds []string, hasPassword bool) {
	var users []string
	for rest := v; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		rest = rest[i+3:]
		authority := rest
		if end := strings.IndexAny(authority, "/?# \t\r\n"); end >= 0 {
			authority = authority[:end]
		}
		at := strings.LastIndexByte(authority, '@')
		if at < 0 {
			continue
		}
		user, password, ok := strings.Cut(authority[:at], ":")
		if ok && password != "" {
			hasPassword = true
			creds = appendDecoded(creds, password)
		} else if user != "" {
			users = appendDecoded(users, user)
		}
	}
	if hasPassword {
		return creds, true
	}
	return users, false
}

func appendDecoded(list []string, s string) []string {
	list = append(list, s)
	if d, err := url.PathUnescape(s); err == nil && d != s {
		list = append(list, d)
	}
	return list
}
