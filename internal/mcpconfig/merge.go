package mcpconfig

import "log/slog"

// Merge merges the sources in order — the config file (with its
// variables), the presets, settings.json — into the servers to run: the
// first source wins a name (as the user wrote it), compared ordinally, and
// the loser is logged at warn with both origins. Within each source the
// order is kept. A server named in another client's spelling gets an
// internal name no other server has (uniqueNames).
//
// A preset yields its name in two cases: to a server of the config file
// (logged when the preset is enabled, since the user then gets their own
// server instead of the preset), and, when the preset is disabled (it is
// only a placeholder that tells /mcp how to turn it on), to a settings.json
// entry. logger may be nil.
func Merge(logger *slog.Logger, config, presets, settings []ServerConfig) []ServerConfig {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var kept []ServerConfig
	for _, p := range presets {
		switch {
		case hasServer(config, p.Name):
			if p.Enabled {
				logger.Warn("MCP: the "+p.Name+" preset is skipped: a configured server has its name",
					"server", p.Name, "used", originOf(config, p.Name), "ignored", p.Origin)
			}
		case !p.Enabled && hasServer(settings, p.Name):
			// The disabled preset is only a placeholder for /mcp: the
			// user's own entry of that name stands.
		default:
			kept = append(kept, p)
		}
	}
	var (
		out    []ServerConfig
		winner = map[string]string{} // name → origin
	)
	for _, src := range [][]ServerConfig{config, kept, settings} {
		for _, c := range src {
			if o, ok := winner[c.Display()]; ok {
				logger.Warn("MCP server shadowed by an earlier source; ignoring it",
					"server", c.Display(), "used", o, "ignored", c.Origin)
				continue
			}
			winner[c.Display()] = c.Origin
			out = append(out, c)
		}
	}
	uniqueNames(out)
	return out
}

func hasServer(servers []ServerConfig, name string) bool {
	_, ok := find(servers, name)
	return ok
}

func originOf(servers []ServerConfig, name string) string {
	s, _ := find(servers, name)
	return s.Origin
}

// find returns the server named name (names compare ordinally).
func find(servers []ServerConfig, name string) (ServerConfig, bool) {
	for _, s := range servers {
		if s.Name == name {
			return s, true
		}
	}
	return ServerConfig{}, false
}
