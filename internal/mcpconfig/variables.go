package mcpconfig

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// EnvPrefix starts the per-server variables:
// MCP__SERVERS__<NAME>__<FIELD>, and MCP__SERVERS__<NAME>__ENV__<VARIABLE>
// or …__HEADERS__<HEADER> for one key of env or headers.
const EnvPrefix = "MCP__SERVERS__"

// FromConfigFile builds the config-file source: section is the decoded
// value of the file's mcp.servers (nil when the file has none), where names
// keep their case, with the MCP__SERVERS__<NAME>__<FIELD> variables of
// environ ("NAME=value" entries) applied over each entry field by field
// (and env variable by variable). fileOrigin names the file in messages
// ("config /etc/volcanicbot.yaml"). A variable's NAME is lower-cased, unless
// it matches the name of a file server ignoring case, which it then
// addresses. The servers come sorted (SortServers); every refusal is
// returned, joined.
func FromConfigFile(section any, environ []string, fileOrigin string) ([]ServerConfig, error) {
	l := &fileLoader{origin: fileOrigin}
	entries, refused := l.fileEntries(section)
	origins := map[string]string{}
	for name := range entries {
		origins[name] = fileOrigin
	}
	vars, names := l.variables(environ, entries)
	for _, name := range names {
		e, inFile := entries[name]
		switch {
		case refused[name]:
			continue
		case inFile:
			origins[name] = fileOrigin + " + environment"
		default:
			e = rawEntry{}
			entries[name] = e
			origins[name] = "environment"
		}
		for target, v := range vars[name] {
			if old, ok := e[target]; ok && mapKind(target) {
				merged, _ := old.value.(map[string]any)
				merged = maps.Clone(merged)
				if merged == nil {
					merged = map[string]any{}
				}
				maps.Copy(merged, v.value.(map[string]any))
				v.value = merged
				v.key = old.key
			}
			e[target] = v
		}
	}

	var out []ServerConfig
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		c, err := entries[name].parse(name, origins[name])
		if err != nil {
			l.errs = append(l.errs, err)
			continue
		}
		out = append(out, c)
	}
	SortServers(out)
	return out, errors.Join(l.errs...)
}

// rawEntry is one entry on its way to ParseEntry: each field under its
// target name (ours; unknown fields under their own key) with the key as
// given.
type rawEntry map[string]rawValue

type rawValue struct {
	key   string
	value any
}

func (e rawEntry) parse(name, origin string) (ServerConfig, error) {
	obj := make(map[string]any, len(e))
	for _, v := range e {
		obj[v.key] = v.value
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return ServerConfig{}, &ConfigError{Origin: origin, Server: name, Msg: "invalid entry: " + err.Error()}
	}
	return ParseEntry(name, data, SourceConfig, origin)
}

// mapKind reports whether the field named target is an object set key by
// key from variables: env and headers.
func mapKind(target string) bool { return target == "env" || target == "headers" }

type fileLoader struct {
	origin string
	errs   []error
}

// fileEntries returns the config file's entries by name, and the names of
// the entries refused outright.
func (l *fileLoader) fileEntries(section any) (map[string]rawEntry, map[string]bool) {
	entries, refused := map[string]rawEntry{}, map[string]bool{}
	switch servers := section.(type) {
	case nil:
	case map[string]any:
		for _, name := range slices.Sorted(maps.Keys(servers)) {
			e, msg := fileEntry(servers[name])
			if msg != "" {
				l.errs = append(l.errs, &ConfigError{Origin: l.origin, Server: name, Msg: msg})
				refused[name] = true
				continue
			}
			entries[name] = e
		}
	default:
		l.errs = append(l.errs, &ConfigError{Origin: l.origin, Field: "mcp.servers",
			Msg: "mcp.servers must be a mapping of server names to entries"})
	}
	return entries, refused
}

// fileEntry files one config-file entry's fields under their targets. It
// returns a message when the entry cannot be used at all.
func fileEntry(v any) (rawEntry, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("entry must be a mapping of fields (got %s)", describeValue(v))
	}
	out := make(rawEntry, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		target := k
		if f, ok := lookupField(k); ok {
			target = cmp.Or(f.alias, f.name)
		}
		if prev, dup := out[target]; dup {
			return nil, fmt.Sprintf("field %s is given twice (as %q and %q)", target, prev.key, k)
		}
		out[target] = rawValue{key: k, value: m[k]}
	}
	return out, ""
}

func describeValue(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// variables reads the MCP__SERVERS__<NAME>__<FIELD> variables into entries
// (JSON values under their targets), and the server names in the order
// first seen. <NAME>__ENV__<VARIABLE> sets one env variable and wins over
// the same variable in a JSON object given as <NAME>__ENV; HEADERS works
// the same way (<NAME>__HEADERS__<HEADER>). An empty variable is unset.
func (l *fileLoader) variables(environ []string, file map[string]rawEntry) (map[string]rawEntry, []string) {
	vars := map[string]rawEntry{}
	var names []string
	for _, kv := range environ {
		k, val, _ := strings.Cut(kv, "=")
		n := len(EnvPrefix)
		if val == "" || len(k) < n || !strings.EqualFold(k[:n], EnvPrefix) {
			continue
		}
		parts := strings.Split(k[n:], "__")
		if len(parts) < 2 {
			l.errs = append(l.errs, &ConfigError{Origin: "environment",
				Msg: fmt.Sprintf("%s: expected %s<NAME>__<FIELD>", k, EnvPrefix)})
			continue
		}
		name := variableServer(strings.ToLower(parts[0]), file)
		f, ok := lookupField(parts[1])
		refuse := func(field, format string, args ...any) {
			l.errs = append(l.errs, &ConfigError{Origin: "environment", Server: name,
				Field: field, Msg: k + ": " + fmt.Sprintf(format, args...)})
		}
		if !ok {
			msg := fmt.Sprintf("unknown field %q", parts[1])
			if s := suggestField(parts[1]); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			refuse(parts[1], "%s", msg)
			continue
		}
		target := cmp.Or(f.alias, f.name)
		if len(parts) > 2 && !mapKind(target) {
			refuse(target, "unexpected %q after the field name", "__"+strings.Join(parts[2:], "__"))
			continue
		}
		e := vars[name]
		if e == nil {
			e = rawEntry{}
			vars[name] = e
			names = append(names, name)
		}
		if !mapKind(target) {
			v, want := f.textValue(val)
			if want != "" {
				refuse(target, "%s must be %s (got %q)", f.name, want, val)
				continue
			}
			e[target] = rawValue{key: f.name, value: v}
			continue
		}
		cur, _ := e[target].value.(map[string]any)
		if cur == nil {
			cur = map[string]any{}
			e[target] = rawValue{key: target, value: cur}
		}
		if len(parts) > 2 {
			cur[strings.Join(parts[2:], "__")] = val
			continue
		}
		v, want := f.textValue(val)
		if want != "" {
			refuse(target, "%s must be %s (got %q)", f.name, want, val)
			continue
		}
		for key, x := range v.(map[string]any) {
			if _, set := cur[key]; !set { // a key's own variable wins
				cur[key] = x
			}
		}
	}
	return vars, names
}

// variableServer maps the lower-cased NAME of a variable to a server: a
// file server whose name equals it ignoring case, or the name itself.
func variableServer(name string, file map[string]rawEntry) string {
	if _, ok := file[name]; ok {
		return name
	}
	var match []string
	for n := range file {
		if strings.EqualFold(n, name) {
			match = append(match, n)
		}
	}
	if len(match) == 1 {
		return match[0]
	}
	return name
}
