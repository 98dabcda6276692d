package mcpclient

import (
	"slices"
	"strconv"
	"strings"
)

// maxPrefixBase is the longest server name a suggested toolPrefix keeps
// whole: the tools' own names keep at least 15 of MaxToolNameLen.
const maxPrefixBase = 32

// suggestPrefixes fills in the toolPrefix each refusal suggests. A
// suggestion resolves the clash it comes with: with it, every refused
// tool of the server gets a name no tool registered, no built-in and no
// other refused tool has; it differs from every server's name, from every
// other server's natural prefix (its name and '_') and from the other
// suggestions, so following two of them never makes a new clash.
func suggestPrefixes(catalogs []Catalog, refused []Refusal, registered map[string]string, builtin map[string]bool) {
	if len(refused) == 0 {
		return
	}
	used := map[string][]string{} // a prefix → the servers whose name or natural prefix it is
	labels := map[string]string{}
	for _, c := range catalogs {
		used[c.Server] = append(used[c.Server], c.Server)
		natural := SanitizeToolName(c.Server, "") + "_"
		used[natural] = append(used[natural], c.Server)
		if c.Label != "" {
			labels[c.Server] = c.Label
		}
	}
	chosen := map[string]bool{}
	byServer := map[string][]string{} // server → its refused tools' MCP names
	var order []string
	for _, r := range refused {
		if _, ok := byServer[r.Server]; !ok {
			order = append(order, r.Server)
		}
		byServer[r.Server] = append(byServer[r.Server], r.MCPName)
	}
	suggested := map[string]string{}
	for _, server := range order {
		base := prefixBase(server, labels[server])
		for k := 1; ; k++ {
			p := base + "_"
			if k > 1 {
				p = base + strconv.Itoa(k) + "_"
			}
			other := slices.ContainsFunc(used[p], func(s string) bool { return s != server })
			if other || chosen[p] || !prefixFrees(p, byServer[server], registered, builtin) {
				continue
			}
			chosen[p], suggested[server] = true, p
			break
		}
	}
	for i := range refused {
		refused[i].Prefix = suggested[refused[i].Server]
		refused[i].Label = labels[refused[i].Server]
		refused[i].OwnerLabel = labels[refused[i].Owner]
	}
}

// prefixFrees reports whether prefix gives each of tools a name nothing
// else has.
func prefixFrees(prefix string, tools []string, registered map[string]string, builtin map[string]bool) bool {
	for _, t := range tools {
		name := SanitizeToolName(prefix, t)
		if _, taken := registered[name]; taken || builtin[name] {
			return false
		}
	}
	return true
}

// prefixBase is the readable stem of a server's suggested prefix: the last
// part of a name in another client's spelling with a '/' (a repository, a
// scoped package) less the "mcp" and "server" words around it; otherwise
// the name, whole up to maxPrefixBase characters, else cut after a word.
func prefixBase(server, label string) string {
	if i := strings.LastIndexByte(label, '/'); i >= 0 {
		if stem := trimAffixes(label[i+1:]); stem != "" {
			server = stem
		}
	}
	s := SanitizeToolName(server, "")
	if s == "_" {
		return "mcp"
	}
	if len(s) > maxPrefixBase {
		cut := s[:maxPrefixBase]
		if i := strings.LastIndexAny(cut, "_-"); i >= maxPrefixBase/2 {
			cut = cut[:i]
		}
		s = cut
	}
	return strings.TrimRight(s, "_-")
}

// trimAffixes drops "mcp" and "server" words from either end of a name:
// "context7-mcp" → "context7", "mcp-server-fetch" → "fetch".
func trimAffixes(s string) string {
	for changed := true; changed; {
		changed = false
		lower := strings.ToLower(s)
		for _, w := range []string{"mcp", "server"} {
			for _, sep := range []string{"-", "_", "."} {
				if strings.HasPrefix(lower, w+sep) && len(s) > len(w)+1 {
					s, changed = s[len(w)+1:], true
				} else if strings.HasSuffix(lower, sep+w) && len(s) > len(w)+1 {
					s, changed = s[:len(s)-len(w)-1], true
				}
				if changed {
					break
				}
			}
			if changed {
				break
			}
		}
	}
	return s
}
