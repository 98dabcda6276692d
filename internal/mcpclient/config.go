package mcpclient

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ProtocolVersions are the MCP protocol versions a server entry may pin
// with protocolVersion, oldest first.
var ProtocolVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// MaxServerNameLen is the longest server name accepted.
const MaxServerNameLen = 64

// SettingsFileName is the file in $VOLCANIC_AGENT_DIR that holds mcpServers.
const SettingsFileName = "settings.json"

// ServerEntry is the raw shape of one MCP server entry, shared by every
// source: mcpServers in settings.json, the config file's mcp.servers.<name>
// and the MCP__SERVERS__<NAME>__<FIELD> variables. Pointer fields
// distinguish "left out" (nil: the default applies) from an explicit value.
type ServerEntry struct {
	// Type is "stdio" (a command) or "http" (streamable HTTP at URL);
	// inferred from which of command and url is set.
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// URL and Headers describe a server reached over streamable HTTP.
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	// Env is applied over the filtered host environment; a null value
	// removes the variable.
	Env                   map[string]*string `json:"env"`
	Cwd                   string             `json:"cwd"`
	ToolPrefix            string             `json:"toolPrefix"`
	Enabled               *bool              `json:"enabled"`               // default true
	Parallel              bool               `json:"parallel"`              // default false
	StartupTimeoutSeconds *float64           `json:"startupTimeoutSeconds"` // default 60
	CallTimeoutSeconds    *float64           `json:"callTimeoutSeconds"`    // default 120
	IdleTimeoutSeconds    *float64           `json:"idleTimeoutSeconds"`    // default 1800; 0 = never
	StderrLevel           string             `json:"stderrLevel"`           // debug, info, warn(ing), error; default warn
	PromptSection         string             `json:"promptSection"`
	ProtocolVersion       string             `json:"protocolVersion"` // optional pin, one of ProtocolVersions
}

// ConfigError is one refused server entry or settings file. Msg is the
// complete sentence (it names the field); Field is the JSON name of the
// offending field ("" when the entry or the file as a whole is wrong), for
// callers matching with errors.As.
type ConfigError struct {
	Origin string // "settings /root/.volcanic/agent/settings.json", "config /etc/volcanicbot.yaml", …
	Server string // "" when the error is not about one server
	Field  string
	Msg    string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.Origin != "" {
		b.WriteString(e.Origin)
		b.WriteString(": ")
	}
	if e.Server != "" {
		fmt.Fprintf(&b, "server %q: ", e.Server)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ValidServerName reports whether name is an acceptable server name: 1 to
// MaxServerNameLen characters from [A-Za-z0-9._-], starting with a letter or
// a digit. Names are compared ordinally (case-sensitively) everywhere.
func ValidServerName(name string) bool {
	if name == "" || len(name) > MaxServerNameLen || !isAlnum(name[0]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// validToolPrefix reports whether p matches [A-Za-z0-9_-]*.
func validToolPrefix(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ParseStderrLevel maps a stderrLevel value (debug, info, warn, warning,
// error; case-insensitive; "information" is accepted too) to a slog level.
func ParseStderrLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, true
	case "info", "information":
		return slog.LevelInfo, true
	case "warn", "warning":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return 0, false
}

// Config applies the defaults to e and validates it as the server name of
// source src; origin describes where it came from for messages. Every
// refusal is a *ConfigError; all of them are returned, joined.
func (e ServerEntry) Config(name string, src Source, origin string) (ServerConfig, error) {
	var errs []error
	refuse := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Origin: origin, Server: name, Field: field, Msg: fmt.Sprintf(format, args...)})
	}

	switch {
	case name == "":
		refuse("name", "server name must not be empty")
	case !ValidServerName(name):
		refuse("name", "server name must be 1 to %d characters from A-Z, a-z, 0-9, '.', '_' and '-', starting with a letter or a digit", MaxServerNameLen)
	}

	c := ServerConfig{
		Name:            name,
		Source:          src,
		Origin:          origin,
		Command:         e.Command,
		Args:            slices.Clone(e.Args),
		Cwd:             e.Cwd,
		ToolPrefix:      e.ToolPrefix,
		Enabled:         e.Enabled == nil || *e.Enabled,
		Parallel:        e.Parallel,
		StartupTimeout:  DefaultStartupTimeout,
		CallTimeout:     DefaultCallTimeout,
		IdleTimeout:     DefaultIdleTimeout,
		StderrLevel:     DefaultStderrLevel,
		PromptSection:   e.PromptSection,
		ProtocolVersion: e.ProtocolVersion,
	}

	e.checkTransport(refuse)
	if e.URL != "" {
		c.URL = strings.TrimSpace(e.URL)
		if len(e.Headers) > 0 {
			c.Headers = make(map[string]string, len(e.Headers))
			for k, v := range e.Headers {
				if k == "" || strings.ContainsAny(k, " \t\r\n:") {
					refuse("headers", "headers has an invalid header name %q", k)
					continue
				}
				if strings.ContainsAny(v, "\r\n") {
					refuse("headers", "header %s must be one line", k)
					continue
				}
				c.Headers[k] = v
			}
		}
	}
	if len(e.Env) > 0 {
		c.Env = make(map[string]*string, len(e.Env))
		for k, v := range e.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				refuse("env", "env has an invalid variable name %q", k)
				continue
			}
			if v != nil {
				s := *v
				v = &s
			}
			c.Env[k] = v
		}
	}

	seconds := func(field string, v *float64, def time.Duration, zeroOK bool) time.Duration {
		if v == nil {
			return def
		}
		f := *v
		switch {
		case zeroOK && f < 0:
			refuse(field, "%s must not be negative (got %s)", field, formatSeconds(f))
		case !zeroOK && f <= 0:
			refuse(field, "%s must be positive (got %s)", field, formatSeconds(f))
		case math.IsNaN(f) || f > float64(math.MaxInt64)/float64(time.Second):
			refuse(field, "%s is too large (got %s)", field, formatSeconds(f))
		default:
			return time.Duration(f * float64(time.Second))
		}
		return def
	}
	c.StartupTimeout = seconds("startupTimeoutSeconds", e.StartupTimeoutSeconds, DefaultStartupTimeout, false)
	c.CallTimeout = seconds("callTimeoutSeconds", e.CallTimeoutSeconds, DefaultCallTimeout, false)
	c.IdleTimeout = seconds("idleTimeoutSeconds", e.IdleTimeoutSeconds, DefaultIdleTimeout, true)

	if !validToolPrefix(e.ToolPrefix) {
		refuse("toolPrefix", "toolPrefix %q may contain only A-Z, a-z, 0-9, '_' and '-'", e.ToolPrefix)
	} else if strings.HasPrefix(e.ToolPrefix, "mcp__") {
		refuse("toolPrefix", "toolPrefix %q must not start with mcp__", e.ToolPrefix)
	}

	if e.StderrLevel != "" {
		if l, ok := ParseStderrLevel(e.StderrLevel); ok {
			c.StderrLevel = l
		} else {
			refuse("stderrLevel", "stderrLevel must be debug, info, warn or error (got %q)", e.StderrLevel)
		}
	}

	if e.ProtocolVersion != "" && !slices.Contains(ProtocolVersions, e.ProtocolVersion) {
		refuse("protocolVersion", "protocolVersion must be one of %s (got %q)", strings.Join(ProtocolVersions, ", "), e.ProtocolVersion)
	}

	if len(errs) > 0 {
		return ServerConfig{}, errors.Join(errs...)
	}
	return c, nil
}

// checkTransport refuses an entry that is neither a command nor a URL,
// or mixes the fields of both.
func (e ServerEntry) checkTransport(refuse func(field, format string, args ...any)) {
	typ := strings.ToLower(strings.TrimSpace(e.Type))
	switch typ {
	case "":
		if e.URL != "" && e.Command == "" {
			typ = "http"
		} else {
			typ = "stdio"
		}
	case "stdio":
	case "http", "streamable-http", "streamablehttp":
		typ = "http"
	case "sse":
		refuse("type", "type sse (the old HTTP+SSE transport) is not supported: use the server's streamable HTTP endpoint with type http")
		return
	default:
		refuse("type", "type must be stdio or http (got %q)", e.Type)
		return
	}
	if typ == "stdio" {
		if strings.TrimSpace(e.Command) == "" {
			refuse("command", "command must not be empty")
		}
		if e.URL != "" || len(e.Headers) > 0 {
			refuse("url", "an entry has either a command (stdio) or a url (http), not both")
		}
		return
	}
	u, err := url.Parse(strings.TrimSpace(e.URL))
	switch {
	case strings.TrimSpace(e.URL) == "":
		refuse("url", "url must not be empty for type http")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		refuse("url", "url must be an http or https URL (got %q)", e.URL)
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"command", e.Command != ""}, {"args", len(e.Args) > 0}, {"env", len(e.Env) > 0}, {"cwd", e.Cwd != ""}} {
		if f.set {
			refuse(f.name, "%s applies only to a command (stdio) server, not to one at a url", f.name)
		}
	}
}

func formatSeconds(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// ParseServerEntry decodes one server entry (a JSON object), refusing
// unknown fields, then applies Config. Field names match case-insensitively,
// as encoding/json does. Errors are *ConfigError values, all of them
// joined: every unknown field, then a type error or the validation errors.
func ParseServerEntry(name string, data []byte, src Source, origin string) (ServerConfig, error) {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		got := "nothing"
		if len(t) > 0 {
			got = jsonKind(t[0])
		}
		return ServerConfig{}, &ConfigError{Origin: origin, Server: name, Msg: "entry must be an object (got " + got + ")"}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return ServerConfig{}, entryDecodeError(origin, name, data, err)
	}
	var errs []error
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, known := entryFieldKinds[canonicalEntryField(k)]; !known {
			msg := fmt.Sprintf("unknown field %q", k)
			if s := suggestEntryField(k); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			errs = append(errs, &ConfigError{Origin: origin, Server: name, Field: k, Msg: msg})
		}
	}
	var e ServerEntry
	if err := json.Unmarshal(data, &e); err != nil {
		// A field of the wrong type is left empty: validating the rest
		// would only add confusing messages.
		return ServerConfig{}, errors.Join(append(errs, entryDecodeError(origin, name, data, err))...)
	}
	c, err := e.Config(name, src, origin)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return ServerConfig{}, errors.Join(errs...)
	}
	return c, nil
}

// entryFieldKinds describes each ServerEntry field for error messages.
var entryFieldKinds = map[string]string{
	"type":                  "a string",
	"command":               "a string",
	"url":                   "a string",
	"headers":               "an object of strings",
	"args":                  "an array of strings",
	"env":                   "an object of strings (or null to remove a variable)",
	"cwd":                   "a string",
	"toolPrefix":            "a string",
	"enabled":               "true or false",
	"parallel":              "true or false",
	"startupTimeoutSeconds": "a number of seconds",
	"callTimeoutSeconds":    "a number of seconds",
	"idleTimeoutSeconds":    "a number of seconds",
	"stderrLevel":           "a string",
	"promptSection":         "a string",
	"protocolVersion":       "a string",
}

// entryFields returns the JSON names of the ServerEntry fields, sorted.
func entryFields() []string {
	names := make([]string, 0, len(entryFieldKinds))
	for k := range entryFieldKinds {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func entryDecodeError(origin, name string, data []byte, err error) error {
	ce := &ConfigError{Origin: origin, Server: name}
	var ute *json.UnmarshalTypeError
	switch {
	case errors.As(err, &ute):
		field := ute.Field
		top, _, _ := strings.Cut(field, ".")
		ce.Field = canonicalEntryField(top)
		want := entryFieldKinds[ce.Field]
		if field == "env" {
			// encoding/json does not name the map key; find it.
			if k, kind := badEnvValue(data); k != "" {
				field, want, ute.Value = "env."+k, "a string or null", kind
			}
		}
		if want == "" {
			want = "of type " + ute.Type.String()
		}
		if field == "args" {
			if raw := bytes.TrimSpace(rawEntryField(data, "args")); len(raw) > 0 && raw[0] == '[' {
				ute.Value += " in the array"
			}
		}
		if field == "" {
			ce.Msg = fmt.Sprintf("entry must be an object (got %s)", ute.Value)
		} else {
			ce.Msg = fmt.Sprintf("%s must be %s (got %s)", field, want, ute.Value)
		}
	default:
		ce.Msg = "invalid entry: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	return ce
}

// rawEntryField returns the raw value of the entry's field name, matched
// case-insensitively, or nil.
func rawEntryField(data []byte, name string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

// badEnvValue returns the first (sorted) key of the entry's env object
// whose value is neither a string nor null, and that value's JSON kind.
func badEnvValue(data []byte) (key, kind string) {
	var e struct {
		Env map[string]json.RawMessage `json:"env"`
	}
	if json.Unmarshal(data, &e) != nil {
		return "", ""
	}
	keys := make([]string, 0, len(e.Env))
	for k := range e.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := bytes.TrimSpace(e.Env[k]); len(v) > 0 && v[0] != '"' && v[0] != 'n' {
			return k, jsonKind(v[0])
		}
	}
	return "", ""
}

// canonicalEntryField returns the JSON name of the ServerEntry field that
// matches f case-insensitively, or f itself.
func canonicalEntryField(f string) string {
	for k := range entryFieldKinds {
		if strings.EqualFold(k, f) {
			return k
		}
	}
	return f
}

// suggestEntryField returns the known field closest to f (edit distance at
// most 2), or "".
func suggestEntryField(f string) string {
	best, bestD := "", 3
	for _, k := range entryFields() {
		if d := editDistance(strings.ToLower(f), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
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

// ParseSettings reads mcpServers from the root object of a settings.json,
// in file order. Other root keys are ignored; unknown fields inside an entry
// are refused. origin describes the file in messages ("settings <path>").
// Invalid JSON is reported with its line and column. Every refusal is
// returned, joined; the valid entries are returned alongside.
func ParseSettings(data []byte, origin string) ([]ServerConfig, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	syntax := func(err error) error {
		return &ConfigError{Origin: origin, Msg: describeJSONError(data, err)}
	}
	// Validate the whole document first: json.Unmarshal reports offsets
	// from the start of data, a Decoder from the start of its buffer.
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		return nil, syntax(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, syntax(err)
	}
	if tok != json.Delim('{') {
		return nil, &ConfigError{Origin: origin, Msg: "the root must be a JSON object"}
	}
	var (
		servers []ServerConfig
		errs    []error
		seen    bool
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntax(err)
		}
		if key != "mcpServers" {
			continue
		}
		if seen {
			errs = append(errs, &ConfigError{Origin: origin, Field: "mcpServers", Msg: "mcpServers appears twice"})
			continue
		}
		seen = true
		s, err := parseServerObject(raw, origin)
		servers = append(servers, s...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, syntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, syntax(err)
		}
		line, col := lineColumn(data, int(dec.InputOffset()))
		return nil, &ConfigError{Origin: origin, Msg: fmt.Sprintf("invalid JSON at line %d, column %d: data after the root object", line, col)}
	}
	return servers, errors.Join(errs...)
}

// parseServerObject parses the value of mcpServers, keeping the order of
// its keys. raw is syntactically valid JSON.
func parseServerObject(raw json.RawMessage, origin string) ([]ServerConfig, error) {
	t := bytes.TrimSpace(raw)
	if string(t) == "null" {
		return nil, nil
	}
	if t[0] != '{' {
		return nil, &ConfigError{Origin: origin, Field: "mcpServers", Msg: "mcpServers must be an object (got " + jsonKind(t[0]) + ")"}
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var (
		servers []ServerConfig
		errs    []error
		names   = map[string]bool{}
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return servers, err
		}
		name, _ := tok.(string)
		var entry json.RawMessage
		if err := dec.Decode(&entry); err != nil {
			return servers, err
		}
		if names[name] {
			errs = append(errs, &ConfigError{Origin: origin, Server: name, Msg: "the server is defined twice"})
			continue
		}
		names[name] = true
		c, err := ParseServerEntry(name, entry, SourceSettings, origin)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		servers = append(servers, c)
	}
	return servers, errors.Join(errs...)
}

// describeJSONError turns a decoding error into "invalid JSON at line L,
// column C: …" when it carries an offset into data.
func describeJSONError(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if se.Offset >= int64(len(data)) && strings.Contains(se.Error(), "unexpected end") {
			line, col := lineColumn(data, len(data))
			return fmt.Sprintf("invalid JSON at line %d, column %d: unexpected end of file", line, col)
		}
		// Offset counts the bytes read, the offending one included.
		line, col := lineColumn(data, int(max(se.Offset-1, 0)))
		return fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, se.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line, col := lineColumn(data, len(data))
		return fmt.Sprintf("invalid JSON at line %d, column %d: unexpected end of file", line, col)
	}
	return "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

// lineColumn returns the 1-based line and column (in bytes) of the byte at
// index i of data (i == len(data) is the end of the file).
func lineColumn(data []byte, i int) (line, col int) {
	i = min(max(i, 0), len(data))
	before := data[:i]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = i - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// LoadSettingsFile reads mcpServers from dir/settings.json. A missing file
// or directory means no servers and no error.
func LoadSettingsFile(dir string) ([]ServerConfig, error) {
	path := filepath.Join(dir, SettingsFileName)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read settings: %w", err)
	}
	return ParseSettings(data, "settings "+path)
}

// MergeServers merges sources in order (config, preset, settings): the first
// source wins a name, compared ordinally. A shadowed server is logged at
// warn with both origins. Within each source the order is kept. logger may
// be nil.
func MergeServers(logger *slog.Logger, sources ...[]ServerConfig) []ServerConfig {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var (
		out    []ServerConfig
		winner = map[string]string{} // name → origin
	)
	for _, src := range sources {
		for _, c := range src {
			if o, ok := winner[c.Name]; ok {
				logger.Warn("MCP server shadowed by an earlier source; ignoring it",
					"server", c.Name, "used", o, "ignored", c.Origin)
				continue
			}
			winner[c.Name] = c.Origin
			out = append(out, c)
		}
	}
	return out
}

// SortServers sorts by name, case-insensitively, then ordinally, so
// "B", "a", "A" become "A", "a", "B".
func SortServers(servers []ServerConfig) {
	slices.SortStableFunc(servers, func(a, b ServerConfig) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Digest is the catalogue cache key of c: a hex SHA-256 of the name and the
// unexpanded command, args, env (sorted by name, null distinct from ""),
// cwd, tool prefix and pinned protocol version. ${env:…} values are
// unexpanded here, so host secrets never enter it; ${workspace} is
// unexpanded too, so every chat shares one key.
func (c ServerConfig) Digest() string {
	type kv struct {
		K string  `json:"k"`
		V *string `json:"v"`
	}
	env := make([]kv, 0, len(c.Env))
	for k, v := range c.Env {
		env = append(env, kv{k, v})
	}
	slices.SortFunc(env, func(a, b kv) int { return strings.Compare(a.K, b.K) })
	args := c.Args
	if args == nil {
		args = []string{}
	}
	headers := make([]kv, 0, len(c.Headers))
	for k, v := range c.Headers {
		headers = append(headers, kv{k, &v})
	}
	slices.SortFunc(headers, func(a, b kv) int { return strings.Compare(a.K, b.K) })
	key := struct {
		V               int      `json:"v"`
		Name            string   `json:"name"`
		Command         string   `json:"command"`
		Args            []string `json:"args"`
		Env             []kv     `json:"env"`
		Cwd             string   `json:"cwd"`
		ToolPrefix      string   `json:"toolPrefix"`
		ProtocolVersion string   `json:"protocolVersion"`
		URL             string   `json:"url,omitempty"`
		Headers         []kv     `json:"headers,omitempty"`
	}{1, c.Name, c.Command, args, env, c.Cwd, c.ToolPrefix, c.ProtocolVersion, c.URL, headers}
	b, err := json.Marshal(key)
	if err != nil { // cannot happen: strings only
		panic("mcpclient: digest: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
