package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/llm/llmtest"
)

// page is one document the site serves: a path under the site and the
// file it serves.
type page struct{ path, file string }

// pages are documents nobody on the project wrote: the Go distribution's
// and Debian's HTML manuals, from a 27 KB article to the 293 KB spec. A
// visit opens the next one, so that every chat's snapshots vary in size as
// a browsing user's do.
func pages(goroot string) []page {
	return []page{
		{"/go/go_mem.html", filepath.Join(goroot, "doc", "go_mem.html")},
		{"/debian/underscore.html", "/usr/share/doc/libjs-underscore/index.html"},
		{"/go/asm.html", filepath.Join(goroot, "doc", "asm.html")},
		{"/debian/xslt.html", "/usr/share/doc/libxslt1-dev/html/xslt.html"},
		{"/debian/node-url.html", "/usr/share/doc/nodejs/api/url.html"},
		{"/go/go_spec.html", filepath.Join(goroot, "doc", "go_spec.html")},
		{"/debian/valgrind-core.html", "/usr/share/doc/valgrind/html/manual-core.html"},
		{"/debian/node-dns.html", "/usr/share/doc/nodejs/api/dns.html"},
	}
}

// site serves pages on 127.0.0.1.
type site struct {
	URL   string
	paths []string
	srv   *http.Server
}

func (s *site) Close() { _ = s.srv.Close() }

// serveSite serves every page that exists on this machine (at least one).
func serveSite(all []page) (*site, error) {
	mux := http.NewServeMux()
	s := &site{}
	for _, p := range all {
		body, err := os.ReadFile(p.file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "disk-soak: %s is missing, not served (%v)\n", p.file, err)
			continue
		}
		s.paths = append(s.paths, p.path)
		mux.HandleFunc("GET "+p.path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(body)
		})
	}
	if len(s.paths) == 0 {
		return nil, fmt.Errorf("none of the pages exists (Go's doc/, Debian's /usr/share/doc)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.URL = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // ends with Close
	return s, nil
}

var (
	visitRe = regexp.MustCompile(`visit (\d+) of (/\S+)`)
	keepRe  = regexp.MustCompile(`keep this file`)
)

// visitText is the user's message of visit k to path; marker is what the
// answer to it ends with.
func visitText(k int, path string) string {
	return fmt.Sprintf("Please visit %d of %s and sum it up.", k, path)
}

func marker(k int) string { return fmt.Sprintf("[v%d]", k) }

const keptMarker = "[kept]"

// script is the model: a visit navigates to the page (the browser saves
// a snapshot under .playwright-mcp/, and a big one is inlined into the
// result, which the result cap saves under results/), then on even visits
// takes a snapshot as well (another snapshot, another saved result) and on
// visits 3, 7, 11 … a screenshot (an image the conversation shows, kept in
// the private folder), then answers with the visit's marker. An upload is
// acknowledged.
func script(siteURL string) func(llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		user, steps := lastUser(req.Body)
		if m := visitRe.FindStringSubmatch(user); m != nil {
			k, _ := strconv.Atoi(m[1])
			switch {
			case steps == 0:
				return call(k, steps, "browser_navigate", fmt.Sprintf(`{"url":%q}`, siteURL+m[2]))
			case steps == 1 && k%2 == 0:
				return call(k, steps, "browser_snapshot", `{}`)
			case steps == 1 && k%4 == 3:
				return call(k, steps, "browser_take_screenshot", `{"type":"png"}`)
			default:
				return llmtest.Text(fmt.Sprintf("The page %s is read; its gist is above. %s", m[2], marker(k)))
			}
		}
		if keepRe.MatchString(user) {
			return llmtest.Text("I have the file in uploads/. " + keptMarker)
		}
		return llmtest.Text("I am the disk soak's model. [other]")
	}
}

func call(k, step int, name, args string) llmtest.Reply {
	return llmtest.ToolCalls(llm.ToolCall{ID: fmt.Sprintf("call_%d_%d_%d", k, step, time.Now().UnixNano()),
		Name: name, Arguments: json.RawMessage(args)})
}

// lastUser is the text of the request's last user message and how many
// tool results follow it. A user message right after tool results carries
// their images: it is not the user's.
func lastUser(body []byte) (string, int) {
	var w struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &w)
	steps := 0
	for i := len(w.Messages) - 1; i >= 0; i-- {
		m := w.Messages[i]
		switch m.Role {
		case "tool":
			steps++
		case "user":
			if i > 0 && w.Messages[i-1].Role == "tool" {
				continue // the images of the tool results before it
			}
			return text(m.Content), steps
		}
	}
	return "", steps
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
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
