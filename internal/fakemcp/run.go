package fakemcp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

// run is the fake's main: the start-up modes, then one of the servers. It
// returns the exit code.
func run(modes map[string]bool, args []string) int {
	for m := range modes {
		if !slices.Contains(knownModes, m) {
			fmt.Fprintf(os.Stderr, "fakemcp: unknown mode %q in %s (known: %s)\n",
				m, EnvMode, strings.Join(knownModes, ", "))
			return 2
		}
	}
	if modes[modeSleeper] {
		time.Sleep(5 * time.Minute)
		return 0
	}
	log := eventLog{path: os.Getenv(EnvLog)}

	if modes[ModeIgnoreSIGTERM] {
		signal.Ignore(syscall.SIGTERM)
	}
	if modes[ModeCountStarts] {
		logStart(log, modes, args)
	}
	if modes[ModeGrandchild] {
		if err := startGrandchild(log); err != nil {
			fmt.Fprintf(os.Stderr, "fakemcp: start grandchild: %v\n", err)
			return 1
		}
	}
	if modes[ModeStderrChatter] {
		fmt.Fprintf(os.Stderr, "fake: starting pid=%d secret=%s\n", os.Getpid(), os.Getenv(EnvSecret))
	}
	if modes[ModeCrashOnStart] {
		crash()
		return 1
	}
	if modes[ModeHangOnStart] {
		// Read and drop everything; stay until stdin closes or a signal.
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	}
	if modes[ModeRawEcho] {
		if err := serveRaw(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "fakemcp: raw-echo: %v\n", err)
			return 1
		}
		return 0
	}
	if modes[ModeSharedHost] {
		if err := serveShared(modes, log, args); err != nil {
			fmt.Fprintf(os.Stderr, "fakemcp: shared-host: %v\n", err)
			return 1
		}
		return 0
	}
	dir, browser := outputDir(args)
	s := newServer(modes, log, browser, dir)
	if err := s.serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: serve: %v\n", err)
		return 1
	}
	return 0
}

func logStart(log eventLog, modes map[string]bool, args []string) {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "?" + err.Error()
	}
	ev := Event{
		Event: EventStart,
		Cwd:   cwd,
		Args:  slices.Clone(args),
		Modes: sortedModes(modes),
	}
	if modes[ModeEnv] {
		ev.Env = sortedEnviron()
	}
	log.add(ev)
}

func sortedModes(modes map[string]bool) []string {
	out := make([]string, 0, len(modes))
	for m := range modes {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func sortedEnviron() []string {
	env := os.Environ()
	sort.Strings(env)
	return env
}

// startGrandchild re-executes the binary as a sleeper in this process's own
// process group (no Setpgid), with no stdio, so that only a group kill ends
// it. The fake reaps it if it dies first.
func startGrandchild(log eventLog) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	env := []string{EnvMode + "=" + modeSleeper}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FAKE_MCP_") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	log.add(Event{Event: EventGrandchild, PID: cmd.Process.Pid, Parent: os.Getpid()})
	return nil
}

// crash writes a Python-style traceback, the kind of thing a real server
// prints when it dies on start.
func crash() {
	msg := os.Getenv(EnvDieMessage)
	if msg == "" {
		msg = "crash-on-start requested"
	}
	fmt.Fprintf(os.Stderr, `Traceback (most recent call last):
  File "/opt/fake-mcp/server.py", line 88, in <module>
    main()
  File "/opt/fake-mcp/server.py", line 61, in main
    config = load_config(os.environ)
  File "/opt/fake-mcp/config.py", line 12, in load_config
    raise RuntimeError(message)
RuntimeError: fake MCP server failed to start: %s
`, msg)
}
