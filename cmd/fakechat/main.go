// Command fakechat lets a person try the real volcanicbot binary with no
// Telegram account and no LLM key: it serves a fake Telegram Bot API and a
// fake OpenAI-compatible model on 127.0.0.1, prints the environment to run
// the bot with, and then turns each line typed on stdin into a Telegram
// message from user 1 and prints what the bot sends back (photos and
// documents are saved to a folder).
//
// The fake model is a tiny script, so every tool can be driven by hand:
//
//	call <tool> <json args>   the model calls that tool, then reports its result
//	press <button label>      presses that button of the newest message with buttons
//	slow <text>               the model answers "You said: slow <text>" word by word,
//	                          300 ms apart: the bot streams it (drafts, in this private chat)
//	photo <path> [caption]    sends that image file as a Telegram photo
//	file <path> [caption]     sends that file as a Telegram document
//	anything else             the model answers "You said: …"
//
// Commands (/mcp, /new, /stop, …) go to the bot as they are. See
// docs/manual-testing.md.
//
//	go run ./cmd/fakechat [-out DIR]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/telegram/telegramtest"
)

const user = 1

func main() {
	out := flag.String("out", "fakechat-files", "folder for photos and documents the bot sends")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "fakechat:", err)
		os.Exit(1)
	}
}

func run(outDir string) error {
	tg := telegramtest.Start(telegramtest.Options{})
	defer tg.Close()
	model, err := serveModel()
	if err != nil {
		return err
	}
	defer model.Close()

	fmt.Printf(`fake Telegram Bot API: %s
fake model (OpenAI-compatible): %s

Run the bot in another terminal with:

  TELEGRAM_BOT_TOKEN=%s \
  TELEGRAM_API_URL=%s \
  TELEGRAM_ALLOWED_USERS=%d \
  LLM_PROVIDER=openai LLM_MODEL=fake OPENAI_API_KEY=sk-fake-key OPENAI_BASE_URL=%s \
  make run

Then type messages here (as user %d). "call <tool> <json>" makes the model call a tool;
"press <label>" presses a button; "photo <path> [caption]" and "file <path> [caption]" send a file.
`, tg.URL(), model.URL, tg.Token(), tg.URL(), user, model.URL, user)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go printReplies(ctx, tg, outDir)

	lines := make(chan string)
	go func() { // stdin cannot be interrupted: read it on the side
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			lines <- in.Text()
		}
		close(lines)
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				<-ctx.Done() // stdin closed: keep serving until Ctrl-C
				return nil
			}
			if line = strings.TrimSpace(line); line != "" {
				if err := sendLine(tg, line); err != nil {
					fmt.Println("fakechat:", err)
				}
			}
		}
	}
}

// sendLine sends what the user typed: a photo, a file or a text message.
func sendLine(tg *telegramtest.Fake, line string) error {
	kind, rest, _ := strings.Cut(line, " ")
	if kind == "press" {
		return press(tg, strings.TrimSpace(rest))
	}
	if kind != "photo" && kind != "file" {
		tg.Message(user, user, line)
		return nil
	}
	path, caption, _ := strings.Cut(strings.TrimSpace(rest), " ")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if kind == "photo" {
		tg.Photo(user, user, data, caption)
		return nil
	}
	tg.Document(user, user, filepath.Base(path), mime.TypeByExtension(filepath.Ext(path)), data, 0, caption)
	return nil
}

// press presses the button labelled label (or whose label starts with
// it) of the newest message that has buttons, and prints the bot's answer
// to the press.
func press(tg *telegramtest.Fake, label string) error {
	msgs := tg.Sent(user)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		for _, row := range m.Keyboard {
			for _, b := range row {
				if b.Text == label || strings.HasPrefix(b.Text, label) || strings.Contains(b.Text, " "+label) {
					id := tg.Callback(user, user, m.ID, b.Data)
					go func() {
						if a, err := tg.WaitAnswer(id, 10*time.Second); err == nil {
							alert := ""
							if a.ShowAlert {
								alert = " (alert)"
							}
							fmt.Printf("bot (answers the press%s): %s\n", alert, a.Text)
						}
					}()
					return nil
				}
			}
		}
	}
	return fmt.Errorf("no message has a button %q", label)
}

// buttons is a message's keyboard as text: "[Approve] [Deny]", a row a
// line.
func buttons(m telegramtest.Message) string {
	var b strings.Builder
	for _, row := range m.Keyboard {
		b.WriteString("\n    ")
		for _, btn := range row {
			fmt.Fprintf(&b, "[%s] ", btn.Text)
		}
	}
	return b.String()
}

// printReplies prints every message the bot sends to the user's chat, once
// it is final (the progress message is shown as it is edited).
func printReplies(ctx context.Context, tg *telegramtest.Fake, outDir string) {
	seen := map[int]string{}
	drafts := 0
	for ctx.Err() == nil {
		if d := tg.Drafts(user); len(d) > drafts {
			drafts = len(d)
			fmt.Printf("bot (draft): %s\n", d[len(d)-1].Text)
		}
		for _, m := range tg.Sent(user) {
			state := fmt.Sprintf("%s|%v|%d|%v", m.Text, m.Deleted, len(m.History), m.Keyboard)
			if seen[m.ID] == state {
				continue
			}
			first := seen[m.ID] == ""
			seen[m.ID] = state
			switch {
			case m.File != nil:
				if err := os.MkdirAll(outDir, 0o755); err == nil {
					p := filepath.Join(outDir, fmt.Sprintf("%d-%s", m.ID, filepath.Base(m.File.Filename)))
					_ = os.WriteFile(p, m.File.Data, 0o644)
					fmt.Printf("bot: [%s %s, %d bytes → %s] %s\n", m.Method, m.File.Filename, len(m.File.Data), p, m.Text)
				}
			case m.Deleted:
				fmt.Printf("bot: (progress message removed)\n")
			case first:
				fmt.Printf("bot: %s%s\n", m.Text, buttons(m))
			default:
				fmt.Printf("bot (edited): %s%s\n", m.Text, buttons(m))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// modelServer is a fake chat-completions endpoint.
type modelServer struct {
	URL string
	srv *http.Server
}

func (m *modelServer) Close() { _ = m.srv.Close() }

func serveModel() (*modelServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	n := 0
	mux := http.NewServeMux()
	mux.HandleFunc("POST /chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req struct {
			Stream        bool `json:"stream"`
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		n++
		id := n
		mu.Unlock()
		msg := answer(req.Messages, id)
		// A made-up count (4 bytes a token), so that /usage has something to show.
		usage := map[string]any{"prompt_tokens": len(body) / 4, "completion_tokens": 10, "total_tokens": len(body)/4 + 10}
		if req.Stream {
			if !req.StreamOptions.IncludeUsage {
				usage = nil
			}
			streamAnswer(w, r, msg, id, usage)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", id), "object": "chat.completion", "created": time.Now().Unix(), "model": "fake",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish(msg)}},
			"usage":   usage,
		})
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &modelServer{URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

// streamAnswer writes msg as a chat-completions stream: its text word by
// word, 300 ms apart when it answers "slow …", so that the bot streams it;
// then, when the request asked for it (stream_options.include_usage), a
// last chunk with no choices and the usage, as OpenAI sends it.
func streamAnswer(w http.ResponseWriter, r *http.Request, msg map[string]any, id int, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", id), "object": "chat.completion.chunk",
			"created": time.Now().Unix(), "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	content, _ := msg["content"].(string)
	slow := strings.HasPrefix(content, "You said: slow ")
	for i, word := range strings.SplitAfter(content, " ") {
		if slow && i > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
		chunk(map[string]any{"content": word}, nil)
	}
	if calls, ok := msg["tool_calls"].([]any); ok {
		for i, c := range calls {
			call := c.(map[string]any)
			call["index"] = i
			chunk(map[string]any{"tool_calls": []any{call}}, nil)
		}
	}
	chunk(map[string]any{}, finish(msg))
	if usage != nil {
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("chatcmpl-%d", id), "object": "chat.completion.chunk",
			"created": time.Now().Unix(), "model": "fake", "choices": []any{}, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func finish(msg map[string]any) string {
	if _, ok := msg["tool_calls"]; ok {
		return "tool_calls"
	}
	return "stop"
}

// answer is the script: after tool results, report them; on "call <tool>
// <json>", call it; otherwise echo.
func answer(msgs []struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}, id int) map[string]any {
	// Tool results are reported only when they are the newest messages (a
	// turn stopped with /stop leaves results behind the next user message).
	// The images of tool results follow them in one user message.
	end := len(msgs)
	if end >= 2 && msgs[end-1].Role == "user" && msgs[end-2].Role == "tool" {
		end--
	}
	var results []string
	for i := end - 1; i >= 0 && msgs[i].Role == "tool"; i-- {
		results = append([]string{text(msgs[i].Content)}, results...)
	}
	if len(results) > 0 {
		joined := strings.Join(results, "\n\n")
		if len(joined) > 3000 {
			joined = joined[:3000] + "\n…"
		}
		return map[string]any{"role": "assistant", "content": "The tool answered:\n\n" + joined}
	}
	var last string
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			last = text(msgs[i].Content)
			break
		}
	}
	if rest, ok := strings.CutPrefix(last, "call "); ok {
		name, args, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": fmt.Sprintf("call_%d", id), "type": "function",
			"function": map[string]any{"name": name, "arguments": args},
		}}}
	}
	return map[string]any{"role": "assistant", "content": "You said: " + last}
}

// text reads a message's content: a string or a list of parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return string(raw)
}
