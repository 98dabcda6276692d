package liveview

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview/cdp"
	"github.com/volcanicbot/volcanicbot/internal/liveview/liveviewtest"
	"github.com/volcanicbot/volcanicbot/internal/testkit"
)

func TestAttachRefusesAnotherContextsTab(t *testing.T) {
	ws := liveviewtest.StartChromium(t)
	site := liveviewtest.NewSite(t)
	conn, err := cdp.Dial(context.Background(), ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, ctxA := liveviewtest.NewChatTab(t, conn, site.URL)
	tabB, _ := liveviewtest.NewChatTab(t, conn, site.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := AttachCDP(ctx, CDPOptions{Endpoint: ws, TargetID: tabB, ContextID: ctxA}); !errors.Is(err, ErrWrongTarget) {
		t.Fatalf("attach to chat B's tab as chat A: %v, want ErrWrongTarget", err)
	}
	if _, err := AttachCDP(ctx, CDPOptions{Endpoint: ws, TargetID: "", ContextID: ctxA}); !errors.Is(err, ErrWrongTarget) {
		t.Fatalf("attach with no target: %v, want ErrWrongTarget", err)
	}
}

// TestLiveViewDrivesARealTab: the chat's tab in a real Chromium, reached
// through the live view's HTTP endpoints as its page uses them: a frame
// shows it, a tap on the frame presses its button, typed text and Enter
// submit its field, Back goes back; the site saw each; what was typed is
// in no log line.
func TestLiveViewDrivesARealTab(t *testing.T) {
	ws := liveviewtest.StartChromium(t)
	site := liveviewtest.NewSite(t)
	conn, err := cdp.Dial(context.Background(), ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tab, bctx := liveviewtest.NewChatTab(t, conn, site.URL)
	site.WaitHit(t, "/")
	r := newRig(t)
	r.clock.Set(time.Now()) // initData is signed now
	l := r.begin(t, Handoff{Chat: 42, User: 7, MiniApp: true, Connect: func(ctx context.Context) (Target, error) {
		return AttachCDP(ctx, CDPOptions{Endpoint: ws, TargetID: tab, ContextID: bctx})
	}}, nil)
	_, secret := r.open(t, l)
	if a := r.do(t, "POST", PathPrefix+"s/auth", secret, liveviewtest.SignInitData(testBotToken, liveviewtest.InitFields(7, time.Now()))); a.status != http.StatusNoContent {
		t.Fatalf("auth: %d", a.status)
	}
	first := r.do(t, "GET", PathPrefix+"s/frame?after=0", secret, "")
	if first.status != http.StatusOK || !strings.HasPrefix(first.body, "\xff\xd8") {
		t.Fatalf("first frame: %d, %d bytes", first.status, len(first.body))
	}
	if got := first.header.Get("X-Page-Url"); got != urlHeader(site.URL+"/") {
		t.Fatalf("X-Page-Url %q, want %q", got, urlHeader(site.URL+"/"))
	}
	w, h := atoiHeader(t, first, "X-Frame-Width"), atoiHeader(t, first, "X-Frame-Height")
	at := func(x, y float64) string { return jsonFloat(x/float64(w)) + `,"y":` + jsonFloat(y/float64(h)) }

	start := time.Now()
	r.do(t, "POST", PathPrefix+"s/input", secret, `{"kind":"tap","x":`+at(100, 50)+`}`)
	changed := waitFrame(t, r, secret, first, func(a answer) bool { return a.body != first.body })
	t.Logf("tap → changed frame: %v (%dx%d CSS px, %d → %d bytes)", time.Since(start), w, h, len(first.body), len(changed.body))
	site.WaitHit(t, "/tap")

	const typed = "hunter2 🔑 sekrit"
	r.do(t, "POST", PathPrefix+"s/input", secret, `{"kind":"tap","x":`+at(150, 220)+`}`)
	r.do(t, "POST", PathPrefix+"s/input", secret, `{"kind":"text","text":"`+typed+`"}`)
	r.do(t, "POST", PathPrefix+"s/input", secret, `{"kind":"key","key":"Enter"}`)
	if v := site.WaitHit(t, "/typed"); v != typed {
		t.Fatalf("the site saw %q typed, want %q", v, typed)
	}

	r.do(t, "POST", PathPrefix+"s/input", secret, `{"kind":"tap","x":`+at(100, 325)+`}`)
	site.WaitHit(t, "/second")
	waitFrame(t, r, secret, changed, func(a answer) bool { return a.header.Get("X-Page-Url") == urlHeader(site.URL+"/second") })
	if a := r.do(t, "POST", PathPrefix+"s/input", secret, `{"kind":"back"}`); a.status != http.StatusNoContent {
		t.Fatalf("back: %d %s\n%s", a.status, a.body, r.log.String())
	}
	testkit.WaitFor(t, "the tab back on the first page", 15*time.Second, func() bool {
		a := r.do(t, "GET", PathPrefix+"s/frame?after=0", secret, "")
		return a.header.Get("X-Page-Url") == urlHeader(site.URL+"/")
	})

	r.do(t, "POST", PathPrefix+"s/done", secret, "")
	if o := l.Wait(context.Background()); o != OutcomeDone {
		t.Fatalf("Wait = %v", o)
	}
	if logs := r.log.String(); strings.Contains(logs, "hunter2") || strings.Contains(logs, "sekrit") {
		t.Fatalf("the typed text is in the log:\n%s", logs)
	}
	// the tab stays open for the model after the view let it go
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var info struct {
		TargetInfo targetInfo `json:"targetInfo"`
	}
	if err := conn.Call(ctx, "", "Target.getTargetInfo", map[string]string{"targetId": tab}, &info); err != nil || info.TargetInfo.Type != "page" {
		t.Fatalf("the tab after Done: %+v, %v", info, err)
	}
}

func atoiHeader(t *testing.T, a answer, name string) int {
	t.Helper()
	var n int
	for _, c := range a.header.Get(name) {
		n = n*10 + int(c-'0')
	}
	if n <= 0 {
		t.Fatalf("%s: %q", name, a.header.Get(name))
	}
	return n
}

func jsonFloat(f float64) string {
	return strings.TrimRight(strings.TrimRight(strconvFloat(f), "0"), ".")
}

func strconvFloat(f float64) string { return strconv.FormatFloat(f, 'f', 6, 64) }

// waitFrame long-polls frames after from until one satisfies ok.
func waitFrame(t *testing.T, r *rig, secret string, from answer, ok func(answer) bool) answer {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	seq := from.header.Get("X-Frame-Seq")
	for time.Now().Before(deadline) {
		a := r.do(t, "GET", PathPrefix+"s/frame?after="+seq, secret, "")
		if a.status == http.StatusOK {
			if ok(a) {
				return a
			}
			seq = a.header.Get("X-Frame-Seq")
		}
	}
	t.Fatalf("no frame as wanted within 15 s\n%s", r.log.String())
	return answer{}
}
