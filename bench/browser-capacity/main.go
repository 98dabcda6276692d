// Command browser-capacity measures what browsing chats cost: N chats each
// open a page served from 127.0.0.1 and snapshot it through the bot's own
// MCP client with the real @playwright/mcp and Chromium, then the memory of
// every process below this one is read (PSS, from
// /proc/<pid>/smaps_rollup) and the first call's latency is reported cold
// (server and browser start with the call), prewarmed (started ahead, as
// the bot does when a chat that browses writes) and warm.
//
//	go run ./bench/browser-capacity [-modes persistent,lean,cdp,shared] [-n 1,2,5,10] [-r 1]
//
// Modes:
//
//	persistent  the preset's default: a playwright-mcp and a Chromium per chat, the profile on disk
//	lean        persistent, with the preset's lean Chromium flags (PLAYWRIGHT_LEAN, the default)
//	cdp         one shared Chromium (--remote-debugging-port), a playwright-mcp per chat
//	            connecting over CDP with an isolated context (PLAYWRIGHT_CDP_ENDPOINT)
//	shared      one shared playwright-mcp over HTTP (--port --isolated), an MCP session and a
//	            browser context per chat
//
// It prints one row per mode and N: total PSS of the processes, PSS per chat,
// the marginal cost of a chat (the slope from N=1), where the memory is by
// process kind, and the latencies (medians over the chats).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/chatdir"
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/preset"
)

func main() {
	modes := flag.String("modes", "persistent,lean,cdp,shared", "modes to measure, comma-separated")
	counts := flag.String("n", "1,2,5,10", "numbers of chats, comma-separated")
	rounds := flag.Int("r", 1, "rounds (each mode and N once a round, alternating); medians are reported")
	npmBin := flag.String("npm-bin", "tools/npm/node_modules/.bin", "folder holding playwright-mcp")
	chromium := flag.String("chromium", "/usr/bin/chromium", "the browser")
	page := flag.String("page", "", "HTML page to serve (default: $(go env GOROOT)/doc/go_mem.html, an article; go_spec.html is a heavy one)")
	flag.Parse()
	if err := run(*modes, *counts, *rounds, *npmBin, *chromium, *page); err != nil {
		fmt.Fprintln(os.Stderr, "browser-capacity:", err)
		os.Exit(1)
	}
}

type bench struct {
	npmBin, chromium, url string
	work                  string
}

type row struct {
	mode              string
	n                 int
	total             int64 // bytes
	kinds             map[string]int64
	cold, warm, prewm time.Duration
}

func run(modes, counts string, rounds int, npmBin, chromium, page string) error {
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
	npmBin, err = filepath.Abs(npmBin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(npmBin, "playwright-mcp")); err != nil {
		return fmt.Errorf("%w (run npm ci in tools/npm)", err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(html)
	}))
	defer site.Close()
	work, err := os.MkdirTemp("", "browser-capacity-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b := &bench{npmBin: npmBin, chromium: chromium, url: site.URL + "/spec", work: work}

	var ns []int
	for _, s := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-n: %q is not a number of chats", s)
		}
		ns = append(ns, n)
	}
	results := map[string][]row{}
	for r := range rounds {
		for _, mode := range strings.Split(modes, ",") {
			for _, n := range ns {
				res, err := b.measure(mode, n)
				if err != nil {
					return fmt.Errorf("%s, %d chats: %w", mode, n, err)
				}
				fmt.Fprintf(os.Stderr, "round %d %-10s n=%-2d total %6.0f MiB  cold %5d ms  prewarmed %5d ms  warm %4d ms  %s\n",
					r+1, mode, n, mib(res.total), res.cold.Milliseconds(), res.prewm.Milliseconds(), res.warm.Milliseconds(), kinds(res.kinds))
				key := mode + "/" + strconv.Itoa(n)
				results[key] = append(results[key], res)
			}
		}
	}
	fmt.Println("| mode | chats | total PSS | per chat | each chat after the first | where (MiB) | first call cold | prewarmed | warm |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, mode := range strings.Split(modes, ",") {
		one := medianRow(results[mode+"/1"])
		for _, n := range ns {
			m := medianRow(results[mode+"/"+strconv.Itoa(n)])
			marginal := "—"
			if n > 1 && one.total > 0 {
				marginal = fmt.Sprintf("%.0f MiB", mib((m.total-one.total)/int64(n-1)))
			}
			fmt.Printf("| %s | %d | %.0f MiB | %.0f MiB | %s | %s | %d ms | %d ms | %d ms |\n", mode, n, mib(m.total),
				mib(m.total/int64(n)), marginal, kinds(m.kinds), m.cold.Milliseconds(), m.prewm.Milliseconds(), m.warm.Milliseconds())
		}
	}
	return nil
}

// measure runs n chats in one mode and returns what they cost.
func (b *bench) measure(mode string, n int) (row, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp(b.work, mode+"-*")
	if err != nil {
		return row{}, err
	}
	pw := preset.Playwright{
		Enabled:        ptr(true),
		Command:        filepath.Join(b.npmBin, "playwright-mcp"),
		ExecutablePath: b.chromium,
		NoSandbox:      ptr(true),
	}
	var stopShared func()
	switch mode {
	case "persistent": // Playwright's own launch flags
	case "lean":
		pw.StateDir = filepath.Join(dir, "state")
	case "shared":
		pw.StateDir = filepath.Join(dir, "state")
		pw.Shared = ptr(true)
	case "cdp":
		endpoint, stop, err := startChromium(ctx, b.chromium, filepath.Join(dir, "sidecar-profile"))
		if err != nil {
			return row{}, err
		}
		stopShared = stop
		pw.StateDir = filepath.Join(dir, "state")
		pw.CDPEndpoint = endpoint
	default:
		return row{}, fmt.Errorf("unknown mode %q", mode)
	}
	cfg := pw.Server()
	if stopShared != nil {
		defer stopShared()
	}
	cfg.MaxLive = 0
	client := mcpclient.New(mcpclient.Options{
		Servers: []mcpconfig.ServerConfig{cfg}, Env: hostEnv{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ClientName: "browser-capacity", ClientVersion: "0",
	})
	defer client.Close()
	for _, sc := range client.Discover(ctx) {
		if sc.Err != nil {
			return row{}, sc.Err
		}
	}
	tools, _ := client.Tools(ctx)
	navigate, snapshot, ok1, ok2 := find(tools, "browser_navigate"), find(tools, "browser_snapshot"), false, false
	ok1, ok2 = navigate.Name != "", snapshot.Name != ""
	if !ok1 || !ok2 {
		return row{}, fmt.Errorf("the server lists no browser_navigate/browser_snapshot (%d tools)", len(tools))
	}

	res := row{mode: mode, n: n}
	var colds, prewarms []time.Duration
	sessions := make([]*mcpclient.Session, n)
	for i := range n {
		ws, private := chatdir.New(dir).Workspace(chat.In(int64(i))), chatdir.New(dir).Private(chat.In(int64(i)))
		for _, d := range []string{ws, private} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return row{}, err
			}
		}
		s, err := client.NewSession(ws, private)
		if err != nil {
			return row{}, err
		}
		sessions[i] = s
		// Every other chat is prewarmed: its server starts, then a model
		// "thinks" for 3 s before the first call.
		prewarmed := i%2 == 1
		if prewarmed {
			s.Prewarm(cfg.Name)
			time.Sleep(3 * time.Second)
		}
		start := time.Now()
		if err := browse(ctx, s, navigate, snapshot, fmt.Sprintf("%s?chat=%d", b.url, i)); err != nil {
			return row{}, fmt.Errorf("chat %d: %w", i, err)
		}
		if prewarmed {
			prewarms = append(prewarms, time.Since(start))
		} else {
			colds = append(colds, time.Since(start))
		}
	}
	start := time.Now()
	if err := browse(ctx, sessions[0], navigate, snapshot, b.url+"?again"); err != nil {
		return row{}, err
	}
	res.warm = time.Since(start)
	res.cold, res.prewm = median(colds), median(prewarms)
	time.Sleep(time.Second) // let the pages settle
	res.total, res.kinds = treeMemory(os.Getpid())
	return res, nil
}

// browse opens url and snapshots it: what a chat's first browser step does.
func browse(ctx context.Context, s *mcpclient.Session, navigate, snapshot mcpclient.Tool, url string) error {
	args, _ := json.Marshal(map[string]string{"url": url})
	for _, call := range []struct {
		tool mcpclient.Tool
		args []byte
	}{{navigate, args}, {snapshot, []byte(`{}`)}} {
		r, err := s.Call(ctx, call.tool, call.args)
		if err != nil {
			return err
		}
		if r.IsError {
			return fmt.Errorf("%s: %s", call.tool.Name, r.Text())
		}
	}
	return nil
}

func find(tools []mcpclient.Tool, name string) mcpclient.Tool {
	for _, t := range tools {
		if t.Name == name {
			return t
		}
	}
	return mcpclient.Tool{}
}

// sidecarFeatures are turned off in the CDP sidecar as compose.yaml's
// browser profile does: the address bar's popups (a renderer per context).
const sidecarFeatures = "WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup,Translate,MediaRouter,OptimizationHints"

// startChromium starts one headless Chromium with a DevTools port on
// 127.0.0.1 and returns its CDP endpoint.
func startChromium(ctx context.Context, chromium, profile string) (string, func(), error) {
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--user-data-dir="+profile, "--no-first-run", "--disable-features="+sidecarFeatures, "about:blank")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }
	for ctx.Err() == nil {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if err == nil {
			if port, _, ok := strings.Cut(string(b), "\n"); ok {
				return "http://127.0.0.1:" + port, stop, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("chromium wrote no DevToolsActivePort")
}

// treeMemory is the PSS of every process below pid (pid itself left out),
// and how it splits by kind: node, the browser process, renderers, the GPU
// process, utilities, zygotes.
func treeMemory(pid int) (int64, map[string]int64) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, nil
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return 0, nil
	}
	children := map[int][]procfs.Proc{}
	for _, p := range procs {
		if st, err := p.Stat(); err == nil {
			children[st.PPID] = append(children[st.PPID], p)
		}
	}
	var total int64
	kinds := map[string]int64{}
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = append(queue[1:], children[p.PID]...)
		sm, err := p.ProcSMapsRollup()
		if err != nil {
			continue
		}
		args, _ := p.CmdLine()
		total += int64(sm.Pss)
		kinds[kind(args)] += int64(sm.Pss)
	}
	return total, kinds
}

func kind(cmdline []string) string {
	// Chromium rewrites its children's command lines into one string.
	args := strings.Fields(strings.Join(cmdline, " "))
	if len(args) == 0 {
		return "other"
	}
	if strings.HasSuffix(args[0], "node") {
		return "node"
	}
	for _, a := range args {
		if t, ok := strings.CutPrefix(a, "--type="); ok {
			return t
		}
	}
	if strings.Contains(args[0], "chrom") {
		return "browser"
	}
	return filepath.Base(args[0])
}

func kinds(k map[string]int64) string {
	names := make([]string, 0, len(k))
	for n := range k {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return int(k[b] - k[a]) })
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.0f", n, mib(k[n])))
	}
	return strings.Join(parts, ", ")
}

func medianRow(rows []row) row {
	if len(rows) == 0 {
		return row{}
	}
	slices.SortFunc(rows, func(a, b row) int { return int(a.total - b.total) })
	m := rows[len(rows)/2]
	var colds, warms, prewarms []time.Duration
	for _, r := range rows {
		colds, warms, prewarms = append(colds, r.cold), append(warms, r.warm), append(prewarms, r.prewm)
	}
	m.cold, m.warm, m.prewm = median(colds), median(warms), median(prewarms)
	return m
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func ptr[T any](v T) *T { return &v }

// hostEnv is the bench's environment for the servers: this process's own.
type hostEnv struct{}

func (hostEnv) Apply(explicit map[string]*string) []string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range explicit {
		if v == nil {
			delete(env, k)
		} else {
			env[k] = *v
		}
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func (hostEnv) Lookup(name string) (string, bool) { return os.LookupEnv(name) }
