package mcpconfig

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The entry fields, in one table for every source: settings.json and the
// other clients' files (JSON), the config file (YAML, JSON or TOML) and the
// MCP__SERVERS__<NAME>__<FIELD> variables (text). A field is found by its
// name ignoring case, '_' and '-' (canonicalName), so toolPrefix,
// TOOLPREFIX, tool_prefix and tool-prefix are one field everywhere.

// fieldKind is the type of a field's value.
type fieldKind uint8

const (
	kindString  fieldKind = iota
	kindBool              // true or false
	kindSeconds           // a number of seconds
	kindStrings           // an array of strings
	kindHeaders           // an object of strings
	kindEnv               // an object of strings or null
	kindCount             // a whole number
)

// want is how a message names what a field of kind k takes.
func (k fieldKind) want() string {
	switch k {
	case kindBool:
		return "true or false"
	case kindSeconds:
		return "a number of seconds"
	case kindStrings:
		return "an array of strings"
	case kindHeaders:
		return "an object of strings"
	case kindEnv:
		return "an object of strings (or null to remove a variable)"
	case kindCount:
		return "a whole number"
	}
	return "a string"
}

// field is one entry field. A field of another client (from is set) either
// means one of ours (alias) or is kept for a later feature with a warning.
type field struct {
	name string // as our docs spell it
	kind fieldKind
	// alias is the name of our field this one is another client's
	// spelling of ("serverUrl" → "url"): the two cannot both be given.
	alias string
	// from names the client the field comes from, for messages.
	from string
	// warn, when set, is the warning an entry that uses the field gets.
	warn string
	set  func(e *ServerEntry, v any)
}

// fields is the table. Our own fields first, then the other clients'.
var fields = []field{
	{name: "type", kind: kindString, set: func(e *ServerEntry, v any) { e.Type = v.(string) }},
	{name: "command", kind: kindString, set: func(e *ServerEntry, v any) { e.Command = v.(string) }},
	{name: "args", kind: kindStrings, set: func(e *ServerEntry, v any) { e.Args = v.([]string) }},
	{name: "url", kind: kindString, set: func(e *ServerEntry, v any) { e.URL = v.(string) }},
	{name: "headers", kind: kindHeaders, set: func(e *ServerEntry, v any) { e.Headers = v.(map[string]string) }},
	{name: "env", kind: kindEnv, set: func(e *ServerEntry, v any) { e.Env = v.(map[string]*string) }},
	{name: "cwd", kind: kindString, set: func(e *ServerEntry, v any) { e.Cwd = v.(string) }},
	{name: "toolPrefix", kind: kindString, set: func(e *ServerEntry, v any) { e.ToolPrefix = v.(string) }},
	{name: "enabled", kind: kindBool, set: func(e *ServerEntry, v any) { b := v.(bool); e.Enabled = &b }},
	{name: "parallel", kind: kindBool, set: func(e *ServerEntry, v any) { e.Parallel = v.(bool) }},
	{name: "startupTimeoutSeconds", kind: kindSeconds, set: func(e *ServerEntry, v any) { f := v.(float64); e.StartupTimeoutSeconds = &f }},
	{name: "callTimeoutSeconds", kind: kindSeconds, set: func(e *ServerEntry, v any) { f := v.(float64); e.CallTimeoutSeconds = &f }},
	{name: "idleTimeoutSeconds", kind: kindSeconds, set: func(e *ServerEntry, v any) { f := v.(float64); e.IdleTimeoutSeconds = &f }},
	{name: "stderrLevel", kind: kindString, set: func(e *ServerEntry, v any) { e.StderrLevel = v.(string) }},
	{name: "promptSection", kind: kindString, set: func(e *ServerEntry, v any) { e.PromptSection = v.(string) }},
	{name: "protocolVersion", kind: kindString, set: func(e *ServerEntry, v any) { e.ProtocolVersion = v.(string) }},
	{name: "maxLive", kind: kindCount, set: func(e *ServerEntry, v any) { n := v.(int); e.MaxLive = &n }},
	{name: "memoryMiB", kind: kindCount, set: func(e *ServerEntry, v any) { n := v.(int); e.MemoryMiB = &n }},
	{name: "alwaysLoad", kind: kindStrings, set: func(e *ServerEntry, v any) { e.AlwaysLoad = v.([]string) }},
	{name: "deferLoading", kind: kindBool, set: func(e *ServerEntry, v any) { b := v.(bool); e.DeferLoading = &b }},
	{name: "includeTools", kind: kindStrings, set: func(e *ServerEntry, v any) { e.IncludeTools = v.([]string) }},
	{name: "excludeTools", kind: kindStrings, set: func(e *ServerEntry, v any) { e.ExcludeTools = v.([]string) }},
	{name: "roots", kind: kindBool, set: func(e *ServerEntry, v any) { b := v.(bool); e.Roots = &b }},
	{name: "sampling", kind: kindBool, set: func(e *ServerEntry, v any) { e.Sampling = v.(bool) }},
	{name: "oauthClientId", kind: kindString, set: func(e *ServerEntry, v any) { e.OAuthClientID = v.(string) }},
	{name: "oauthClientSecret", kind: kindString, set: func(e *ServerEntry, v any) { e.OAuthClientSecret = v.(string) }},
	{name: "oauthClientMetadataUrl", kind: kindString, set: func(e *ServerEntry, v any) { e.OAuthClientMetadataURL = v.(string) }},
	{name: "oauthScopes", kind: kindStrings, set: func(e *ServerEntry, v any) { e.OAuthScopes = v.([]string) }},
	{name: "approval", kind: kindString, set: func(e *ServerEntry, v any) { e.Approval = v.(string) }},
	{name: "autoApprove", kind: kindStrings, set: func(e *ServerEntry, v any) { e.AutoApprove = v.([]string) }},
	{name: "alwaysAsk", kind: kindStrings, set: func(e *ServerEntry, v any) { e.AlwaysAsk = v.([]string) }},

	// Other clients' fields.
	{name: "disabled", kind: kindBool, from: "Cline, Roo Code, Windsurf",
		set: func(e *ServerEntry, v any) { b := v.(bool); e.Disabled = &b }},
	{name: "timeout", kind: kindSeconds, alias: "callTimeoutSeconds", from: "Cline, Roo Code",
		set: func(e *ServerEntry, v any) { f := v.(float64); e.CallTimeoutSeconds = &f }},
	{name: "serverUrl", kind: kindString, alias: "url", from: "Windsurf",
		set: func(e *ServerEntry, v any) { e.URL = v.(string) }},
	{name: "httpUrl", kind: kindString, alias: "url", from: "Gemini CLI",
		set: func(e *ServerEntry, v any) { e.URL = v.(string) }},
	{name: "transportType", kind: kindString, alias: "type", from: "Cline",
		set: func(e *ServerEntry, v any) { e.Type = v.(string) }},
	{name: "alwaysAllow", kind: kindStrings, alias: "autoApprove", from: "Roo Code",
		set: func(e *ServerEntry, v any) { e.AutoApprove = v.([]string) }},
	{name: "disabledTools", kind: kindStrings, from: "Roo Code, Windsurf",
		set: func(e *ServerEntry, v any) { e.DisabledTools = v.([]string) }},
	{name: "envFile", kind: kindString, from: "VS Code, Cursor",
		warn: "envFile is not read: put the variables the server needs in env",
		set:  func(e *ServerEntry, v any) {}},
}

// canonicalName is the form fields are matched in: lower case, without '_'
// and '-'.
func canonicalName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '-':
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// lookupField finds the field named name (ignoring case, '_' and '-').
func lookupField(name string) (*field, bool) {
	c := canonicalName(name)
	for i := range fields {
		if canonicalName(fields[i].name) == c {
			return &fields[i], true
		}
	}
	return nil, false
}

// FieldNames returns the names of every entry field, ours and the other
// clients', sorted (docs/configuration.md documents them all).
func FieldNames() []string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	slices.Sort(names)
	return names
}

// suggestField returns the field closest to name (edit distance at most 2
// on the canonical forms), or "".
func suggestField(name string) string {
	best, bestD := "", 3
	for _, f := range fields {
		if d := editDistance(canonicalName(name), canonicalName(f.name)); d < bestD {
			best, bestD = f.name, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// decodeValue decodes a field's JSON value into its Go value: string, bool,
// float64, []string, map[string]string or map[string]*string. what is the
// message when it does not fit (the field's name and what it takes).
func (f *field) decodeValue(given string, raw json.RawMessage) (any, string) {
	fail := func(got string) (any, string) {
		return nil, fmt.Sprintf("%s must be %s (got %s)", given, f.kind.want(), got)
	}
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 {
		return fail("nothing")
	}
	kind := jsonKind(raw[0])
	switch f.kind {
	case kindString:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fail(kind)
		}
		return s, ""
	case kindBool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return fail(kind)
		}
		return b, ""
	case kindSeconds:
		var n float64
		if json.Unmarshal(raw, &n) != nil {
			return fail(kind)
		}
		return n, ""
	case kindCount:
		var n float64
		if json.Unmarshal(raw, &n) != nil || n != float64(int(n)) {
			return fail(kind)
		}
		return int(n), ""
	case kindStrings:
		out, got := decodeStrings(raw, kind)
		if got != "" {
			return fail(got)
		}
		return out, ""
	case kindHeaders, kindEnv:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return fail(kind)
		}
		return f.decodeMap(given, m)
	}
	return fail(kind)
}

// decodeStrings decodes an array of strings (raw, a JSON value of kind),
// or says what it got instead.
func decodeStrings(raw json.RawMessage, kind string) ([]string, string) {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil, kind
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		var s string
		if json.Unmarshal(e, &s) != nil {
			return nil, jsonKind(strings.TrimSpace(string(e))[0]) + " in the array"
		}
		out = append(out, s)
	}
	return out, ""
}

// decodeMap decodes the members of a headers or env object into
// map[string]string or map[string]*string (env's null: nil), or says
// which member does not fit.
func (f *field) decodeMap(given string, m map[string]json.RawMessage) (any, string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	headers, env := map[string]string{}, map[string]*string{}
	for _, k := range keys {
		v := strings.TrimSpace(string(m[k]))
		if f.kind == kindEnv && v == "null" {
			env[k] = nil
			continue
		}
		var s string
		if json.Unmarshal(m[k], &s) != nil {
			if f.kind == kindEnv {
				return nil, fmt.Sprintf("%s.%s must be a string or null (got %s)", given, k, jsonKind(v[0]))
			}
			return nil, fmt.Sprintf("%s.%s must be a string (got %s)", given, k, jsonKind(v[0]))
		}
		headers[k], env[k] = s, &s
	}
	if f.kind == kindEnv {
		return env, ""
	}
	return headers, ""
}

// textValue converts a variable's text into the JSON value of field f, or
// says what was expected.
func (f *field) textValue(s string) (any, string) {
	switch f.kind {
	case kindString:
		return s, ""
	case kindBool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, "true or false"
		}
		return b, ""
	case kindSeconds:
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, "a number"
		}
		return n, ""
	case kindCount:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, "a whole number"
		}
		return n, ""
	case kindStrings:
		if strings.HasPrefix(strings.TrimSpace(s), "[") {
			var list []string
			if json.Unmarshal([]byte(s), &list) != nil {
				return nil, "a JSON array of strings or a comma-separated list"
			}
			return list, ""
		}
		list := []string{}
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		return list, ""
	default: // kindHeaders, kindEnv
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return nil, "a JSON object (or use " + EnvPrefix + "<NAME>__<FIELD>__<KEY>)"
		}
		return m, ""
	}
}

func jsonKind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
