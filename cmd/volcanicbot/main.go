// Command volcanicbot runs the Telegram agent bot.
//
//	volcanicbot [run]   run the bot
//	volcanicbot check   validate the configuration and discover every MCP server's tools
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/volcanicbot/volcanicbot/internal/document"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	// A document's extraction runs in a child of the bot (the binary
	// itself): bounded in memory and time, without the bot's environment.
	if len(os.Args) > 1 && os.Args[1] == extractCommand {
		os.Exit(document.Serve(os.Args[2:], os.Stdin, os.Stdout))
	}
	// First, before any child or file: started as root, become the data
	// directory's owner (a root `docker exec` must not leave files the bot
	// cannot write); then no process of that user may read this one's
	// environment (MCP servers). Changing the user resets the dumpable flag,
	// so the order matters.
	if _, err := dropRoot(os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "volcanicbot: %v\n", err)
		os.Exit(1)
	}
	makeUndumpable(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runWith(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// errUsage marks a command-line mistake: exit code 2.
var errUsage = errors.New("usage")

const usage = `usage: volcanicbot [run|check|login <server>|health|allow <code>|revoke <user id>|users|jobs|version]

  run      run the bot (the default)
  check    validate the configuration, discover every MCP server's tools and
           print them; exits 1 when the configuration is invalid or a server fails
  login    log in to an MCP server at a URL that wants OAuth: prints the address
           to open, then takes the address the browser ended on (or its code)
  health   ask the running bot's /healthz (HTTP_ADDR); exits 0 when polling is alive
  allow    add the user who was refused with this code (works beside a running bot)
  revoke   remove a user added with a code
  users    list who may use the bot
  jobs     list every chat's scheduled tasks and their last runs (beside a running bot too)
  version  print the version

Configuration comes from environment variables and an optional config file
(VOLCANIC_CONFIG); see docs/configuration.md.
`

// run is main without the process: testable end to end. It reads no
// input (runWith does).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	return runWith(ctx, args, nil, stdout, stderr, environ)
}

// runWith is run with stdin, for login.
func runWith(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	cmd := "run"
	if len(args) > 0 {
		cmd = args[0]
	}
	want := 0 // arguments after the command
	if cmd == "allow" || cmd == "revoke" || cmd == "login" {
		want = 1
	}
	if len(args) > 0 && len(args)-1 != want {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd {
	case "login":
		err = runLogin(ctx, args[1], stdin, stdout, stderr, environ)
	case "run":
		err = runBot(ctx, stderr, environ)
	case "check":
		err = runCheck(ctx, stdout, stderr, environ)
	case "health":
		err = runHealth(ctx, stdout, environ)
	case "allow":
		err = runAllow(stdout, environ, args[1])
	case "revoke":
		err = runRevoke(stdout, environ, args[1])
	case "users":
		err = runUsers(stdout, environ)
	case "jobs":
		err = runJobs(stdout, environ)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "volcanicbot", version)
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "volcanicbot: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errReported):
		return 1
	default:
		fmt.Fprintf(stderr, "volcanicbot: %v\n", err)
		return 1
	}
}

// errReported means the failure was already printed in full.
var errReported = errors.New("reported")

// runBot runs the bot until ctx ends (SIGINT or SIGTERM).
func runBot(ctx context.Context, stderr io.Writer, environ []string) error {
	m, err := NewMain(stderr, environ)
	if err != nil {
		return err
	}
	defer m.Close()
	return m.Run(ctx)
}
