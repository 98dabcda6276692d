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

	// URL and Headers, set instead of the above for an HTTP server, with
	// ${env:NAME} expanded.
	URL     string
	Headers map[string]string
}

// Expand prepares c for a process in workspace (a chat workspace, or the
// temp directory of a discovery) — or, for an HTTP server, its URL and
// headers with ${env:NAME} expanded:
//
//   - ${workspace} in the command, args, cwd and env values becomes workspace;
//   - ${env:NAME} in env values becomes the host variable, read through
//     env.Lookup (unset: empty); it stays literal elsewhere;
//   - any other ${…} is left as is; an expanded value is not expanded again;
//   - Dir is the expanded cwd, relative to workspace, defaulting to it;
//   - Env is env.Apply of the expanded explicit entries (nil removes);
//   - a command without a slash is looked up in the PATH of that child
//     environment, never the bot's own; relative PATH entries are skipped.
func (c ServerConfig) Expand(workspace string, env Environment) (Spawn, error) {
	if env == nil {
		return Spawn{}, fmt.Errorf("expand %s: no environment", c.Name)
	}
	if c.URL != "" {
		sp := Spawn{Dir: workspace, URL: expandVars(c.URL, workspace, env.Lookup)}
		if len(c.Headers) > 0 {
			sp.Headers = make(map[string]string, len(c.Headers))
			for k, v := range c.Headers {
				sp.Headers[k] = expandVars(v, workspace, env.Lookup)
			}
		}
		return sp, nil
	}
	ws := func(s string) string { return expandVars(s, workspace, nil) }

	sp := Spawn{Command: ws(c.Command), Dir: workspace}
	if len(c.Args) > 0 {
		sp.Args = make([]string, len(c.Args))
		for i, a := range c.Args {
			sp.Args[i] = ws(a)
		}
	}
	if c.Cwd != "" {
		dir := ws(c.Cwd)
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
		s := expandVars(*v, workspace, env.Lookup)
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

// UnsetVariables returns the host variables that c's ${env:NAME}
// references name (in env values, the URL and headers) and that are unset
// or empty in lookup, sorted, each once: the server gets an empty value
// for them, which is rarely what was meant.
func (c ServerConfig) UnsetVariables(lookup func(string) (string, bool)) []string {
	seen := map[string]bool{}
	var out []string
	scan := func(s string) {
		for {
			i := strings.Index(s, "${env:")
			if i < 0 {
				return
			}
			j := strings.IndexByte(s[i:], '}')
			if j < 0 {
				return
			}
			name := s[i+len("${env:") : i+j]
			s = s[i+j+1:]
			if name == "" || seen[name] {
				continue
			}
			if v, ok := lookup(name); !ok || v == "" {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	for _, k := range sortedKeys(c.Env) {
		if v := c.Env[k]; v != nil {
			scan(*v)
		}
	}
	scan(c.URL)
	for _, k := range sortedKeys(c.Headers) {
		scan(c.Headers[k])
	}
	slices.Sort(out)
	return out
}

// expandVars replaces ${workspace} and, when lookup is not nil,
// ${env:NAME}, in one pass. Unknown or unterminated references stay as
// they are.
func expandVars(s, workspace string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		ref := s[i+2 : i+2+j]
		switch name, isEnv := strings.CutPrefix(ref, "env:"); {
		case ref == "workspace":
			b.WriteString(workspace)
		case isEnv && lookup != nil && name != "":
			v, _ := lookup(name)
			b.WriteString(v)
		default:
			b.WriteString(s[i : i+3+j])
		}
		s = s[i+3+j:]
	}
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
