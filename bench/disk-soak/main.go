// Command disk-soak shows whether a data directory's growth is bounded
// (issue 18 item 6): the real volcanicbot binary, with the real
// @playwright/mcp driving Debian's Chromium (the shared browser), against
// a fake Telegram Bot API (telegramtest, Telegram's flood limits) and a
// scripted OpenAI-compatible model (llmtest) on 127.0.0.1. N chats each
// upload a file, then ask for visits to pages nobody on the project wrote
// (the Go distribution's and Debian's HTML manuals, served from httptest):
// the model navigates there (a page snapshot under .playwright-mcp/; a big
// page's result saved under results/), takes a snapshot on every other
// visit and a screenshot on every fourth (an image in the private folder),
// and answers; every few messages the chat sends /new (an archived
// transcript). The messages go out at a target rate, each chat waiting for
// its answer. Every few seconds the data directory is walked: its bytes
// and files, by kind and by chat. At the end: a Markdown table, the growth
// over the last part of the run and the peaks, each chat's use (beside
// what /usage says of it), the messages answered, that nothing the budget
// must spare was removed (uploads, live transcripts and their images,
// browser state), and the bot's warnings and errors.
//
//	go build -o bin/volcanicbot ./cmd/volcanicbot
//	go run ./bench/disk-soak -bin bin/volcanicbot -npm tools/npm/node_modules/.bin \
//	  [-chats 50] [-duration 10m] [-rate 4.6] [-budget-mb 3] [-new-every 4]
//
// See bench/disk-soak/run.sh and docs/performance.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type options struct {
	bin, npm, chromium, goroot string
	chats                      int
	duration, every, row       time.Duration
	rate                       float64
	budgetMB                   int
	newEvery                   int
	keep                       bool
	csv                        string
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/volcanicbot", "the volcanicbot binary")
	flag.StringVar(&o.npm, "npm", "tools/npm/node_modules/.bin", "the folder of playwright-mcp")
	flag.StringVar(&o.chromium, "chromium", "/usr/bin/chromium", "the browser")
	flag.StringVar(&o.goroot, "goroot", "", "the Go root whose doc/ pages are browsed (default: go env GOROOT)")
	flag.IntVar(&o.chats, "chats", 50, "chats")
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long the chats send messages")
	flag.Float64Var(&o.rate, "rate", 4.6, "messages a second sent by all chats together, at most (each chat waits for its answer)")
	flag.IntVar(&o.budgetMB, "budget-mb", 3, "CHAT_DISK_BUDGET_MB (1048576: the budget effectively off)")
	flag.IntVar(&o.newEvery, "new-every", 4, "every n-th message of a chat is /new")
	flag.DurationVar(&o.every, "sample", 5*time.Second, "how often the data directory is measured")
	flag.DurationVar(&o.row, "row", time.Minute, "a table row every this long")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary folder (data directory and log)")
	flag.StringVar(&o.csv, "csv", "", "write every sample to this CSV file")
	flag.Parse()
	if o.goroot == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "disk-soak: -goroot is not set and go env GOROOT failed:", err)
			os.Exit(1)
		}
		o.goroot = strings.TrimSpace(string(out))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "disk-soak:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	var err error
	if o.bin, err = filepath.Abs(o.bin); err != nil {
		return err
	}
	if o.npm, err = filepath.Abs(o.npm); err != nil {
		return err
	}
	for _, p := range []string{o.bin, filepath.Join(o.npm, "playwright-mcp"), o.chromium} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s is missing (make build; npm ci in tools/npm; apt-get install chromium)", p)
		}
	}
	st, err := serveSite(pages(o.goroot))
	if err != nil {
		return err
	}
	defer st.Close()
	tmp, err := os.MkdirTemp("", "disk-soak-*")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "disk-soak: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	s, err := start(o, tmp, st)
	defer s.stop() // also a bot that started but never became healthy
	if err != nil {
		return err
	}
	return s.soak(ctx)
}
