package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
)

// servers builds the config-file source: mcp.servers.<name> read from the
// raw file, where names keep their case (viper would lower-case them, and
// its dotted paths would split a name such as "my.server"), with the
// MCP__SERVERS__<NAME>__<FIELD> variables applied over each entry field by
// field (and env variable by variable). Names compare ordinally; a
// variable's NAME is lower-cased, unless it matches the name of a file
// server ignoring case, which it then addresses.
func (l *configLoader) servers(raw map[string]any, environ []string) []mcpclient.ServerConfig {
	fields := entryFieldTypes()
	fileOrigin := "config " + l.file
	entries, refused := l.fileServers(raw, fields, fileOrigin)
	origins := map[string]string{}
	for name := range entries {
		origins[name] = fileOrigin
	}
	vars, names := l.envServers(environ, fields, entries)
	for _, name := range names {
		e, inFile := entries[name]
		switch {
		case refused[name]:
			continue
		case inFile:
			origins[name] = fileOrigin + " + environment"
		default:
			e = map[string]any{}
			entries[name] = e
			origins[name] = "environment"
		}
		for f, v := range vars[name] {
			if mapField(f) {
				merged, _ := e[f].(map[string]any)
				merged = maps.Clone(merged)
				if merged == nil {
					merged = map[string]any{}
				}
				maps.Copy(merged, v.(map[string]any))
				v = merged
			}
			e[f] = v
		}
	}

	var out []mcpclient.ServerConfig
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		data, err := json.Marshal(entries[name])
		if err != nil {
			l.errs = append(l.errs, &mcpclient.ConfigError{Origin: origins[name], Server: name, Msg: "invalid entry: " + err.Error()})
			continue
		}
		c, err := mcpclient.ParseServerEntry(name, data, mcpclient.SourceConfig, origins[name])
		if err != nil {
			l.errs = append(l.errs, err)
			continue
		}
		out = append(out, c)
	}
	mcpclient.SortServers(out)
	return out
}

// fileServers returns the config file's server entries with canonical
// field names, and the names of the entries refused outright.
func (l *configLoader) fileServers(raw map[string]any, fields map[string]reflect.Type, origin string) (map[string]map[string]any, map[string]bool) {
	entries, refused := map[string]map[string]any{}, map[string]bool{}
	mcp, _ := lookupFold(raw, "mcp").(map[string]any)
	switch servers := lookupFold(mcp, "servers").(type) {
	case nil:
	case map[string]any:
		for _, name := range slices.Sorted(maps.Keys(servers)) {
			e, msg := fileEntry(servers[name], fields)
			if msg != "" {
				l.errs = append(l.errs, &mcpclient.ConfigError{Origin: origin, Server: name, Msg: msg})
				refused[name] = true
				continue
			}
			entries[name] = e
		}
	default:
		l.errs = append(l.errs, fmt.Errorf("%s: mcp.servers must be a mapping of server names to entries", origin))
	}
	return entries, refused
}

// envServers reads the MCP__SERVERS__<NAME>__<FIELD> variables into entries
// with canonical field names (JSON values), and the server names in the
// order first seen. <NAME>__ENV__<VARIABLE> sets one env variable and wins
// over the same variable in a JSON object given as <NAME>__ENV; HEADERS
// works the same way (<NAME>__HEADERS__<HEADER>).
func (l *configLoader) envServers(environ []string, fields map[string]reflect.Type, file map[string]map[string]any) (map[string]map[string]any, []string) {
	vars := map[string]map[string]any{}
	var names []string
	for _, kv := range environ {
		k, val, _ := strings.Cut(kv, "=")
		n := len(mcpServersEnvPrefix)
		if val == "" || len(k) < n || !strings.EqualFold(k[:n], mcpServersEnvPrefix) {
			continue
		}
		parts := strings.Split(k[n:], "__")
		if len(parts) < 2 {
			l.errs = append(l.errs, &mcpclient.ConfigError{Origin: "environment",
				Msg: fmt.Sprintf("%s: expected %s<NAME>__<FIELD>", k, mcpServersEnvPrefix)})
			continue
		}
		name := envServerName(strings.ToLower(parts[0]), file)
		field, ok := canonicalField(parts[1], fields)
		refuse := func(format string, args ...any) {
			l.errs = append(l.errs, &mcpclient.ConfigError{Origin: "environment", Server: name,
				Field: cmp.Or(field, parts[1]), Msg: k + ": " + fmt.Sprintf(format, args...)})
		}
		switch {
		case !ok:
			refuse("unknown field %q", parts[1])
			continue
		case len(parts) > 2 && !mapField(field):
			refuse("unexpected %q after the field name", "__"+strings.Join(parts[2:], "__"))
			continue
		}
		var v any
		if !mapField(field) || len(parts) == 2 {
			var want string
			if v, want = envFieldValue(fields[field], val); want != "" {
				refuse("%s must be %s (got %q)", field, want, val)
				continue
			}
		}
		e := vars[name]
		if e == nil {
			e = map[string]any{}
			vars[name] = e
			names = append(names, name)
		}
		if !mapField(field) {
			e[field] = v
			continue
		}
		m, _ := e[field].(map[string]any)
		if m == nil {
			m = map[string]any{}
			e[field] = m
		}
		if len(parts) > 2 {
			m[strings.Join(parts[2:], "__")] = val
			continue
		}
		for key, x := range v.(map[string]any) {
			if _, set := m[key]; !set {
				m[key] = x
			}
		}
	}
	return vars, names
}

// mapField reports whether an entry field is an object set key by key
// from variables: env and headers.
func mapField(field string) bool { return field == "env" || field == "headers" }

// envServerName maps the lower-cased NAME of a variable to a server: a file
// server whose name equals it ignoring case, or the name itself.
func envServerName(name string, file map[string]map[string]any) string {
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

// fileEntry canonicalises the field names of one config-file entry. An
// unknown field is kept as is for mcpclient to refuse. It returns a
// message when the entry cannot be used at all.
func fileEntry(v any, fields map[string]reflect.Type) (map[string]any, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("entry must be a mapping of fields (got %s)", describeValue(v))
	}
	out := make(map[string]any, len(m))
	given := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f, ok := canonicalField(k, fields)
		if !ok {
			f = k
		}
		if prev, dup := given[f]; dup {
			return nil, fmt.Sprintf("field %s is given twice (as %q and %q)", f, prev, k)
		}
		given[f] = k
		out[f] = m[k]
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

// entryFieldTypes maps the JSON names of mcpclient.ServerEntry's fields to
// their types, so the variables follow the entry shape as it grows.
func entryFieldTypes() map[string]reflect.Type {
	t := reflect.TypeFor[mcpclient.ServerEntry]()
	m := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = f.Type
		}
	}
	return m
}

// canonicalField finds the entry field named k, ignoring case and
// underscores: TOOLPREFIX, toolprefix and tool_prefix are toolPrefix.
func canonicalField(k string, fields map[string]reflect.Type) (string, bool) {
	norm := strings.ToLower(strings.ReplaceAll(k, "_", ""))
	for name := range fields {
		if strings.ToLower(name) == norm {
			return name, true
		}
	}
	return "", false
}

// envFieldValue converts a variable's text to the JSON value of a field of
// type t, or returns what was expected.
func envFieldValue(t reflect.Type, s string) (any, string) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return s, ""
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, "true or false"
		}
		return b, ""
	case reflect.Float64, reflect.Float32, reflect.Int, reflect.Int64:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, "a number"
		}
		return f, ""
	case reflect.Slice:
		if strings.HasPrefix(strings.TrimSpace(s), "[") {
			var list []string
			if json.Unmarshal([]byte(s), &list) != nil {
				return nil, "a JSON array of strings or a comma-separated list"
			}
			return list, ""
		}
		var list []string
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		return list, ""
	case reflect.Map:
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return nil, "a JSON object (or use " + mcpServersEnvPrefix + "<NAME>__<FIELD>__<KEY>)"
		}
		return m, ""
	}
	return nil, "of type " + t.String()
}

// lookupFold returns the value of m's key equal to key ignoring case,
// preferring an exact match, then the first in sorted order.
func lookupFold(m map[string]any, key string) any {
	if v, ok := m[key]; ok {
		return v
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if strings.EqualFold(k, key) {
			return m[k]
		}
	}
	return nil
}
