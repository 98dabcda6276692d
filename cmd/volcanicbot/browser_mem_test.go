package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkBrowserMemory reports what live browsers cost: the proportional
// set size (PSS: shared pages split between the processes sharing them) of
// the bot and every process it started, with one chat's browser open, and
// per extra chat with a browser open. Not a speed benchmark: run it once.
//
//	go test -run '^$' -bench BrowserMemory -benchtime 1x ./cmd/volcanicbot
func BenchmarkBrowserMemory(b *testing.B) {
	env := browserEnv(b)
	srv := site(b)
	env = append(env, "TELEGRAM_ALLOWED_USERS=100,200,300,400") // the last entry wins
	d := startDaemon(b, browse, daemonOptions{extra: env})
	owner := ownerMark(d.dataDir)
	total := func() (bot, children int64) {
		bot = pss(os.Getpid())
		for _, pid := range markedPIDs(owner) {
			children += pss(pid)
		}
		return bot, children
	}
	botIdle, _ := total()
	chats := []int64{alice, bob, 300, 400}
	var after []int64
	for i, chat := range chats {
		d.tg.Message(chat, chat, fmt.Sprintf("read %s/page-%d", srv.URL, i))
		d.waitText(chat, "The H1 is:")
		time.Sleep(time.Second) // let the browser settle
		bot, kids := total()
		after = append(after, bot+kids)
		if i == 0 {
			b.ReportMetric(float64(bot)/1024, "MB-bot")
			b.ReportMetric(float64(kids)/1024, "MB-first-browser")
		}
	}
	perExtra := float64(after[len(after)-1]-after[0]) / float64(len(after)-1)
	b.ReportMetric(float64(after[0])/1024, "MB-bot+1-browser")
	b.ReportMetric(perExtra/1024, "MB-per-extra-browser")
	b.Logf("bot alone %.1f MB; bot + 1 live browser %.1f MB; +%.1f MB per extra chat with a live browser (PSS)",
		float64(botIdle)/1024, float64(after[0])/1024, perExtra/1024)
}

// pss is a process's proportional set size in KB (0 if unreadable).
func pss(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
