package fakemcp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sort"
	"strconv"
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
		return sleep(modes, args)
	}
	if modes[modeDaemonize] {
		return daemonize(modes, args)
	}
	if modes[modeDodger] {
		return dodger(modes, args)
	}
	if modes[modeEscaper] {
		return escaper(modes, args)
	}
	if modes[modeHog] {
		return hog(args)
	}
	log := eventLog{path: os.Getenv(EnvLog)}

	if modes[ModeIgnoreSIGTERM] {
		signal.Ignore(syscall.SIGTERM)
	}
	if modes[ModeCountStarts] {
		logStart(log, modes, args)
	}
	if modes[ModeGrandchild] {
		if err := startGrandchild(log, modes); err != nil {
			fmt.Fprintf(os.Stderr, "fakemcp: start grandchild: %v\n", err)
			return 1
		}
	}
	if modes[ModeSetsidOnSIGTERM] {
		if err := startSetsidGrandchild(log, modes); err != nil {
			fmt.Fprintf(os.Stderr, "fakemcp: start setsid-on-sigterm grandchild: %v\n", err)
			return 1
		}
	}
	if modes[ModeDaemon] {
		if err := startDaemon(log, modes); err != nil {
			fmt.Fprintf(os.Stderr, "fakemcp: start daemon: %v\n", err)
			return 1
		}
	}
	if modes[ModeDodge] {
		if err := startDodger(log, modes); err != nil {
			fmt.Fprintf(os.Stderr, "fakemcp: start dodger: %v\n", err)
			return 1
		}
	}
	if modes[ModeHogGrandchild] {
		if err := startHog(log, modes); err != nil {
			fmt.Fprintf(os.Stderr, "fakemcp: start hog: %v\n", err)
			return 1
		}
	}
	if modes[ModeEscape] {
		if err := startEscape(log, modes); err != nil {
			fmt.Fprintf(os.Stderr, "fakemcp: start escaper: %v\n", err)
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
func startGrandchild(log eventLog, modes map[string]bool) error {
	cmd, err := helper(log, modes, modeSleeper)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	log.add(Event{Event: EventGrandchild, PID: cmd.Process.Pid, Parent: os.Getpid()})
	return nil
}

// startSetsidGrandchild starts setsid-on-sigterm's grandchild, in this
// process's group, and waits until it catches SIGTERM (it says so on a
// pipe, its fd 3, and logs its grandchild event itself). The fake reaps it
// if it dies first.
func startSetsidGrandchild(log eventLog, modes map[string]bool) error {
	cmd, err := helper(log, modes, modeSleeper, ModeSetsidOnSIGTERM)
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	_ = r.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := r.Read(make([]byte, 1)); err != nil {
		return fmt.Errorf("the grandchild never said it was ready: %w", err)
	}
	return nil
}

// startDaemon runs daemon's intermediate process in a session of its own
// and waits for it to exit; then it logs the daemon event, with the pid the
// intermediate wrote: the sleeper has been reparented by then.
func startDaemon(log eventLog, modes map[string]bool) error {
	cmd, err := helper(log, modes, modeDaemonize)
	if err != nil {
		return err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%w: %s", err, stderr.String())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("daemonize wrote %q", out)
	}
	log.add(Event{Event: EventDaemon, PID: pid, Parent: os.Getpid()})
	return nil
}

// daemonize is daemon's intermediate process: it starts the sleeper (in
// its own session, which the sleeper inherits), writes its pid and exits
// without waiting for it.
func daemonize(modes map[string]bool, args []string) int {
	log, _ := helperArgs(args)
	cmd, err := helper(log, modes, modeSleeper)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: daemonize: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "fakemcp: daemonize: %v\n", err)
		return 1
	}
	fmt.Println(cmd.Process.Pid)
	return 0
}

// sleep is the sleeper: it sleeps until killed (at most 5 min). With
// setsid-on-sigterm it first catches SIGTERM and logs its grandchild event;
// the first SIGTERM makes it call setsid() and log a setsid event, and the
// later ones are dropped.
func sleep(modes map[string]bool, args []string) int {
	ignoreIfStubborn(modes)
	if modes[ModeSetsidOnSIGTERM] {
		log, parent := helperArgs(args)
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		log.add(Event{Event: EventGrandchild, Parent: parent})
		if ready := os.NewFile(3, "ready"); ready != nil {
			_, _ = ready.Write([]byte{1})
			ready.Close()
		}
		go func() {
			<-sigs
			if _, err := syscall.Setsid(); err != nil {
				fmt.Fprintf(os.Stderr, "fakemcp: setsid: %v\n", err)
				return
			}
			log.add(Event{Event: EventSetsid, Parent: parent})
		}()
	}
	time.Sleep(5 * time.Minute)
	return 0
}

// Arguments of the helper processes (sleeper, daemonize): the log, which
// clear-env keeps out of the environment, and the fake's pid.
const (
	argLog    = "--fakemcp-log="
	argParent = "--fakemcp-parent="
)

// helper is a command re-executing the binary in the given modes, with no
// stdio. Its environment is this one's without FAKE_MCP_ variables, or with
// clear-env nothing at all, plus FAKE_MCP_MODE; clear-env and stubborn pass
// themselves on.
func helper(log eventLog, modes map[string]bool, helperModes ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	parent := os.Getpid()
	if modes[modeDaemonize] { // the sleeper of a daemon: its fake is the intermediate's
		_, parent = helperArgs(os.Args[1:])
	}
	cmd := exec.Command(exe, argLog+log.path, argParent+strconv.Itoa(parent))
	for _, m := range []string{ModeClearEnv, ModeStubborn} {
		if modes[m] {
			helperModes = append(helperModes, m)
		}
	}
	env := []string{EnvMode + "=" + strings.Join(helperModes, ",")}
	if !modes[ModeClearEnv] {
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "FAKE_MCP_") {
				env = append(env, kv)
			}
		}
	}
	cmd.Env = env
	return cmd, nil
}

// helperArgs reads a helper's log and the fake's pid from its arguments.
func helperArgs(args []string) (eventLog, int) {
	var log eventLog
	parent := 0
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, argLog); ok {
			log.path = v
		}
		if v, ok := strings.CutPrefix(a, argParent); ok {
			parent, _ = strconv.Atoi(v)
		}
	}
	return log, parent
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
