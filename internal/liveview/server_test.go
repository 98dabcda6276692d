package liveview

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview/liveviewtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

var t0 = time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)

type rig struct {
	s     *Server
	http  *httptest.Server
	clock *testkit.Clock
	log   *testkit.SyncBuffer
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{clock: testkit.NewClock(t0), log: &testkit.SyncBuffer{}}
	r.s = New(Options{BotToken: testBotToken, IsAdmin: func(u int64) bool { return u == 99 }, Now: r.clock.Now,
		Logger: slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	r.http = httptest.NewServer(r.s.Handler())
	t.Cleanup(func() { r.http.Close(); r.s.Close() })
	return r
}

func (r *rig) begin(t *testing.T, h Handoff, tab *fakeTab) *Live {
	t.Helper()
	if h.Connect == nil {
		h.Connect = func(context.Context) (Target, error) { return tab, nil }
	}
	l, err := r.s.Begin(h)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (r *rig) do(t *testing.T, method, path, secret, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, r.http.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set(sessionHeader, secret)
	}
	resp, err := r.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

var sessionMeta = regexp.MustCompile(`name="lv-session" content="([A-Za-z0-9_-]+)"`)

// open opens l's link as a browser would, and gives the page's session
// secret ("" when the link got nothing).
func (r *rig) open(t *testing.T, l *Live) (answer, string) {
	t.Helper()
	a := r.do(t, "GET", strings.TrimPrefix(l.URL(), r.s.o.BaseURL), "", "")
	m := sessionMeta.FindStringSubmatch(a.body)
	if a.status != http.StatusOK || m == nil {
		return a, ""
	}
	return a, m[1]
}

func TestLinkOpensOnceAndCarriesNoSecretInURLs(t *testing.T) {
	r := newRig(t)
	l := r.begin(t, Handoff{Chat: 1, User: 7}, &fakeTab{})
	if !strings.HasPrefix(l.URL(), PathPrefix+"t/") || len(strings.TrimPrefix(l.URL(), PathPrefix+"t/")) < 43 {
		t.Fatalf("link %q: want %st/<43+ URL-safe characters>", l.URL(), PathPrefix)
	}
	a, secret := r.open(t, l)
	if secret == "" {
		t.Fatalf("first open: %d %q", a.status, a.body)
	}
	if strings.Contains(a.body, strings.TrimPrefix(l.URL(), PathPrefix+"t/")) {
		t.Fatal("the page repeats its link's token")
	}
	if again, s := r.open(t, l); s != "" || again.status != http.StatusNotFound {
		t.Fatalf("second open of the same link: %d, secret %q", again.status, s)
	}
	if f := r.do(t, "GET", PathPrefix+"s/frame", secret, ""); f.status != http.StatusOK || f.header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("the opened page's frame: %d %q", f.status, f.body)
	}
}

// TestWhatGetsNothing: a guessed, replayed, expired, ended or other chat's
// link, and a session secret not given out, each get the same 404.
func TestWhatGetsNothing(t *testing.T) {
	r := newRig(t)
	nothing := r.do(t, "GET", PathPrefix+"t/"+newSecret(), "", "")
	if nothing.status != http.StatusNotFound {
		t.Fatalf("a guessed token: %d", nothing.status)
	}
	cases := []struct {
		name string
		try  func(t *testing.T) answer
	}{
		{"replayed", func(t *testing.T) answer {
			l := r.begin(t, Handoff{Chat: 1, User: 7}, &fakeTab{})
			r.open(t, l)
			a, _ := r.open(t, l)
			return a
		}},
		{"expired", func(t *testing.T) answer {
			l := r.begin(t, Handoff{Chat: 1, User: 7, Timeout: time.Minute}, &fakeTab{})
			r.clock.Advance(time.Minute)
			defer r.clock.Advance(-time.Minute)
			a, _ := r.open(t, l)
			return a
		}},
		{"ended by Done", func(t *testing.T) answer {
			l := r.begin(t, Handoff{Chat: 1, User: 7}, &fakeTab{})
			l.End(OutcomeDone)
			a, _ := r.open(t, l)
			return a
		}},
		{"replaced by a new link", func(t *testing.T) answer {
			l := r.begin(t, Handoff{Chat: 1, User: 7}, &fakeTab{})
			old := l.URL()
			l.Relink()
			return r.do(t, "GET", old, "", "")
		}},
		{"a session of an ended hand-off", func(t *testing.T) answer {
			l := r.begin(t, Handoff{Chat: 1, User: 7}, &fakeTab{})
			_, secret := r.open(t, l)
			l.End(OutcomeStopped)
			return r.do(t, "GET", PathPrefix+"s/frame", secret, "")
		}},
		{"the token as a session secret", func(t *testing.T) answer {
			l := r.begin(t, Handoff{Chat: 1, User: 7}, &fakeTab{})
			return r.do(t, "POST", PathPrefix+"s/input", strings.TrimPrefix(l.URL(), PathPrefix+"t/"), `{"kind":"back"}`)
		}},
		{"another chat's user's initData", func(t *testing.T) answer {
			l := r.begin(t, Handoff{Chat: 1, User: 7, MiniApp: true}, &fakeTab{})
			r.begin(t, Handoff{Chat: 2, User: 8, MiniApp: true}, &fakeTab{})
			_, secret := r.open(t, l)
			r.do(t, "POST", PathPrefix+"s/auth", secret, liveviewtest.SignInitData(testBotToken, liveviewtest.InitFields(8, t0)))
			return r.do(t, "GET", PathPrefix+"s/frame", secret, "")
		}},
		{"no session header", func(t *testing.T) answer { return r.do(t, "GET", PathPrefix+"s/frame", "", "") }},
		{"another path", func(t *testing.T) answer { return r.do(t, "GET", PathPrefix+"metrics", "", "") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := c.try(t)
			if a.status != nothing.status || a.body != nothing.body {
				t.Fatalf("got %d %q, want the guessed token's %d %q", a.status, a.body, nothing.status, nothing.body)
			}
		})
	}
}

func TestMiniAppNeedsTheUsersInitData(t *testing.T) {
	r := newRig(t)
	fresh := func(user int64) string {
		return liveviewtest.SignInitData(testBotToken, liveviewtest.InitFields(user, t0.Add(-time.Minute)))
	}
	cases := []struct {
		name     string
		h        Handoff
		initData string
		want     int
	}{
		{"the user", Handoff{Chat: 7, User: 7, MiniApp: true}, fresh(7), http.StatusOK},
		{"another user", Handoff{Chat: 7, User: 7, MiniApp: true}, fresh(8), http.StatusNotFound},
		{"bad hash", Handoff{Chat: 7, User: 7, MiniApp: true}, liveviewtest.SignInitData("1:forged", liveviewtest.InitFields(7, t0)), http.StatusNotFound},
		{"stale", Handoff{Chat: 7, User: 7, MiniApp: true}, liveviewtest.SignInitData(testBotToken, liveviewtest.InitFields(7, t0.Add(-2*time.Hour))), http.StatusNotFound},
		{"none", Handoff{Chat: 7, User: 7, MiniApp: true}, "", http.StatusNotFound},
		{"an admin in a group", Handoff{Chat: -5, User: 7, Group: true, MiniApp: true}, fresh(99), http.StatusOK},
		{"an admin in a private chat", Handoff{Chat: 7, User: 7, MiniApp: true}, fresh(99), http.StatusNotFound},
		{"a group member", Handoff{Chat: -5, User: 7, Group: true, MiniApp: true}, fresh(8), http.StatusNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := r.begin(t, c.h, &fakeTab{})
			defer l.End(OutcomeStopped)
			_, secret := r.open(t, l)
			if a := r.do(t, "GET", PathPrefix+"s/frame", secret, ""); a.status != http.StatusNotFound {
				t.Fatalf("a frame before initData: %d", a.status)
			}
			r.do(t, "POST", PathPrefix+"s/auth", secret, c.initData)
			if a := r.do(t, "GET", PathPrefix+"s/frame", secret, ""); a.status != c.want {
				t.Fatalf("a frame after initData: %d, want %d", a.status, c.want)
			}
			if c.want == http.StatusNotFound {
				// the page that failed lost its session: good data later gets nothing either
				r.do(t, "POST", PathPrefix+"s/auth", secret, fresh(7))
				if a := r.do(t, "GET", PathPrefix+"s/frame", secret, ""); a.status != http.StatusNotFound {
					t.Fatalf("a frame after a failed, then a good initData: %d", a.status)
				}
			}
		})
	}
}

func TestInputIsScaledForwardedAndNeverLogged(t *testing.T) {
	r := newRig(t)
	tab := &fakeTab{url: "https://example.com/login?x=1"}
	l := r.begin(t, Handoff{Chat: 1, User: 7}, tab)
	_, secret := r.open(t, l)
	f := r.do(t, "GET", PathPrefix+"s/frame", secret, "")
	if f.header.Get("X-Frame-Width") != "400" || f.header.Get("X-Page-Url") != urlHeader(tab.url) {
		t.Fatalf("frame headers: %v", f.header)
	}
	const secretText = "correct horse battery staple ünïcode"
	inputs := []struct{ body, want string }{
		{`{"kind":"tap","x":0.5,"y":0.25}`, "tap 200,200"},
		{`{"kind":"tap","x":7,"y":-1}`, "tap 400,0"},
		{`{"kind":"touch","x":0.25,"y":0.5}`, "touch 100,400"},
		{`{"kind":"scroll","x":0.5,"y":0.5,"dy":0.5}`, "scroll 200,400 by 0,400"},
		{`{"kind":"text","text":"` + secretText + `"}`, "text " + secretText},
		{`{"kind":"key","key":"Enter"}`, "key Enter"},
		{`{"kind":"back"}`, "back"},
	}
	for _, in := range inputs {
		if a := r.do(t, "POST", PathPrefix+"s/input", secret, in.body); a.status != http.StatusNoContent {
			t.Fatalf("%s: %d %q", in.body, a.status, a.body)
		}
		if calls := tab.Calls(); calls[len(calls)-1] != in.want {
			t.Fatalf("%s: the tab saw %q, want %q", in.body, calls[len(calls)-1], in.want)
		}
	}
	for _, bad := range []string{`{"kind":"key","key":"F13"}`, `{"kind":"text","text":""}`, `{"kind":"eval"}`, `not json`,
		`{"kind":"text","text":"` + strings.Repeat("x", maxTextRunes+1) + `"}`} {
		if a := r.do(t, "POST", PathPrefix+"s/input", secret, bad); a.status != http.StatusBadRequest {
			t.Fatalf("%.40s: %d, want 400", bad, a.status)
		}
	}
	if strings.Contains(r.log.String(), "horse") || !strings.Contains(r.log.String(), "live view input") {
		t.Fatalf("the log has the typed text, or no input line:\n%s", r.log.String())
	}
}

func TestFramesAreAckedOnceAndLongPolled(t *testing.T) {
	r := newRig(t)
	tab := &fakeTab{}
	l := r.begin(t, Handoff{Chat: 1, User: 7}, tab)
	_, secret := r.open(t, l)
	a := r.do(t, "GET", PathPrefix+"s/frame?after=0", secret, "")
	b := r.do(t, "GET", PathPrefix+"s/frame?after=0", secret, "")
	if a.body != "jpeg 1" || b.body != "jpeg 1" || a.header.Get("X-Frame-Seq") != "1" {
		t.Fatalf("frames: %q %q seq %s", a.body, b.body, a.header.Get("X-Frame-Seq"))
	}
	tab.mu.Lock()
	acks := append([]int(nil), tab.acks...)
	tab.mu.Unlock()
	if len(acks) != 1 || acks[0] != 1 {
		t.Fatalf("acks %v, want [1]", acks)
	}
	done := make(chan answer)
	go func() { done <- r.do(t, "GET", PathPrefix+"s/frame?after=1", secret, "") }()
	r.do(t, "POST", PathPrefix+"s/input", secret, `{"kind":"back"}`) // the fake sends frame 2
	if c := <-done; c.body != "jpeg 2" {
		t.Fatalf("the waiting poll got %q", c.body)
	}
}

func TestWaitSaysHowTheHandoffEnded(t *testing.T) {
	r := newRig(t)
	t.Run("done in the page", func(t *testing.T) {
		tab := &fakeTab{}
		l := r.begin(t, Handoff{Chat: 1, User: 7}, tab)
		_, secret := r.open(t, l)
		r.do(t, "GET", PathPrefix+"s/frame", secret, "")
		r.do(t, "POST", PathPrefix+"s/done", secret, "")
		if o := l.Wait(context.Background()); o != OutcomeDone || !tab.isClosed() {
			t.Fatalf("Wait = %v, tab closed %v", o, tab.isClosed())
		}
	})
	t.Run("stopped", func(t *testing.T) {
		l := r.begin(t, Handoff{Chat: 1, User: 7}, &fakeTab{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if o := l.Wait(ctx); o != OutcomeStopped {
			t.Fatalf("Wait = %v", o)
		}
	})
}

func TestWaitTimesOut(t *testing.T) {
	synctestRun(t, func(t *testing.T) {
		s := New(Options{BotToken: testBotToken})
		defer s.Close()
		l, err := s.Begin(Handoff{Chat: 1, User: 7, Timeout: 3 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if o := l.Wait(context.Background()); o != OutcomeTimeout || time.Since(start) != 3*time.Minute {
			t.Fatalf("Wait = %v after %v", o, time.Since(start))
		}
		if s.links.count() != 0 {
			t.Fatalf("%d links left after the timeout", s.links.count())
		}
	})
}

func TestBeginRefusesPastMaxViews(t *testing.T) {
	s := New(Options{MaxViews: 2})
	defer s.Close()
	for i := range 2 {
		if _, err := s.Begin(Handoff{Chat: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Begin(Handoff{Chat: 3}); err != ErrBusy {
		t.Fatalf("the third hand-off: %v, want ErrBusy", err)
	}
}

func TestEveryAnswerHasTheSecurityHeaders(t *testing.T) {
	r := newRig(t)
	l := r.begin(t, Handoff{Chat: 1, User: 7}, &fakeTab{})
	page, _ := r.open(t, l)
	for _, a := range []answer{page, r.do(t, "GET", PathPrefix+"a/app.js", "", ""), r.do(t, "GET", PathPrefix+"t/nope", "", "")} {
		csp := a.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors https://web.telegram.org") ||
			a.header.Get("Referrer-Policy") != "no-referrer" || a.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("headers %v", a.header)
		}
	}
}

// TestThePageLoadsNothingFromOtherHosts: no URL with a host in the page,
// its script or its style, and no inline script (the CSP forbids it).
func TestThePageLoadsNothingFromOtherHosts(t *testing.T) {
	for _, name := range []string{"page/page.html", "page/app.js", "page/app.css"} {
		b, err := pageFiles.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("//")) && regexp.MustCompile(`(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).Match(b) {
			t.Fatalf("%s names another host", name)
		}
		if name == "page/page.html" && regexp.MustCompile(`<script>|<script [^s]|\son[a-z]+="`).Match(b) {
			t.Fatalf("%s has inline script", name)
		}
	}
}

func TestOpensAreRateLimitedPerAddress(t *testing.T) {
	r := newRig(t)
	codes := map[int]int{}
	for range opensBurst + 5 {
		codes[r.do(t, "GET", PathPrefix+"t/"+newSecret(), "", "").status]++
	}
	if codes[http.StatusNotFound] != opensBurst || codes[http.StatusTooManyRequests] != 5 {
		t.Fatalf("answers %v, want %d 404 then 5 429", codes, opensBurst)
	}
	r.clock.Advance(time.Second)
	if a := r.do(t, "GET", PathPrefix+"t/"+newSecret(), "", ""); a.status != http.StatusNotFound {
		t.Fatalf("a second later: %d", a.status)
	}
}

func TestLimiter(t *testing.T) {
	l := newLimiter(2, 3, 2)
	var got []bool
	for range 4 {
		got = append(got, l.allow("a", t0))
	}
	got = append(got, l.allow("a", t0.Add(500*time.Millisecond)), l.allow("a", t0.Add(500*time.Millisecond)))
	want := []bool{true, true, true, false, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("allow #%d = %v, want %v (all %v)", i, got[i], want[i], got)
		}
	}
	l.allow("b", t0)
	l.allow("c", t0) // past maxKeys: the table starts again
	if len(l.buckets) > 2 {
		t.Fatalf("%d buckets, want at most 2", len(l.buckets))
	}
}

// TestASilentScreencastIsStartedAgain: when an input brings no frame, the
// screencast is started again, which sends the tab as it is.
func TestASilentScreencastIsStartedAgain(t *testing.T) {
	r := newRig(t)
	tab := &fakeTab{silent: true}
	l := r.begin(t, Handoff{Chat: 1, User: 7}, tab)
	_, secret := r.open(t, l)
	first := r.do(t, "GET", PathPrefix+"s/frame", secret, "")
	r.do(t, "POST", PathPrefix+"s/input", secret, `{"kind":"tap","x":0.5,"y":0.5}`)
	next := r.do(t, "GET", PathPrefix+"s/frame?after="+first.header.Get("X-Frame-Seq"), secret, "")
	calls := tab.Calls()
	if next.status != http.StatusOK || strings.Join(calls, "; ") != "screencast; tap 200,400; screencast" {
		t.Fatalf("after a silent tap: %d %q, the tab saw %q", next.status, next.body, calls)
	}
}

// TestRelinkGivesANewLinkAndVoidsTheOldPage: a user who closed the view
// gets a new link from the chat; the page the old one opened gets nothing,
// and a Mini App's new page must prove its user again.
func TestRelinkGivesANewLinkAndVoidsTheOldPage(t *testing.T) {
	r := newRig(t)
	l := r.begin(t, Handoff{Chat: 7, User: 7, MiniApp: true}, &fakeTab{})
	_, old := r.open(t, l)
	r.do(t, "POST", PathPrefix+"s/auth", old, liveviewtest.SignInitData(testBotToken, liveviewtest.InitFields(7, t0)))
	if a := r.do(t, "GET", PathPrefix+"s/frame", old, ""); a.status != http.StatusOK {
		t.Fatalf("the first page: %d", a.status)
	}
	oldURL := l.URL()
	if u := l.Relink(); u == oldURL || u != l.URL() {
		t.Fatalf("Relink = %q, URL %q, old %q", u, l.URL(), oldURL)
	}
	if a := r.do(t, "GET", PathPrefix+"s/frame", old, ""); a.status != http.StatusNotFound {
		t.Fatalf("the old page after Relink: %d", a.status)
	}
	_, fresh := r.open(t, l)
	if a := r.do(t, "GET", PathPrefix+"s/frame", fresh, ""); a.status != http.StatusNotFound {
		t.Fatalf("the new page before its initData: %d", a.status)
	}
	r.do(t, "POST", PathPrefix+"s/auth", fresh, liveviewtest.SignInitData(testBotToken, liveviewtest.InitFields(7, t0)))
	if a := r.do(t, "GET", PathPrefix+"s/frame", fresh, ""); a.status != http.StatusOK {
		t.Fatalf("the new page: %d", a.status)
	}
	l.End(OutcomeDone)
	if u := l.Relink(); u != "" {
		t.Fatalf("Relink after the end = %q", u)
	}
}
