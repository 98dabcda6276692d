// Package botrun runs the volcanicbot binary for a benchmark: `run` with
// the environment the benchmark gives, its output in a log file, waited
// for at /healthz, and stopped as a user stops it (SIGTERM).
package botrun

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Bot is a running `volcanicbot run`.
type Bot struct {
	cmd  *exec.Cmd
	log  *os.File
	stop sync.Once
}

// Start runs `bin run` with env as its whole environment, its stdout and
// stderr in dir/bot.log. Call Stop when Start succeeded.
func Start(bin, dir string, env []string) (*Bot, error) {
	log, err := os.Create(filepath.Join(dir, "bot.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	return &Bot{cmd: cmd, log: log}, nil
}

// LogName is the path of the bot's log.
func (b *Bot) LogName() string { return b.log.Name() }

// WaitHealthy waits up to timeout for the bot's /healthz at addr (its
// HTTP_ADDR) to answer 200, asking every poll. The error names the log.
func (b *Bot) WaitHealthy(addr string, timeout, poll time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(poll)
	}
	return fmt.Errorf("the bot never became healthy (log: %s)", b.LogName())
}

// stopGrace is how long Stop waits after SIGTERM before it kills the bot:
// well past the bot's own shutdown timeout (8 s).
const stopGrace = 30 * time.Second

// Stop sends the bot SIGTERM (it shuts down as in production), waits for
// it to exit — killing it after stopGrace, so that a bot that ignores
// SIGTERM cannot hang a benchmark — and closes the log. Only the first
// call does anything.
func (b *Bot) Stop() {
	b.stop.Do(func() {
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan struct{})
		go func() { _ = b.cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(stopGrace):
			fmt.Fprintf(os.Stderr, "botrun: the bot did not exit %s after SIGTERM: killed (log: %s)\n", stopGrace, b.LogName())
			_ = b.cmd.Process.Kill()
			<-exited
		}
		b.log.Close()
	})
}

// FreeAddr is a free 127.0.0.1 address, for HTTP_ADDR.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
