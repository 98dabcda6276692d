package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/session"
)

// loginCallback is where `volcanicbot login` has the authorization server
// send the browser back: a listener on this host catches it when the
// browser runs here too; otherwise the admin pastes the address the
// browser ended on (it fails to load; the address holds the code).
const loginCallback = "127.0.0.1:8976" // session.LoginRedirect's

// loginTimeout bounds a login on the terminal.
const loginTimeout = 10 * time.Minute

// runLogin logs in to the MCP server name: it prints the authorization
// address, then finishes with the redirect that reaches the callback or
// the line pasted on stdin, whichever comes first. The token goes to the
// data directory (mcp-auth/<name>.json, 0600), never to the output.
func runLogin(ctx context.Context, name string, stdin io.Reader, stdout, stderr io.Writer, environ []string) error {
	if stdin == nil {
		return errors.New("login needs a terminal: run `volcanicbot login " + name + "` in one")
	}
	m, err := NewMain(stderr, environ)
	if err != nil {
		return err
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	redirect := "http://" + loginCallback + "/callback"
	login, err := m.mcp.Login(ctx, name, redirect)
	if err != nil {
		return err
	}

	answers := make(chan string, 2)
	var lc net.ListenConfig
	if l, err := lc.Listen(ctx, "tcp", loginCallback); err == nil {
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/callback" {
				http.NotFound(w, r)
				return
			}
			fmt.Fprintln(w, "volcanicbot: the login came back; you can close this page.")
			select {
			case answers <- "http://" + loginCallback + r.URL.RequestURI():
			default:
			}
		})}
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Serve(l) }()
		defer func() { _ = srv.Close(); <-done }()
	}
	go func() { // ends with the process: a blocked terminal read cannot be cancelled
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err == nil || line != "" {
			answers <- line
		}
	}()

	fmt.Fprintf(stdout, "Open this address in a browser and log in to %s:\n\n  %s\n\n", name, login.URL)
	fmt.Fprintf(stdout, "Then paste here the address the browser ends on (%s…; it may not load: copy it anyway), or the code it shows:\n", redirect)
	var answer string
	select {
	case answer = <-answers:
	case <-ctx.Done():
		return fmt.Errorf("%s: no login within %s", name, session.DurationText(loginTimeout))
	}
	if err := login.Finish(ctx, answer); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: logged in. The token is in %s (0600); the running bot discovers the server again within a minute.\n",
		name, filepath.Join(m.cfg.DataDir, mcpAuthDir, name+".json"))
	return nil
}
