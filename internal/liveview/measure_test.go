package liveview

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/liveview/cdp"
	"github.com/volcanicbot/volcanicbot/internal/liveview/liveviewtest"
)

// TestMeasureLiveView measures what docs/performance.md and the report
// give: tap → changed frame on a local page, the frames' bandwidth on a
// still and on an animated page, and the Go heap two streaming hand-offs
// hold. Run with VOLCANIC_LIVEVIEW_MEASURE=1 (and VOLCANIC_TEST_CHROMIUM).
func TestMeasureLiveView(t *testing.T) {
	if os.Getenv("VOLCANIC_LIVEVIEW_MEASURE") == "" {
		t.Skip("set VOLCANIC_LIVEVIEW_MEASURE=1 to measure")
	}
	ws := liveviewtest.StartChromium(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/anim" {
			w.Write([]byte(`<!doctype html><body style="margin:0"><h1 id="c">0</h1><div style="width:300px;height:300px;background:linear-gradient(90deg,#08f,#f80)"></div>
<script>let n=0;setInterval(()=>{document.getElementById('c').textContent=++n},16)</script>`))
			return
		}
		w.Write([]byte(`<!doctype html><body style="margin:0;background:#fff"><p>Sign in to continue</p>
<button style="position:absolute;left:0;top:0;width:200px;height:100px" onclick="document.title=(+document.title||0)+1;document.body.style.background=document.body.style.background=='red'?'blue':'red'">toggle</button>`))
	}))
	defer site.Close()
	conn, err := cdp.Dial(context.Background(), ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := newRig(t)
	r.clock.Set(time.Now())
	view := func(url string) string {
		tab, bctx := liveviewtest.NewChatTab(t, conn, url)
		l := r.begin(t, Handoff{Chat: 1, User: 7, Connect: func(ctx context.Context) (Target, error) {
			return AttachCDP(ctx, CDPOptions{Endpoint: ws, TargetID: tab, ContextID: bctx})
		}}, nil)
		_, secret := r.open(t, l)
		return secret
	}
	still := view(site.URL)
	first := waitFrame(t, r, still, answer{header: http.Header{"X-Frame-Seq": {"0"}}}, func(answer) bool { return true })
	w, h := atoiHeader(t, first, "X-Frame-Width"), atoiHeader(t, first, "X-Frame-Height")
	last := measureTaps(t, r, still, first, w, h)

	// the still page: once it settles, the browser sends no frame while nothing changes
	seq := last.header.Get("X-Frame-Seq")
	settled := 0
	for pollWithin(t, r, still, &seq, time.Second) {
		settled++
	}
	stillFor := 3 * time.Second
	if pollWithin(t, r, still, &seq, stillFor) {
		t.Fatalf("a still page sent a frame within %v", stillFor)
	}
	t.Logf("still page: %d frames to settle after the last tap, then none (0 bytes) in %v", settled, stillFor)

	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a1, a2 := view(site.URL+"/anim"), view(site.URL+"/anim")
	var wg sync.WaitGroup
	res := make([][2]int, 2)
	for i, s := range []string{a1, a2} {
		wg.Go(func() { f, b := stream(t, r, s, 5*time.Second); res[i] = [2]int{f, b} })
	}
	time.Sleep(4 * time.Second)
	runtime.ReadMemStats(&during)
	wg.Wait()
	for i, x := range res {
		t.Logf("animated page, view %d, 5 s: %d frames (%.1f/s), %d bytes (%s/s), %d bytes a frame", i+1, x[0], float64(x[0])/5,
			x[1], kib(x[1]/5), x[1]/max(1, x[0]))
	}
	t.Logf("Go heap with two hand-offs streaming: %s in use (before: %s), %s from the OS (before: %s), %d goroutines",
		kib(int(during.HeapInuse)), kib(int(before.HeapInuse)), kib(int(during.Sys)), kib(int(before.Sys)), runtime.NumGoroutine())
}

func kib(n int) string { return strconv.Itoa(n>>10) + " KiB" }

// pollWithin polls a frame after *seq for at most d, and says whether one
// came (moving *seq on).
func pollWithin(t *testing.T, r *rig, secret string, seq *string, d time.Duration) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", r.http.URL+PathPrefix+"s/frame?after="+*seq, nil)
	req.Header.Set(sessionHeader, secret)
	resp, err := r.http.Client().Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	*seq = resp.Header.Get("X-Frame-Seq")
	return true
}

// measureTaps taps the page's toggle 20 times and logs how long each took
// to show a changed frame; it gives the last frame.
func measureTaps(t *testing.T, r *rig, still string, first answer, w, h int) answer {
	t.Helper()
	var lat []time.Duration
	last, missed := first, 0
	for range 20 {
		start := time.Now()
		r.do(t, "POST", PathPrefix+"s/input", still, `{"kind":"tap","x":`+jsonFloat(100/float64(w))+`,"y":`+jsonFloat(50/float64(h))+`}`)
		seq := last.header.Get("X-Frame-Seq")
		changed := false
		for time.Since(start) < 3*time.Second && !changed {
			prevSeq := seq
			if pollWithin(t, r, still, &seq, 3*time.Second-time.Since(start)) && seq != prevSeq {
				a := r.do(t, "GET", PathPrefix+"s/frame?after="+prevSeq, still, "")
				changed, last = a.body != last.body, a
			}
		}
		if !changed {
			missed++
			continue
		}
		lat = append(lat, time.Since(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	n := len(lat)
	if n == 0 {
		t.Fatal("no tap showed a changed frame")
	}
	t.Logf("tap → changed frame over 20 taps (%dx%d CSS px): median %v, p90 %v, max %v; frame %d bytes; %d taps showed no change within 3 s",
		w, h, lat[n/2].Round(time.Millisecond), lat[n*9/10].Round(time.Millisecond), lat[n-1].Round(time.Millisecond), len(last.body), missed)

	return last
}

// stream pulls frames as fast as they come for d, and counts them.
func stream(t *testing.T, r *rig, secret string, d time.Duration) (frames, bytes int) {
	t.Helper()
	seq := "0"
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		r.clock.Set(time.Now()) // the view's rate limit refills (frozen, it capped this at its burst: 80 in 5 s)
		a := r.do(t, "GET", PathPrefix+"s/frame?after="+seq, secret, "")
		if a.status == http.StatusOK {
			frames++
			bytes += len(a.body)
			seq = a.header.Get("X-Frame-Seq")
		}
	}
	return frames, bytes
}
