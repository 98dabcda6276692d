package mcpconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Server names as other clients write them. Cline names the servers of
// its marketplace after their repository ("github.com/upstash/context7-mcp"),
// others allow spaces or any letter. Such a name is kept as the server's
// Label (what /mcp shows, what /mcp <name> accepts) and the server gets a
// safe internal name for what needs one: tool-name hints, files (an OAuth
// token is <name>.json), logs, the catalogue cache.

// validLabel reports why name cannot name a server ("" when it can):
// empty, too long, not UTF-8, or with a control character (it would garble
// a log line or a chat message).
func validLabel(name string) string {
	switch {
	case name == "":
		return "server name must not be empty"
	case len(name) > MaxServerLabelLen:
		return "server name must be at most " + strconv.Itoa(MaxServerLabelLen) + " bytes"
	case !utf8.ValidString(name):
		return "server name must be UTF-8 text"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "server name must not contain control characters (a newline, a tab)"
	case strings.TrimSpace(name) == "":
		return "server name must not be blank"
	}
	return ""
}

// SafeServerName is the internal name of a server named name: name itself
// when it is valid (ValidServerName); otherwise each run of characters
// outside [A-Za-z0-9._-] becomes one '_', what precedes the first letter or
// digit is dropped, and a name cut to MaxServerNameLen, or left with no
// letter or digit, ends with a short hash of the original so that
// different names stay apart. Merge makes the names unique among the
// servers.
func SafeServerName(name string) string {
	if ValidServerName(name) {
		return name
	}
	var b strings.Builder
	gap := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isAlnum(c) || c == '.' || c == '-' || c == '_' {
			if b.Len() == 0 && !isAlnum(c) {
				continue
			}
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteByte(c)
			continue
		}
		gap = true
		if c >= utf8.RuneSelf { // the rest of a multi-byte rune is one gap
			_, size := utf8.DecodeRuneInString(name[i:])
			i += max(size, 1) - 1
		}
	}
	safe := strings.TrimRight(b.String(), "._-")
	sum := sha256.Sum256([]byte(name))
	tag := hex.EncodeToString(sum[:4])
	switch {
	case safe == "":
		return "server-" + tag
	case len(safe) > MaxServerNameLen:
		return strings.TrimRight(safe[:MaxServerNameLen-len(tag)-1], "._-") + "-" + tag
	}
	return safe
}

// uniqueNames gives the servers whose entry named them in another client's
// spelling an internal name no other server has: a valid name an entry
// spells is kept as it is, since the user calls the server by it; a safe
// name taken gets -2, -3, …
func uniqueNames(servers []ServerConfig) {
	taken := make(map[string]bool, len(servers))
	for _, s := range servers {
		if s.Label == "" {
			taken[s.Name] = true
		}
	}
	for i := range servers {
		s := &servers[i]
		if s.Label == "" {
			continue
		}
		base, name := s.Name, s.Name
		for k := 2; taken[name]; k++ {
			suf := "-" + strconv.Itoa(k)
			name = base[:min(len(base), MaxServerNameLen-len(suf))] + suf
		}
		taken[name] = true
		if name != s.Name {
			s.Name = name
			s.Warnings = append(s.Warnings, labelWarning(s.Label, name))
		}
	}
}

// labelWarning tells the operator which internal name a server got.
func labelWarning(label, name string) string {
	return "the server name " + strconv.Quote(label) + " is kept for /mcp; tools, files and logs call the server " +
		strconv.Quote(name) + " (/mcp accepts either)"
}
