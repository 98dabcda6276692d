// Package fakemcp is a fake stdio MCP server for tests. A test binary becomes
// the server when it is re-executed with FAKE_MCP_MODE set, the trick go-sdk
// uses to test its stdio transport:
//
//	func TestMain(m *testing.M) {
//		fakemcp.MainIfRequested()
//		os.Exit(m.Run())
//	}
//
//	l := fakemcp.Command("normal", "count-starts").WithLog(filepath.Join(t.TempDir(), "log"))
//	cfg := mcpconfig.ServerConfig{Command: l.Command, Args: l.Args, Env: l.EnvRefs()}
//
// FAKE_MCP_MODE is a comma-separated list of modes (see the Mode constants);
// the tools of the normal set are always offered, other modes add tools or
// change the lifecycle. FAKE_MCP_LOG names a JSON-lines event log the fake
// appends to; ReadLog and WaitForEvents read it back.
//
// Every mode except raw-echo is served by mark3labs/mcp-go's stdio server,
// so protocol negotiation (server/discover for 2026-07-28, initialize for
// 2025-11-25 and older) and cancellation behave as a real Go MCP server's do.
// What mcp-go cannot say is patched: the no_schema tool's inputSchema is
// removed from tools/list on the wire, the hologram content element is a
// type of ours that marshals itself, and big_image's 8 MB of base64 is
// spliced into the written line (mcp-go's nested marshalling of it costs
// seconds under -race). raw-echo is a minimal hand-written
// JSON-RPC loop for benchmarks; of the other modes it honours only the
// start-up ones (count-starts, grandchild, daemon, setsid-on-sigterm,
// clear-env, ignore-sigterm, stderr-chatter's start line; crash-on-start and
// hang-on-start take precedence over it).
//
// Under the race detector the fake exits 0 with syscall.Exit, skipping the
// race runtime's one-second sleep at exit (races are still reported on
// stderr as they happen).
package fakemcp

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
)

// Environment variables the fake reads.
const (
	// EnvMode is the comma-separated list of modes. The process is the fake
	// server only when it is set and not empty.
	EnvMode = "FAKE_MCP_MODE"
	// EnvLog is the path of the JSON-lines event log the fake appends to.
	// Without it nothing is logged.
	EnvLog = "FAKE_MCP_LOG"
	// EnvDieMessage is included in crash-on-start's traceback and in
	// die-after-first-call's "dying: …" line.
	EnvDieMessage = "FAKE_MCP_DIE_MESSAGE"
	// EnvSecret is included in every stderr-chatter line, to test redaction.
	EnvSecret = "FAKE_MCP_SECRET"
)

// Modes, combinable in EnvMode.
const (
	// ModeNormal is the base tool set (always offered by the mcp-go server;
	// naming it is optional).
	ModeNormal = "normal"
	// ModeCrashOnStart writes a multi-line traceback to stderr and exits 1
	// before reading anything.
	ModeCrashOnStart = "crash-on-start"
	// ModeHangOnStart never answers anything (no initialize, no
	// server/discover) and exits when stdin closes.
	ModeHangOnStart = "hang-on-start"
	// ModeDieAfterFirstCall writes "dying: $FAKE_MCP_DIE_MESSAGE" to stderr
	// and exits 3 about 200 ms after answering the first tools/call.
	ModeDieAfterFirstCall = "die-after-first-call"
	// ModeEnv adds the tool "env", which returns os.Environ sorted, one per
	// line, and adds the environment to count-starts' start events.
	ModeEnv = "env"
	// ModeBuiltinClash adds a tool named "send", the bot's built-in.
	ModeBuiltinClash = "builtin-clash"
	// ModeCountStarts appends a "start" event per process start.
	ModeCountStarts = "count-starts"
	// ModePaginated makes tools/list return pages of 2 tools with nextCursor.
	ModePaginated = "paginated"
	// ModeGrandchild starts a grandchild process in the fake's own process
	// group at start and logs a "grandchild" event with its pid.
	ModeGrandchild = "grandchild"
	// ModeStderrChatter writes a line to stderr at start and on every
	// tools/call, including $FAKE_MCP_SECRET.
	ModeStderrChatter = "stderr-chatter"
	// ModeIgnoreSIGTERM ignores SIGTERM, so only SIGKILL ends the fake.
	ModeIgnoreSIGTERM = "ignore-sigterm"
	// ModeRawEcho serves a minimal hand-written JSON-RPC server with the one
	// tool "echo" instead of the mcp-go server.
	ModeRawEcho = "raw-echo"
	// ModeLogCalls appends a "call" event (tool and arguments) per tools/call.
	ModeLogCalls = "log-calls"
	// ModeSharedHost serves over streamable HTTP on 127.0.0.1 at the port
	// after --port in the arguments, an MCP session per client, until
	// SIGTERM: a Shared server's one process. It adds the session tools
	// (whoami, remember, recall, save_state, restore_state) and asks each
	// session's client for its roots.
	ModeSharedHost = "shared-host"
	// ModeDaemon double-forks a sleeper at start, as a daemon does: an
	// intermediate process in a session of its own starts the sleeper and
	// exits, so the sleeper is reparented (to init, or to the nearest
	// subreaper) and is in no process group or session of the fake's tree.
	// Once the intermediate has exited, the fake logs a "daemon" event with
	// the sleeper's pid (Parent: the fake's pid), and serves.
	ModeDaemon = "daemon"
	// ModeSetsidOnSIGTERM starts a grandchild in the fake's own process
	// group (logged as a "grandchild" event) that, when it gets SIGTERM,
	// calls setsid() — leaving the group and the session of the fake — logs
	// a "setsid" event and ignores SIGTERM from then on.
	ModeSetsidOnSIGTERM = "setsid-on-sigterm"
	// ModeClearEnv starts the processes of grandchild, daemon and
	// setsid-on-sigterm with an environment of FAKE_MCP_MODE alone: no
	// VOLCANICBOT_OWNER mark, nothing inherited. Their log path goes as an
	// argument.
	ModeClearEnv = "clear-env"
	// modeSleeper is the grandchild: it sleeps until killed (at most 5 min).
	modeSleeper = "sleeper"
	// modeDaemonize is daemon's intermediate process.
	modeDaemonize = "daemonize"
)

var knownModes = []string{
	ModeNormal, ModeCrashOnStart, ModeHangOnStart, ModeDieAfterFirstCall, ModeEnv,
	ModeBuiltinClash, ModeCountStarts, ModePaginated, ModeGrandchild, ModeStderrChatter,
	ModeIgnoreSIGTERM, ModeRawEcho, ModeLogCalls, ModeSharedHost, ModeManyTools, ModeDaemon, ModeSetsidOnSIGTERM,
	ModeClearEnv, ModeAsk, ModeRootsOnInit, ModeChanging, ModeResources, ModeDisk, modeSleeper, modeDaemonize,
	ModeStubborn, ModeDodge, ModeEscape, modeDodger, modeEscaper, ModeHogGrandchild, modeHog,
}

// Server identity.
const (
	ServerName    = "fake"
	ServerVersion = "1.0.0"
)

// MainIfRequested runs the fake server and exits the process when EnvMode is
// set; otherwise it returns at once. Call it first thing in TestMain, before
// m.Run and before anything parses flags: the re-executed test binary gets
// the server's arguments (such as --output-dir X), not test flags.
func MainIfRequested() {
	v := os.Getenv(EnvMode)
	if v == "" {
		return
	}
	code := run(parseModes(v), os.Args[1:])
	if code == 0 && raceEnabled {
		// Skip the race runtime's exit, which sleeps 1 s before a 0 exit
		// (a race found is still reported on stderr when it happens).
		syscall.Exit(0)
	}
	os.Exit(code)
}

// Launch is how to start the fake: the fields of a server configuration.
type Launch struct {
	Command string            // the running test binary
	Args    []string          // none unless WithArgs
	Env     map[string]string // FAKE_MCP_MODE, and FAKE_MCP_LOG with WithLog
}

// Command returns how to start the fake with the given modes (none means
// "normal"). The command is the current test binary, so its TestMain must
// call MainIfRequested. It panics if the executable cannot be found.
func Command(modes ...string) Launch {
	exe, err := os.Executable()
	if err != nil {
		panic(fmt.Sprintf("fakemcp: find the test binary: %v", err))
	}
	if len(modes) == 0 {
		modes = []string{ModeNormal}
	}
	return Launch{Command: exe, Env: map[string]string{EnvMode: strings.Join(modes, ",")}}
}

// WithLog returns a copy of l that logs events to path.
func (l Launch) WithLog(path string) Launch { return l.WithEnv(EnvLog, path) }

// WithEnv returns a copy of l with one more environment entry, such as
// EnvDieMessage or EnvSecret.
func (l Launch) WithEnv(key, value string) Launch {
	l.Env = maps.Clone(l.Env)
	if l.Env == nil {
		l.Env = map[string]string{}
	}
	l.Env[key] = value
	return l
}

// WithArgs returns a copy of l with args appended, such as
// "--output-dir", dir.
func (l Launch) WithArgs(args ...string) Launch {
	l.Args = append(slices.Clip(l.Args), args...)
	return l
}

// Environ returns l.Env as sorted "KEY=value" entries, to append to an
// environment.
func (l Launch) Environ() []string {
	out := make([]string, 0, len(l.Env))
	for _, k := range slices.Sorted(maps.Keys(l.Env)) {
		out = append(out, k+"="+l.Env[k])
	}
	return out
}

// EnvRefs returns l.Env in the map[string]*string shape of a server
// configuration's env.
func (l Launch) EnvRefs() map[string]*string {
	out := make(map[string]*string, len(l.Env))
	for k, v := range l.Env {
		out[k] = &v
	}
	return out
}

func parseModes(v string) map[string]bool {
	modes := map[string]bool{}
	for m := range strings.SplitSeq(v, ",") {
		if m = strings.TrimSpace(m); m != "" {
			modes[m] = true
		}
	}
	return modes
}

// outputDir returns the value of --output-dir (or --output-dir=…) in args.
func outputDir(args []string) (string, bool) {
	for i, a := range args {
		if a == "--output-dir" && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, "--output-dir="); ok {
			return v, true
		}
	}
	return "", false
}
