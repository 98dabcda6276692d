package mcpconfig

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Environment builds the environment of a server process: the filtered host
// environment with the server's explicit entries applied over it, and host
// lookups for ${env:NAME}. redact.EnvFilter satisfies it.
type Environment interface {
	// Apply returns the filtered host environment with explicit applied
	// over it ("NAME=value" entries); a nil value removes the variable.
	Apply(explicit map[string]*string) []string
	// Lookup reads a host variable, for ${env:NAME}.
	Lookup(name string) (string, bool)
}

// ErrCommandNotFound is matched (errors.Is) by the error Expand returns when
// a bare command is not in the server's PATH: the operator should install it
// or give an absolute path.
var ErrCommandNotFound = errors.New("command not found")

// Spawn is an expanded server configuration, ready for exec: Command is the
// resolved program path, Args the arguments after it (argv[1:]), Dir the
// working directory and Env the complete environment.
type Spawn struct {
	Command string
	Args    []string
	Dir     string
	Env     []string

	// URL, Headers and OAuth, set instead of the above for an HTTP
	// server, with ${env:NAME} expanded (OAuth's client id, secret and
	// metadata URL; its scopes as written).
	URL     string
	Headers map[string]string
	OAuth   OAuthConfig
	// Host, when set, is the Host every request to URL carries instead of
	// URL's host: a Shared server's name of the start (HostEnv).
	Host string
}

// Dirs are the folders a server is started for.
type Dirs struct {
	// Workspace is the chat's workspace (or the temporary folder of a
	// discovery): ${workspace}, and the working directory by default.
	Workspace string
	// Private is the bot's private folder of the chat, beside the
	// workspace (chatdir): ${private}, which only a preset's entry may
	// name (the per-chat browser's profile). In any other entry ${private}
	// stays as written: no server the user configures is handed the bot's
	// own state.
	Private string
}

// Expand prepares c for a process in d.Workspace (a chat workspace, or the
// temp directory of a discovery) — or, for an HTTP server, its URL and
// headers:
//
//   - in the command, args, cwd, env values, url, headers and the oauth
//     client id, secret and metadata URL alike,
//     ${workspace} becomes d.Workspace, ${private} d.Private (a preset's
//     entry only, see Dirs), ${env:NAME} and ${NAME} the host
//     variable NAME read through env.Lookup (unset: empty), and
//     ${NAME:-default} the variable or, unset or empty, default — which
//     may hold references itself, expanded when it is used
//     (${OUT:-${workspace}/out}), up to maxRefDepth deep;
//   - $${ is a literal ${; any other ${…} is left as is; an expanded value
//     is not expanded again;
//   - Dir is the expanded cwd, relative to workspace, defaulting to it;
//   - Env is env.Apply of the expanded explicit entries (nil removes);
//   - a command without a slash is looked up in the PATH of that child
//     environment, never the bot's own; relative PATH entries are skipped.
func (c ServerConfig) Expand(d Dirs, env Environment) (Spawn, error) {
	if env == nil {
		return Spawn{}, fmt.Errorf("expand %s: no environment", c.Name)
	}
	workspace, private := d.Workspace, ""
	if c.Source == SourcePreset {
		private = d.Private
	}
	x := func(s string) string { return expandVars(s, workspace, private, env.Lookup) }
	if c.URL != "" {
		sp := Spawn{Dir: workspace, URL: x(c.URL), OAuth: OAuthConfig{ClientID: x(c.OAuth.ClientID),
			ClientSecret: x(c.OAuth.ClientSecret), ClientMetadataURL: x(c.OAuth.ClientMetadataURL), Scopes: slices.Clone(c.OAuth.Scopes)}}
		if len(c.Headers) > 0 {
			sp.Headers = make(map[string]string, len(c.Headers))
			for k, v := range c.Headers {
				sp.Headers[k] = x(v)
			}
		}
		return sp, nil
	}

	sp := Spawn{Command: x(c.Command), Dir: workspace}
	if len(c.Args) > 0 {
		sp.Args = make([]string, len(c.Args))
		for i, a := range c.Args {
			sp.Args[i] = x(a)
		}
	}
	if c.Cwd != "" {
		dir := x(c.Cwd)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(workspace, dir)
		}
		sp.Dir = dir
	}

	explicit := make(map[string]*string, len(c.Env))
	for k, v := range c.Env {
		if v == nil {
			explicit[k] = nil
			continue
		}
		s := x(*v)
		explicit[k] = &s
	}
	sp.Env = env.Apply(explicit)

	if sp.Command == "" {
		return Spawn{}, fmt.Errorf("expand %s: empty command", c.Name)
	}
	switch {
	case !strings.ContainsRune(sp.Command, '/'):
		path, err := lookPathIn(sp.Command, envValue(sp.Env, "PATH"))
		if err != nil {
			return Spawn{}, err
		}
		sp.Command = path
	case !filepath.IsAbs(sp.Command):
		// "tools/…/playwright-mcp" means from where the bot was started,
		// not from the chat's workspace (exec would resolve it against Dir).
		abs, err := filepath.Abs(sp.Command)
		if err != nil {
			return Spawn{}, fmt.Errorf("expand %s: %w", c.Name, err)
		}
		sp.Command = abs
	}
	return sp, nil
}

// Values is c with its variables expanded as Expand would — in the
// command, args, env values, url, headers and the oauth client fields —
// and nothing else done: no command looked up, no environment built, so
// it holds for a server whose command is not installed. ${workspace}
// becomes "". For finding the secrets a configuration hands its servers.
func (c ServerConfig) Values(lookup func(string) (string, bool)) ServerConfig {
	x := func(s string) string { return expandVars(s, "", "", lookup) }
	v := c
	v.Command, v.URL, v.Cwd = x(c.Command), x(c.URL), x(c.Cwd)
	v.OAuth.ClientID, v.OAuth.ClientSecret, v.OAuth.ClientMetadataURL = x(c.OAuth.ClientID), x(c.OAuth.ClientSecret), x(c.OAuth.ClientMetadataURL)
	v.Args = make([]string, len(c.Args))
	for i, a := range c.Args {
		v.Args[i] = x(a)
	}
	v.Headers = make(map[string]string, len(c.Headers))
	for k, h := range c.Headers {
		v.Headers[k] = x(h)
	}
	v.Env = make(map[string]*string, len(c.Env))
	for k, e := range c.Env {
		if e != nil {
			s := x(*e)
			e = &s
		}
		v.Env[k] = e
	}
	return v
}

// UnsetVariables returns the host variables that c refers to (${NAME} or
// ${env:NAME}, in any field that is expanded) without a default and that
// are unset or empty in lookup, sorted, each once: the server gets an
// empty value for them, which is rarely what was meant.
func (c ServerConfig) UnsetVariables(lookup func(string) (string, bool)) []string {
	seen := map[string]bool{}
	var out []string
	unset := func(name string) bool { v, ok := lookup(name); return !ok || v == "" }
	c.eachValue(func(s string) {
		eachRef(s, func(r varRef) bool { return r.name != "" && unset(r.name) }, func(r varRef) {
			if r.name == "" || r.hasDefault || seen[r.name] || !unset(r.name) {
				return
			}
			seen[r.name] = true
			out = append(out, r.name)
		})
	})
	slices.Sort(out)
	return out
}

// ArgVariables returns the host variables c's command and args refer to,
// sorted, each once. A process's arguments are visible to every user of
// the host (the process list): a secret belongs in env.
func (c ServerConfig) ArgVariables() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append([]string{c.Command}, c.Args...) {
		eachRef(s, func(varRef) bool { return true }, func(r varRef) {
			if r.name != "" && !seen[r.name] {
				seen[r.name] = true
				out = append(out, r.name)
			}
		})
	}
	slices.Sort(out)
	return out
}

// eachValue calls f with every value Expand expands.
func (c ServerConfig) eachValue(f func(string)) {
	f(c.Command)
	for _, a := range c.Args {
		f(a)
	}
	f(c.Cwd)
	for _, k := range sortedKeys(c.Env) {
		if v := c.Env[k]; v != nil {
			f(*v)
		}
	}
	f(c.URL)
	for _, k := range sortedKeys(c.Headers) {
		f(c.Headers[k])
	}
	f(c.OAuth.ClientID)
	f(c.OAuth.ClientSecret)
	f(c.OAuth.ClientMetadataURL)
}

// varRef is one ${…} of a value: a host variable (name), with a default
// or not, ${workspace} or ${private} (name empty, workspace or private
// set); start and end are its bytes in the value.
type varRef struct {
	start, end int
	workspace  bool
	private    bool
	name       string
	hasDefault bool
	def        string
}

// maxRefDepth is how deep references may nest in defaults
// (${A:-${B:-${C:-${D}}}} is 4 deep); a deeper one is refused
// (CheckReferences) and left as it is.
const maxRefDepth = 4

// varRefs are the references of s in order, the $${ escapes left out. A
// reference ends at the '}' that closes it: the ${…} in its default are
// counted. An unclosed ${ is text (CheckReferences refuses it).
func varRefs(s string) []varRef {
	var out []varRef
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			break
		}
		j += i
		if j > 0 && s[j-1] == '$' { // $${: a literal ${
			i = j + 2
			continue
		}
		k, _ := closingBrace(s, j+2)
		if k < 0 {
			i = j + 2
			continue
		}
		if r, ok := parseRef(s[j+2 : k]); ok {
			r.start, r.end = j, k+1
			out = append(out, r)
		}
		i = k + 1
	}
	return out
}

// closingBrace returns the index of the '}' that closes a ${ whose inside
// starts at from (-1: none), and how deep references nest in it (1: none
// inside). $${ inside is a literal.
func closingBrace(s string, from int) (end, depth int) {
	level, deepest := 1, 1
	for i := from; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			i += 2
		case strings.HasPrefix(s[i:], "${"):
			level++
			deepest = max(deepest, level)
			i++
		case s[i] == '}':
			if level--; level == 0 {
				return i, deepest
			}
		}
	}
	return -1, deepest
}

// eachRef calls f with every reference of s, and, where descend says so,
// with those of its default, depth first.
func eachRef(s string, descend func(varRef) bool, f func(varRef)) {
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		for _, r := range varRefs(s) {
			f(r)
			if r.hasDefault && depth < maxRefDepth && descend(r) {
				walk(r.def, depth+1)
			}
		}
	}
	walk(s, 1)
}

// CheckReferences returns what is wrong with the references of s, for a
// refusal: a ${ that is never closed, or references nested more than
// maxRefDepth deep. "" when nothing is.
func CheckReferences(s string) string {
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			return ""
		}
		j += i
		if j > 0 && s[j-1] == '$' {
			i = j + 2
			continue
		}
		k, depth := closingBrace(s, j+2)
		switch {
		case k < 0:
			return "a ${ is not closed (write $${ for a literal ${)"
		case depth > maxRefDepth:
			return fmt.Sprintf("references are nested more than %d deep (write $${ for a literal ${)", maxRefDepth)
		}
		i = k + 1
	}
	return ""
}

// parseRef reads the inside of a ${…}: workspace, private, env:NAME, NAME
// or NAME:-default. ${port} is not one: a Shared server's port, filled in
// before (see mcpclient's host).
func parseRef(ref string) (varRef, bool) {
	switch ref {
	case "workspace":
		return varRef{workspace: true}, true
	case "private":
		return varRef{private: true}, true
	case "port":
		return varRef{}, false
	}
	if name, ok := strings.CutPrefix(ref, "env:"); ok {
		return varRef{name: name}, validVarName(name)
	}
	name, def, hasDefault := strings.Cut(ref, ":-")
	return varRef{name: name, hasDefault: hasDefault, def: def}, validVarName(name)
}

// validVarName reports whether s is a variable name: [A-Za-z_][A-Za-z0-9_]*.
func validVarName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

// expandVars replaces the references of s (see Expand) in one pass; a
// default used is expanded in turn. Unknown or unterminated references
// stay as they are, and so does ${private} when private is empty.
func expandVars(s, workspace, private string, lookup func(string) (string, bool)) string {
	return expandDepth(s, workspace, private, lookup, 1)
}

func expandDepth(s, workspace, private string, lookup func(string) (string, bool), depth int) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	last := 0
	emit := func(upTo int) { // the text before a reference, escapes undone
		b.WriteString(strings.ReplaceAll(s[last:upTo], "$${", "${"))
	}
	for _, r := range varRefs(s) {
		emit(r.start)
		switch {
		case r.workspace:
			b.WriteString(workspace)
		case r.private && private == "":
			b.WriteString(s[r.start:r.end])
		case r.private:
			b.WriteString(private)
		default:
			v, _ := lookup(r.name)
			if v == "" && r.hasDefault {
				v = r.def
				if depth < maxRefDepth {
					v = expandDepth(v, workspace, private, lookup, depth+1)
				}
			}
			b.WriteString(v)
		}
		last = r.end
	}
	emit(len(s))
	return b.String()
}

// envValue returns the last NAME=value entry of env for name.
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// lookPathIn finds the executable file named cmd in the directories of
// path (a PATH value). Relative directories are skipped: the child would
// resolve them against its own working directory.
func lookPathIn(cmd, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		// With a separator in the name, LookPath only checks that file.
		if p, err := exec.LookPath(filepath.Join(dir, cmd)); err == nil {
			return p, nil
		}
	}
	return "", &commandNotFoundError{command: cmd, pathSet: path != ""}
}

type commandNotFoundError struct {
	command string
	pathSet bool
}

func (e *commandNotFoundError) Error() string {
	if !e.pathSet {
		return fmt.Sprintf("command %q not found in PATH (PATH is empty in the server's environment)", e.command)
	}
	return fmt.Sprintf("command %q not found in PATH", e.command)
}

func (e *commandNotFoundError) Unwrap() error { return ErrCommandNotFound }

// eachField calls f with every value of e that is expanded, named as
// in a refusal: command, args[i], cwd, env.NAME, url, headers.NAME and
// the oauth fields.
func (e ServerEntry) eachField(f func(field, value string)) {
	f("command", e.Command)
	for i, a := range e.Args {
		f(fmt.Sprintf("args[%d]", i), a)
	}
	f("cwd", e.Cwd)
	for _, k := range sortedKeys(e.Env) {
		if v := e.Env[k]; v != nil {
			f("env."+k, *v)
		}
	}
	f("url", e.URL)
	for _, k := range sortedKeys(e.Headers) {
		f("headers."+k, e.Headers[k])
	}
	f("oauthClientId", e.OAuthClientID)
	f("oauthClientSecret", e.OAuthClientSecret)
	f("oauthClientMetadataUrl", e.OAuthClientMetadataURL)
}
