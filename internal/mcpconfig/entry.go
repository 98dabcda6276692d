package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ServerEntry is one MCP server entry as written, in any source. Pointer
// fields distinguish "left out" (nil: the default applies) from an
// explicit value.
type ServerEntry struct {
	// Type is "stdio" (a command) or "http" (streamable HTTP at URL);
	// inferred from which of command and url is set.
	Type    string
	Command string
	Args    []string
	URL     string
	Headers map[string]string
	// Env is applied over the filtered host environment; a nil value
	// removes the variable.
	Env                   map[string]*string
	Cwd                   string
	ToolPrefix            string
	Enabled               *bool // default true
	Disabled              *bool // another client's spelling of !enabled
	Parallel              bool
	StartupTimeoutSeconds *float64 // default 60, 300 for npx and the like
	CallTimeoutSeconds    *float64 // default 120
	IdleTimeoutSeconds    *float64 // default 1800; 0 = never
	StderrLevel           string   // debug, info, warn(ing), error; default debug
	PromptSection         string
	ProtocolVersion       string   // optional pin, one of ProtocolVersions
	Approval              string   // never (default), writes or always
	AutoApprove           []string // tool globs that run without asking (Cline's autoApprove, Roo Code's alwaysAllow)
	AlwaysAsk             []string // tool globs asked about every time
	DisabledTools         []string
	MaxLive               *int // default from the memory budget (mcpclient.SizeCeilings)
	MemoryMiB             *int // what one process takes, for the budget; default mcpclient's assumption
	// AlwaysLoad names tools offered with their schemas even when tool
	// search defers the server's others (the server's names or the
	// exposed ones).
	AlwaysLoad []string
	// DeferLoading overrides the tool-search rule for the server: true
	// defers its tools (but AlwaysLoad), false never does; nil: the rule.
	DeferLoading *bool
	// IncludeTools and ExcludeTools are globs over the server's tool names
	// (* any run, ? one character): only the tools some include matches
	// (all without one) and no exclude matches are offered.
	IncludeTools, ExcludeTools []string
	// Roots declares the chat's workspace as the client's one root (nil:
	// for a command yes, for a url no).
	Roots *bool
	// Sampling lets the server ask the bot's model (sampling/createMessage).
	Sampling bool
	// OAuth* identify the bot to a url server's authorization server:
	// pre-registered credentials, or the URL of a client ID metadata
	// document; the scopes asked for when the server names none.
	OAuthClientID, OAuthClientSecret, OAuthClientMetadataURL string
	OAuthScopes                                              []string

	warnings []string
}

// ParseEntry decodes one entry (a JSON object) of server name from source
// src, then applies Config. Field names match ignoring case, '_' and '-';
// another client's field maps onto ours or is kept with a warning; an
// unknown field is refused, with the closest known name as a hint. Errors
// are *ConfigError values, all of them joined.
func ParseEntry(name string, data []byte, src Source, origin string) (ServerConfig, error) {
	refusal := func(field, msg string) error {
		return &ConfigError{Origin: origin, Server: name, Field: field, Msg: msg}
	}
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		got := "nothing"
		if len(t) > 0 {
			got = jsonKind(t[0])
		}
		return ServerConfig{}, refusal("", "entry must be an object (got "+got+")")
	}
	members, err := objectMembers(t)
	if err != nil {
		return ServerConfig{}, refusal("", "invalid entry: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	var (
		e        ServerEntry
		errs     []error
		typeErrs bool
		given    = map[string]string{} // our field → the key that set it
	)
	for _, m := range members {
		f, ok := lookupField(m.key)
		if !ok {
			msg := fmt.Sprintf("unknown field %q", m.key)
			if s := suggestField(m.key); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			errs = append(errs, refusal(m.key, msg))
			continue
		}
		target := f.name
		if f.alias != "" {
			target = f.alias
		}
		if prev, dup := given[target]; dup {
			errs = append(errs, refusal(target, fmt.Sprintf("field %s is given twice (as %q and %q)", target, prev, m.key)))
			continue
		}
		given[target] = m.key
		if string(bytes.TrimSpace(m.value)) == "null" {
			continue // left out
		}
		v, msg := f.decodeValue(f.name, m.value)
		if msg != "" {
			errs = append(errs, refusal(f.name, msg))
			typeErrs = true
			continue
		}
		f.set(&e, v)
		if f.warn != "" {
			e.warnings = append(e.warnings, f.warn+" ("+f.name+" is "+f.from+"'s)")
		}
	}
	if typeErrs {
		// A field of the wrong type is left empty: validating the rest
		// would only add confusing messages.
		return ServerConfig{}, errors.Join(errs...)
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

type member struct {
	key   string
	value json.RawMessage
}

// objectMembers returns the members of the JSON object data in order.
func objectMembers(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// refuseFunc records one refusal of an entry's field; the message is
// format applied to args.
type refuseFunc func(field, format string, args ...any)

// Config applies the defaults to e and validates it as the server name of
// source src; origin describes where it came from for messages. Every
// refusal is a *ConfigError; all of them are returned, joined, in the
// order of the steps below.
func (e ServerEntry) Config(name string, src Source, origin string) (ServerConfig, error) {
	var errs []error
	refuse := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Origin: origin, Server: name, Field: field, Msg: fmt.Sprintf(format, args...)})
	}

	c := e.baseConfig(name, src, origin, refuse)
	e.applyOAuth(&c, refuse)
	e.checkTransport(refuse)
	e.checkReferences(refuse)
	e.applyRoots(&c)
	e.applyHeaders(&c, refuse)
	e.applyEnv(&c, refuse)
	e.applyLimits(&c, refuse)
	e.applyTools(&c, refuse)
	e.applyLogging(&c, refuse)

	if len(errs) > 0 {
		return ServerConfig{}, errors.Join(errs...)
	}
	return c, nil
}

// baseConfig checks the server's name and its enabled/disabled pair, and
// returns the configuration of the fields taken over as written, with
// the entry's warnings (and the one about a name kept as a label).
func (e ServerEntry) baseConfig(name string, src Source, origin string, refuse refuseFunc) ServerConfig {
	internal, label := name, ""
	if !ValidServerName(name) {
		if why := validLabel(name); why != "" {
			refuse("name", "%s", why)
		}
		internal, label = SafeServerName(name), name
	}

	enabled := e.Enabled == nil || *e.Enabled
	if e.Disabled != nil {
		if e.Enabled != nil && *e.Enabled == *e.Disabled {
			refuse("disabled", "enabled and disabled contradict each other: give one of them")
		}
		enabled = !*e.Disabled
	}
	c := ServerConfig{
		Name:            internal,
		Label:           label,
		Source:          src,
		Origin:          origin,
		Command:         e.Command,
		Args:            slices.Clone(e.Args),
		Cwd:             e.Cwd,
		ToolPrefix:      e.ToolPrefix,
		Enabled:         enabled,
		Parallel:        e.Parallel,
		StderrLevel:     DefaultStderrLevel,
		PromptSection:   e.PromptSection,
		ProtocolVersion: e.ProtocolVersion,
		DeferLoading:    clonePtr(e.DeferLoading),
		DisabledTools:   slices.Clone(e.DisabledTools),
		IncludeTools:    slices.Clone(e.IncludeTools),
		ExcludeTools:    slices.Clone(e.ExcludeTools),
		Sampling:        e.Sampling,
		Warnings:        slices.Clone(e.warnings),
	}
	if label != "" {
		c.Warnings = append(c.Warnings, labelWarning(label, internal))
	}
	return c
}

// applyOAuth takes over the oauth fields of a url server and refuses them
// on a command, and a client metadata URL that is not https.
func (e ServerEntry) applyOAuth(c *ServerConfig, refuse refuseFunc) {
	if e.URL != "" {
		c.OAuth = OAuthConfig{ClientID: e.OAuthClientID, ClientSecret: e.OAuthClientSecret,
			ClientMetadataURL: e.OAuthClientMetadataURL, Scopes: slices.Clone(e.OAuthScopes)}
	} else if e.OAuthClientID != "" || e.OAuthClientSecret != "" || e.OAuthClientMetadataURL != "" || len(e.OAuthScopes) > 0 {
		refuse("oauthClientId", "the oauth fields are for a server at a url; a command authenticates by its own means")
	}
	if u := e.OAuthClientMetadataURL; u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "${") {
		refuse("oauthClientMetadataUrl", "oauthClientMetadataUrl must be an https URL (the client's metadata document)")
	}
}

// checkReferences refuses a field holding a reference that is never
// closed: it would reach the server as text (${A:-${workspace}/x without
// its last '}'). The value is not quoted: it may hold a secret.
func (e ServerEntry) checkReferences(refuse refuseFunc) {
	e.eachField(func(field, v string) {
		if why := CheckReferences(v); why != "" {
			refuse(field, "%s: %s", field, why)
		}
	})
}

// applyRoots decides whether the chat's workspace is declared as the
// client's root. A command runs in the workspace, and is told so unless
// its args name directories of its own (roots.go); a server elsewhere
// cannot see it.
func (e ServerEntry) applyRoots(c *ServerConfig) {
	c.Roots = defaultRoots(e)
	if e.Roots != nil {
		c.Roots = *e.Roots
	}
	if w := rootsWarning(e, c.Roots); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
}

// applyHeaders takes over the url and the headers of a url server,
// refusing a header whose name is invalid or whose value spans lines.
func (e ServerEntry) applyHeaders(c *ServerConfig, refuse refuseFunc) {
	if e.URL == "" {
		return
	}
	c.URL = strings.TrimSpace(e.URL)
	if len(e.Headers) == 0 {
		return
	}
	c.Headers = make(map[string]string, len(e.Headers))
	for _, k := range sortedKeys(e.Headers) {
		v := e.Headers[k]
		switch {
		case k == "" || strings.ContainsAny(k, " \t\r\n:"):
			refuse("headers", "headers has an invalid header name %q", k)
		case strings.ContainsAny(v, "\r\n"):
			refuse("headers", "header %s must be one line", k)
		default:
			c.Headers[k] = v
		}
	}
}

// applyEnv copies the environment overrides, refusing an invalid
// variable name.
func (e ServerEntry) applyEnv(c *ServerConfig, refuse refuseFunc) {
	if len(e.Env) == 0 {
		return
	}
	c.Env = make(map[string]*string, len(e.Env))
	for _, k := range sortedKeys(e.Env) {
		v := e.Env[k]
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

// applyLimits sets the three timeouts (an installer such as npx gets the
// longer startup default) and the process limits maxLive and memoryMiB.
func (e ServerEntry) applyLimits(c *ServerConfig, refuse refuseFunc) {
	startup := DefaultStartupTimeout
	if c.Command != "" && (ServerConfig{Command: c.Command, Args: c.Args}).Installer() {
		startup = DefaultInstallerStartupTimeout
	}
	c.StartupTimeout = seconds(refuse, "startupTimeoutSeconds", e.StartupTimeoutSeconds, startup, false)
	c.CallTimeout = seconds(refuse, "callTimeoutSeconds", e.CallTimeoutSeconds, DefaultCallTimeout, false)
	c.IdleTimeout = seconds(refuse, "idleTimeoutSeconds", e.IdleTimeoutSeconds, DefaultIdleTimeout, true)
	if e.MaxLive != nil {
		if *e.MaxLive < 1 {
			refuse("maxLive", "maxLive must be at least 1 (got %d): it is how many processes of the server may run at once, across chats", *e.MaxLive)
		}
		c.MaxLive = *e.MaxLive
	}
	if e.MemoryMiB != nil {
		if *e.MemoryMiB < 1 {
			refuse("memoryMiB", "memoryMiB must be at least 1 (got %d): it is how much memory one process of the server takes, in MiB", *e.MemoryMiB)
		} else {
			c.Memory.PerLive = int64(*e.MemoryMiB) << 20
		}
	}
}

// seconds returns the duration of v seconds, or def when v is nil or
// refused: zeroOK allows 0 (never), nothing allows a negative, NaN or a
// value past time.Duration's range.
func seconds(refuse refuseFunc, field string, v *float64, def time.Duration, zeroOK bool) time.Duration {
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

// applyTools checks what decides which tools the model sees and how they
// run: alwaysLoad (trimmed, each once), the include and exclude patterns,
// the approval fields and the tool prefix.
func (e ServerEntry) applyTools(c *ServerConfig, refuse refuseFunc) {
	for _, n := range e.AlwaysLoad {
		if n = strings.TrimSpace(n); n == "" {
			refuse("alwaysLoad", "alwaysLoad must name tools (got an empty name)")
			continue
		}
		if !slices.Contains(c.AlwaysLoad, n) {
			c.AlwaysLoad = append(c.AlwaysLoad, n)
		}
	}

	for _, f := range []struct {
		name     string
		patterns []string
	}{{"includeTools", e.IncludeTools}, {"excludeTools", e.ExcludeTools}} {
		for _, p := range f.patterns {
			if strings.TrimSpace(p) == "" {
				refuse(f.name, "%s must hold tool names or patterns (got an empty one)", f.name)
			}
		}
	}

	c.Approval, c.AutoApprove, c.AlwaysAsk = e.approval(refuse)

	if !validToolPrefix(e.ToolPrefix) {
		refuse("toolPrefix", "toolPrefix %q may contain only A-Z, a-z, 0-9, '_' and '-'", e.ToolPrefix)
	} else if strings.HasPrefix(e.ToolPrefix, "mcp__") {
		refuse("toolPrefix", "toolPrefix %q must not start with mcp__", e.ToolPrefix)
	}
}

// applyLogging sets the level the server's stderr is logged at and
// checks the pinned protocol version.
func (e ServerEntry) applyLogging(c *ServerConfig, refuse refuseFunc) {
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
}

// checkTransport refuses an entry that is neither a command nor a URL,
// or mixes the fields of both.
func (e ServerEntry) checkTransport(refuse refuseFunc) {
	typ := strings.ToLower(strings.TrimSpace(e.Type))
	switch typ {
	case "":
		if e.URL != "" && e.Command == "" {
			typ = "http"
		} else {
			typ = "stdio"
		}
	case "stdio", "local":
		typ = "stdio"
	case "http", "streamable-http", "streamablehttp", "streamable_http", "remote":
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

// clonePtr returns a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
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

func formatSeconds(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
