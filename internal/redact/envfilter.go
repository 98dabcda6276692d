package redact

import (
	"maps"
	"slices"
	"strings"
)

// EnvFilter is the environment filter for child processes. It is built once
// from a snapshot of the host environment and is read-only afterwards, so it
// is safe for concurrent use.
//
// A host variable is removed when [IsSecretName] says so, or when its value
// contains a URL with a password in its user information
// (postgres://app:hunter22@db/app, whatever the variable is called), unless
// its name is on the allow-list. The proxy variables (HTTP_PROXY,
// HTTPS_PROXY, NO_PROXY, ALL_PROXY, in any case) always pass, because a
// server may need the proxy to reach anything; the password of a proxy URL
// (or its user name when it has no password) is reported by
// [EnvFilter.Secrets] so that it is redacted.
//
// Names are compared as written (Unix semantics): GITHUB_TOKEN and
// github_token are two variables, both removed. When the snapshot holds a name
// twice, the first entry wins, as with os.Getenv; the values of every removed
// entry are secrets.
type EnvFilter struct {
	host    map[string]string // every host variable, first entry wins
	kept    map[string]string // host variables that pass the filter
	removed []string          // sorted names
	secrets []string          // sorted, distinct, registrable
}

// NewEnvFilter builds the filter from host, an os.Environ-style snapshot of
// "NAME=value" entries. Entries without '=' are ignored. It does no I/O.
func NewEnvFilter(host []string) *EnvFilter {
	f := &EnvFilter{
		host: make(map[string]string, len(host)),
		kept: make(map[string]string, len(host)),
	}
	removed := make(map[string]struct{})
	secrets := make(map[string]struct{})
	addSecret := func(v string) {
		if registrable(v) {
			secrets[v] = struct{}{}
		}
	}
	for _, kv := range host {
		name, value, ok := splitEnv(kv)
		if !ok {
			continue
		}
		_, dup := f.host[name]
		if !dup {
			f.host[name] = value
		}
		u := strings.ToUpper(name)
		creds, hasPassword := urlCredentials(value)
		switch {
		case proxyName(u):
			for _, c := range creds {
				addSecret(c)
			}
		case IsSecretName(name) || (!allowedName(u) && hasPassword):
			removed[name] = struct{}{}
			if !isFilePath(value) {
				// A path (AWS_CA_BUNDLE, GOOGLE_APPLICATION_CREDENTIALS)
				// names where a secret is, and is shared by harmless
				// variables: redacting it would blot out every mention of
				// /etc/ssl/certs/… The variable is still removed.
				addSecret(value)
			}
			if hasPassword {
				for _, c := range creds {
					addSecret(c)
				}
			}
			continue
		}
		if !dup {
			f.kept[name] = value
		}
	}
	f.removed = slices.Sorted(maps.Keys(removed))
	f.secrets = slices.Sorted(maps.Keys(secrets))
	return f
}

// Apply returns the environment of a child process: the filtered host
// environment with explicit applied over it, as "NAME=value" entries sorted by
// name. An explicit entry always wins, even when its name is deny-listed: that
// is how a server is given a secret on purpose. A nil value removes the
// variable. Entries whose name is empty or contains '=' cannot be expressed in
// an environment and are skipped.
func (f *EnvFilter) Apply(explicit map[string]*string) []string {
	env := maps.Clone(f.kept)
	if env == nil {
		env = make(map[string]string, len(explicit))
	}
	for name, value := range explicit {
		if name == "" || strings.ContainsRune(name, '=') {
			continue
		}
		if value == nil {
			delete(env, name)
		} else {
			env[name] = *value
		}
	}
	out := make([]string, 0, len(env))
	for _, name := range slices.Sorted(maps.Keys(env)) {
		out = append(out, name+"="+env[name])
	}
	return out
}

// Lookup returns a host variable, filtered or not. It serves ${env:NAME}
// expansion, which hands a host variable to one server explicitly.
func (f *EnvFilter) Lookup(name string) (string, bool) {
	v, ok := f.host[name]
	return v, ok
}

// Secrets returns the values the filter knows to be secret, sorted and
// distinct: the values of the removed variables, the passwords of the URLs in
// them, and the credentials of proxy URLs. Values shorter than [MinSecretLen]
// characters, or made only of white space, are left out. Add them to a
// [Registry] so that they are redacted.
func (f *EnvFilter) Secrets() []string {
	return slices.Clone(f.secrets)
}

// Removed returns the names of the host variables the filter removed, sorted.
// Names only: log them, never the values.
func (f *EnvFilter) Removed() []string {
	return slices.Clone(f.removed)
}

// ExplicitSecrets returns the values among a server's explicit environment
// entries that should be redacted: those of secret names ([IsSecretName]) and
// the passwords of URLs in any value, with the same length rule as
// [EnvFilter.Secrets]. A value copied with ${env:NAME} is usually in
// Secrets already; this catches a secret written into the configuration.
func ExplicitSecrets(explicit map[string]*string) []string {
	set := make(map[string]struct{})
	for name, value := range explicit {
		if value == nil {
			continue
		}
		if IsSecretName(name) && registrable(*value) && !isFilePath(*value) {
			set[*value] = struct{}{}
		}
		if creds, hasPassword := urlCredentials(*value); hasPassword {
			for _, c := range creds {
				if registrable(c) {
					set[c] = struct{}{}
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// splitEnv splits "NAME=value". The '=' is searched from the second byte, so
// Windows' "=C:=C:\dir" entries keep their name.
func splitEnv(kv string) (name, value string, ok bool) {
	if kv == "" {
		return "", "", false
	}
	i := strings.IndexByte(kv[1:], '=')
	if i < 0 {
		return "", "", false
	}
	return kv[:i+1], kv[i+2:], true
}

// isFilePath reports whether v is an absolute path and nothing else.
func isFilePath(v string) bool {
	if !strings.HasPrefix(v, "/") || strings.Contains(v, "//") {
		return false
	}
	for _, r := range v {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
