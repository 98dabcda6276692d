package redact

import (
	"maps"
	"net/url"
	"slices"
	"strings"
)

// HeaderSecrets returns the values among an HTTP server's headers that are
// secrets, written literally in its configuration: the values of
// Authorization, Proxy-Authorization and Cookie, and of any header whose
// name looks like a secret's (X-Api-Key, X-Auth-Token, …), with the
// credential after an auth scheme on its own too ("Bearer abc…" also gives
// "abc…"). A value that still holds a ${…} reference is skipped: what it
// expands to is the host variable's, known already when that is a secret.
func HeaderSecrets(headers map[string]string) []string {
	set := make(map[string]struct{})
	for name, value := range headers {
		value = strings.TrimSpace(value)
		if strings.Contains(value, "${") || !secretHeader(name) {
			continue
		}
		if registrable(value) {
			set[value] = struct{}{}
		}
		if _, cred, ok := strings.Cut(value, " "); ok {
			if cred = strings.TrimSpace(cred); registrable(cred) {
				set[cred] = struct{}{}
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func secretHeader(name string) bool {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	return IsSecretName(strings.ReplaceAll(name, "-", "_"))
}

// ArgSecrets returns the values in a server's command-line arguments that
// are secrets written literally: the value after a flag whose name looks
// like a secret's (--api-key sk-…, --token=…, --password …, -p is not
// one). A value that still holds a ${…} reference is skipped, as for
// headers.
func ArgSecrets(args []string) []string {
	set := make(map[string]struct{})
	for i, a := range args {
		flag, value, inline := strings.Cut(a, "=")
		if !strings.HasPrefix(flag, "--") || !IsSecretName(strings.ReplaceAll(strings.TrimLeft(flag, "-"), "-", "_")) {
			continue
		}
		if !inline {
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				continue
			}
			value = args[i+1]
		}
		if value = strings.TrimSpace(value); !strings.Contains(value, "${") && registrable(value) {
			set[value] = struct{}{}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// URLSecrets returns the secrets written in a URL: the password of its
// user info, and the values of query parameters whose names look like a
// secret's (?token=…, ?apiKey=…), as a browser service's connect URL holds
// them.
func URLSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	set := make(map[string]struct{})
	if pw, ok := u.User.Password(); ok && registrable(pw) {
		set[pw] = struct{}{}
	}
	for name, values := range u.Query() {
		if !IsSecretName(strings.ToUpper(strings.ReplaceAll(name, "-", "_"))) {
			continue
		}
		for _, v := range values {
			if registrable(v) {
				set[v] = struct{}{}
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}
