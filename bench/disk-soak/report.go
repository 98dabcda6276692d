package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
)

var usageRe = regexp.MustCompile(`Disk: (.+?) of this chat's (.+?) for files`)

// report prints the run's tables and checks, after asking each chat's
// /usage and stopping the bot.
func (s *soaker) report(elapsed time.Duration, samples []sample) error {
	out := os.Stdout
	budget := int64(s.o.budgetMB) << 20
	s.mu.Lock()
	var sent, answered int
	for _, id := range s.ids {
		sent += s.sent[id]
		answered += s.answered[id]
	}
	s.mu.Unlock()
	fmt.Fprintf(out, "\n### %d chats, CHAT_DISK_BUDGET_MB=%d, %s, /new every %d messages, at most %.1f messages/s\n\n",
		s.o.chats, s.o.budgetMB, clock(elapsed), s.o.newEvery, s.o.rate)
	fmt.Fprintf(out, "answered in time: %d of %d messages (%.2f a second)\n\n", answered, sent, float64(answered)/elapsed.Seconds())
	table(out, samples, s.o.chats, s.o.row)
	fmt.Fprintln(out)
	growth(out, samples, s.o.chats, budget, 2.0/3)
	if s.o.csv != "" {
		if err := writeCSV(s.o.csv, samples, s.o.chats); err != nil {
			return err
		}
	}

	// What /usage says of each chat, beside what the walk counts.
	usage := map[int64]string{}
	for _, id := range s.ids {
		before := s.countText(id, "Disk: ")
		s.tg.Message(id, id, "/usage")
		_ = s.tg.WaitUntil(func() bool { return s.countText(id, "Disk: ") > before }, time.Minute)
		for _, m := range s.tg.Sent(id) {
			if g := usageRe.FindStringSubmatch(m.Text); g != nil {
				usage[id] = g[1] + " of " + g[2]
			}
		}
	}
	final, err := measure(s.data, elapsed)
	if err != nil {
		return err
	}
	s.chatsTable(final, usage, budget)

	// Late answers, looked for again now.
	s.mu.Lock()
	lateFound, lateMissing := 0, 0
	for id, ks := range s.late {
		for _, k := range ks {
			if s.has(id, marker(k)) {
				lateFound++
			} else {
				lateMissing++
			}
		}
	}
	failures := slices.Clone(s.failures)
	s.mu.Unlock()
	fmt.Fprintf(out, "\nunanswered after %s: %d (answered later: %d); the fake model's complaints: %d\n", answerTimeout, lateMissing, lateFound, len(failures))
	for _, f := range failures[:min(len(failures), 5)] {
		fmt.Fprintln(out, "  model:", f)
	}

	s.stop() // SIGTERM: the browser state of every chat is saved
	s.spared()
	return logReport(filepath.Join(s.tmp, "bot.log"))
}

// chatsTable prints each chat's use at the end: a summary row of the
// smallest, median and largest, and every chat over its budget.
func (s *soaker) chatsTable(final sample, usage map[int64]string, budget int64) {
	out := os.Stdout
	type row struct {
		id      int64
		counted count
		all     count
	}
	var rows []row
	for _, id := range s.ids {
		c := final.chats[id]
		if c == nil {
			c = &chatUse{}
		}
		rows = append(rows, row{id, c.counted(), c.all})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].counted.bytes < rows[j].counted.bytes })
	fmt.Fprintf(out, "\neach chat at the end (%d chats), sorted by what its budget counts:\n\n", len(rows))
	fmt.Fprintln(out, "| chat | counted by its budget | its folders in all | /usage says |")
	fmt.Fprintln(out, "|---|---:|---:|---|")
	for i, r := range rows {
		label := ""
		switch i {
		case 0:
			label = "smallest "
		case len(rows) - 1:
			label = "largest "
		case len(rows) / 2:
			label = "median "
		default:
			if r.counted.bytes <= budget {
				continue
			}
			label = "over budget "
		}
		fmt.Fprintf(out, "| %s%d | %.2f MB, %d files | %.2f MB, %d files | %s |\n", label, r.id, mb(r.counted.bytes), r.counted.files,
			mb(r.all.bytes), r.all.files, usage[r.id])
	}
}

// spared checks, with the bot stopped, what the budget must never remove:
// each chat's upload, its live transcript and the images it shows, its
// saved browser state.
func (s *soaker) spared() {
	layout := chatdir.New(s.data)
	var noUpload, noTranscript, noState []int64
	var lostImages []string
	shown := 0
	for _, id := range s.ids {
		if ups, _ := os.ReadDir(filepath.Join(layout.Workspace(chat.In(id)), "uploads")); len(ups) == 0 {
			noUpload = append(noUpload, id)
		}
		if _, err := os.Stat(filepath.Join(layout.Private(chat.In(id)), "transcript.jsonl")); err != nil {
			noTranscript = append(noTranscript, id)
		}
		if _, err := os.Stat(filepath.Join(layout.Private(chat.In(id)), "browser-state.json")); err != nil {
			noState = append(noState, id)
		}
		live, err := liveImages(layout.Private(chat.In(id)))
		if err != nil {
			fmt.Println("disk-soak:", err)
		}
		for name := range live {
			shown++
			if _, err := os.Stat(filepath.Join(layout.Private(chat.In(id)), name)); err != nil {
				lostImages = append(lostImages, fmt.Sprintf("%d:%s", id, name))
			}
		}
	}
	fmt.Printf("after the stop: chats without their upload %d %v, without their live transcript %d %v, without a saved browser state %d %v; "+
		"images the live transcripts show %d, missing %d %v\n",
		len(noUpload), noUpload, len(noTranscript), noTranscript, len(noState), noState, shown, len(lostImages), lostImages)
}

// logReport prints the bot's warnings and errors, counted by message.
func logReport(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	type seen struct {
		n       int
		example string
	}
	byMsg := map[string]*seen{}
	prunes := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var line struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			line.Level, line.Msg = "NOT JSON", sc.Text()
		}
		if strings.HasPrefix(line.Msg, "the chat's generated files were over its disk budget") {
			prunes++
		}
		if line.Level == "INFO" || line.Level == "DEBUG" {
			continue
		}
		key := line.Level + " " + line.Msg
		if byMsg[key] == nil {
			byMsg[key] = &seen{example: sc.Text()}
		}
		byMsg[key].n++
	}
	fmt.Printf("the bot's log: %d prunes logged; warnings and errors: %d kinds\n", prunes, len(byMsg))
	keys := make([]string, 0, len(byMsg))
	for k := range byMsg {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return byMsg[keys[i]].n > byMsg[keys[j]].n })
	for _, k := range keys {
		ex := byMsg[k].example
		if len(ex) > 400 {
			ex = ex[:400] + "…"
		}
		fmt.Printf("  %d× %s\n      e.g. %s\n", byMsg[k].n, k, ex)
	}
	return sc.Err()
}
