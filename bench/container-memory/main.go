// Command container-memory measures what the bot needs in its container:
// the real image, with a fake Bot API, a scripted model and a page served
// from 127.0.0.1 here (run the container with --network host). It prints
// the environment to run the bot with, waits for the bot's first poll, and
// reads the container's memory cgroup idle and then with 1, 5 and 10 chats
// that have browsed (browser_navigate, browser_snapshot and
// browser_take_screenshot of the page, their browser contexts kept):
//
//	go run ./bench/container-memory -cgroup '/sys/fs/cgroup/system.slice/docker-*.scope' [-env FILE] [-n 1,5,10] [-page file.html]
//
// -cgroup is the container's memory cgroup directory, or a pattern that
// matches it alone once the container runs (it is looked up after the
// bot's first poll): cgroup v2 (memory.current) or v1's memory controller
// (memory.usage_in_bytes, /sys/fs/cgroup/memory/…). -env writes the
// environment to FILE as export lines, for a script that starts the
// container.
//
// Columns: the cgroup's usage (what a memory limit counts, page cache
// included), anonymous memory, page cache, what `docker stats` shows (the
// usage minus inactive page cache), the cgroup's peak since the container
// started, and the resident memory (RSS) of the container's processes by
// kind.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

func main() {
	cgroup := flag.String("cgroup", "", "the container's memory cgroup directory, or a pattern matching it alone (required)")
	envFile := flag.String("env", "", "write the bot's environment to this file (export lines)")
	counts := flag.String("n", "1,5,10", "numbers of browsing chats, comma-separated, ascending")
	page := flag.String("page", "", "HTML page to browse (default: $(go env GOROOT)/doc/go_mem.html, an article)")
	settle := flag.Duration("settle", 10*time.Second, "how long memory is sampled after each step (the last sample and the largest are shown)")
	flag.Parse()
	if err := run(*cgroup, *envFile, *counts, *page, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "container-memory:", err)
		os.Exit(1)
	}
}

func run(cgroup, envFile, counts, page string, settle time.Duration) error {
	if cgroup == "" {
		return errors.New("-cgroup is required")
	}
	var ns []int
	for _, s := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || len(ns) > 0 && n <= ns[len(ns)-1] {
			return fmt.Errorf("-n: %q: positive numbers, ascending", counts)
		}
		ns = append(ns, n)
	}
	if page == "" {
		root, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return fmt.Errorf("go env GOROOT: %w", err)
		}
		page = filepath.Join(strings.TrimSpace(string(root)), "doc", "go_mem.html")
	}
	html, err := os.ReadFile(page)
	if err != nil {
		return err
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(html)
	}))
	defer site.Close()

	tg := telegramtest.Start(telegramtest.Options{Limits: &telegramtest.NoLimits})
	defer tg.Close()
	var mu sync.Mutex
	var failures []string
	model := llmtest.Start(llm.ProviderOpenAI, func(req llmtest.Request) llmtest.Reply { return script(req, site.URL) },
		func(format string, args ...any) {
			mu.Lock()
			failures = append(failures, fmt.Sprintf(format, args...))
			mu.Unlock()
		})
	defer model.Close()

	users := make([]string, ns[len(ns)-1])
	for i := range users {
		users[i] = strconv.Itoa(i + 1)
	}
	env := fmt.Sprintf("export TELEGRAM_BOT_TOKEN=%s TELEGRAM_API_URL=%s TELEGRAM_ALLOWED_USERS=%s\n"+
		"export LLM_PROVIDER=openai LLM_MODEL=fake OPENAI_API_KEY=sk-fake-key OPENAI_BASE_URL=%s\n",
		tg.Token(), tg.URL(), strings.Join(users, ","), model.URL)
	if envFile != "" {
		if err := os.WriteFile(envFile, []byte(env), 0o600); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "Run the image on this host's network with:\n\n%s\nwaiting for its first getUpdates…\n", env)
	if _, err := tg.WaitFor("getUpdates", 1, 10*time.Minute); err != nil {
		return err
	}
	dirs, err := filepath.Glob(cgroup)
	if err != nil || len(dirs) != 1 {
		return fmt.Errorf("-cgroup %s matches %d directories (%v), want one", cgroup, len(dirs), err)
	}
	cgroup = dirs[0]

	fmt.Println("| browsing chats | cgroup usage | anon | page cache | docker stats | peak | RSS by process (MiB) |")
	fmt.Println("|---|---|---|---|---|---|---|")
	report := func(label string) error {
		s, err := sample(cgroup, settle)
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", label, mib(s.current), mib(s.anon), mib(s.file),
			mib(s.current-s.inactiveFile), mib(s.peak), s.kinds)
		return nil
	}
	if err := report("0 (idle)"); err != nil {
		return err
	}
	done := 0
	for _, n := range ns {
		for chat := done + 1; chat <= n; chat++ {
			tg.Message(int64(chat), int64(chat), fmt.Sprintf("%s %d", askText, chat))
		}
		for chat := done + 1; chat <= n; chat++ {
			if err := waitAnswer(tg, int64(chat), 5*time.Minute); err != nil {
				return fmt.Errorf("chat %d: %w; sent %q", chat, err, tg.Texts(int64(chat)))
			}
		}
		done = n
		if err := report(strconv.Itoa(n)); err != nil {
			return err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		return fmt.Errorf("the model fake: %s", strings.Join(failures, "; "))
	}
	return nil
}

// askText starts each chat's message.
const askText = "browse for chat"

// doneMarker ends the answer of a chat that browsed.
const doneMarker = "[browsed]"

// script is the model: after the user's message it opens the page,
// snapshots it, takes a screenshot (which comes back as an image), then
// answers.
func script(req llmtest.Request, url string) llmtest.Reply {
	msgs, _ := req.JSON["messages"].([]any)
	last := -1 // the user's message (not the one that carries a screenshot)
	for i, raw := range msgs {
		if m, _ := raw.(map[string]any); m["role"] == "user" && strings.Contains(fmt.Sprint(m["content"]), askText) {
			last = i
		}
	}
	tools := 0 // tool results since
	for _, raw := range msgs[last+1:] {
		if m, _ := raw.(map[string]any); m["role"] == "tool" {
			tools++
		}
	}
	call := func(name, args string) llmtest.Reply {
		return llmtest.ToolCalls(llm.ToolCall{ID: fmt.Sprintf("call_%d", time.Now().UnixNano()), Name: name, Arguments: json.RawMessage(args)})
	}
	switch tools {
	case 0:
		return call("browser_navigate", fmt.Sprintf(`{"url":%q}`, url+"/article"))
	case 1:
		return call("browser_snapshot", `{}`)
	case 2:
		return call("browser_take_screenshot", `{}`) // deferred by tool search: called by name
	}
	return llmtest.Text("I read the page. " + doneMarker)
}

func waitAnswer(tg *telegramtest.Fake, chat int64, timeout time.Duration) error {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, m := range tg.Sent(chat) {
			if !m.Deleted && strings.Contains(m.Text, doneMarker) {
				return nil
			}
		}
	}
	return errors.New("no answer in time")
}

type memory struct {
	current, anon, file, inactiveFile, peak int64
	kinds                                   string
}

// sample reads the cgroup once a second for d and returns the last
// reading, with the largest memory.current seen as peak when the kernel
// keeps no memory.peak.
func sample(cgroup string, d time.Duration) (memory, error) {
	var last memory
	var most int64
	for end := time.Now().Add(d); ; time.Sleep(time.Second) {
		m, err := read(cgroup)
		if err != nil {
			return memory{}, err
		}
		most = max(most, m.current)
		last = m
		if time.Now().After(end) {
			break
		}
	}
	if last.peak == 0 {
		last.peak = most
	}
	return last, nil
}

// read reads the cgroup's memory: v2's files, or v1's memory controller.
func read(cgroup string) (memory, error) {
	var m memory
	usage, peak, prefix := "memory.current", "memory.peak", "" // cgroup v2
	if _, err := os.Stat(filepath.Join(cgroup, usage)); err != nil {
		usage, peak, prefix = "memory.usage_in_bytes", "memory.max_usage_in_bytes", "total_" // v1, the hierarchy's totals
	}
	b, err := os.ReadFile(filepath.Join(cgroup, usage))
	if err != nil {
		return m, err
	}
	m.current, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if b, err := os.ReadFile(filepath.Join(cgroup, peak)); err == nil {
		m.peak, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	stat, err := os.ReadFile(filepath.Join(cgroup, "memory.stat"))
	if err != nil {
		return m, err
	}
	anon, file := "anon", "file"
	if prefix != "" {
		anon, file = "rss", "cache"
	}
	sc := bufio.NewScanner(bytes.NewReader(stat))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case prefix + anon:
			m.anon = n
		case prefix + file:
			m.file = n
		case prefix + "inactive_file":
			m.inactiveFile = n
		}
	}
	m.kinds = rssByKind(cgroup)
	return m, nil
}

// rssByKind sums VmRSS of the cgroup's processes (its sub-cgroups
// included) by command name.
func rssByKind(cgroup string) string {
	kinds := map[string]int64{}
	_ = filepath.WalkDir(cgroup, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != "cgroup.procs" {
			return nil
		}
		procs, _ := os.ReadFile(path)
		for _, pid := range strings.Fields(string(procs)) {
			status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
			if err != nil {
				continue
			}
			var name string
			var rss int64
			for _, line := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(line, "Name:"); ok {
					name = strings.TrimSpace(v)
				}
				if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
					rss = kb << 10
				}
			}
			kinds[kind(name)] += rss
		}
		return nil
	})
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return kinds[names[i]] > kinds[names[j]] })
	var parts []string
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, float64(kinds[k])/(1<<20)))
	}
	return strings.Join(parts, ", ")
}

func kind(name string) string {
	switch {
	case slices.Contains([]string{"chromium", "chrome"}, name) || strings.HasPrefix(name, "chrom"):
		return "chromium"
	case name == "volcanicbot":
		return "bot"
	case name == "node" || strings.HasPrefix(name, "playwright"), strings.HasPrefix(name, "MainThread"):
		return "node"
	}
	return name
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
