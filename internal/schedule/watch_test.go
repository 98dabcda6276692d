package schedule

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

func TestWhatChanged(t *testing.T) {
	many := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s %d\n", prefix, i)
		}
		return b.String()
	}
	tests := []struct {
		name, before, after, want string
	}{
		{"one line changed", "a\nb\nc", "a\nB\nc", "What changed: 1 line(s) added, 1 removed.\n+ B\n− b"},
		{"white space is no change", "a  b\n\n c", "a b\nc\n", "What changed: 0 line(s) added, 0 removed."},
		{"moved line is no change", "a\nb", "b\na", "What changed: 0 line(s) added, 0 removed."},
		{"duplicate line added", "a\nb", "a\nb\na", "What changed: 1 line(s) added, 0 removed.\n+ a"},
		{"capped", many("old", 3), many("new", 8),
			"What changed: 8 line(s) added, 3 removed.\n+ new 0\n+ new 1\n+ new 2\n+ new 3\n+ new 4\n+ … and 3 more\n− old 0\n− old 1\n− old 2"},
		{"long line cut", "x", strings.Repeat("y", 500), "What changed: 1 line(s) added, 1 removed.\n+ " + strings.Repeat("y", maxDiffLine) + "\n− x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := whatChanged(tt.before, tt.after); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	if answerHash("a  b\n\nc ") != answerHash("a b\nc") || answerHash("a") == answerHash("b") {
		t.Error("hash does not follow the normalised text")
	}
}

// TestWhatChangedBounded: a large hostile answer (here 40,000 lines, all
// changed) gives a bounded account with the right counts. lineDiff is
// linear by construction (one map); no clock is read here, so a loaded
// machine cannot fail it.
func TestWhatChangedBounded(t *testing.T) {
	var a, b strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&a, "line %d\n", i)
		fmt.Fprintf(&b, "line %d\n", i+20000)
	}
	out := whatChanged(a.String(), b.String())
	if len(out) > 4096 || !strings.HasPrefix(out, "What changed: 20000 line(s) added, 20000 removed.") {
		t.Errorf("%d bytes: %.80s", len(out), out)
	}
}

// TestPartlySentResumes: a long answer cut short after some parts is
// tried again from the part after them, each try counting from its own
// start.
func TestPartlySentResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDeliverer{fail: func(n int, _ Message) error {
			switch n {
			case 1:
				return &chat.PartlySentError{Sent: 2, Err: errors.New("502 bad gateway")}
			case 2:
				return &chat.PartlySentError{Sent: 1, Err: errors.New("network down")}
			}
			return nil
		}}
		g := startRig(t, t.TempDir(), newRunner(), d, Options{})
		g.create(t, chatA, Request{In: "1m"})
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		tries := d.Tries()
		if len(tries) != 3 || tries[0].Skip != 0 || tries[1].Skip != 2 || tries[2].Skip != 3 || len(d.Delivered()) != 1 {
			t.Errorf("tries %+v", tries)
		}
	})
}

// TestAnswerCapped: an answer over MaxAnswerBytes is cut (on a rune) before
// it is stored or sent.
func TestAnswerCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner()
		r.answer = func(int, Job) (Result, error) { return Result{Answer: strings.Repeat("é", 100)}, nil }
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{MaxAnswerBytes: 51})
		g.create(t, chatA, Request{In: "1m"})
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if got := g.d.Delivered(); len(got) != 1 || got[0].Text != strings.Repeat("é", 25) {
			t.Errorf("delivered %+v", got)
		}
	})
}

// TestWatcherLongAnswers: answers too long to keep whole are still told
// apart (by hash) and sent with a plain "differs"; what is kept of them
// is bounded, and a delivered text is not kept at all.
func TestWatcherLongAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := func(c string) string { return strings.Repeat(c+"\n", maxLastAnswer) }
		answers := []string{long("a"), long("a"), long("a") + "b"}
		r := newRunner()
		r.answer = func(n int, _ Job) (Result, error) { return Result{Answer: answers[min(n, 3)-1]}, nil }
		g := startRig(t, t.TempDir(), r, &fakeDeliverer{}, Options{MaxAnswerBytes: 64 << 10})
		g.create(t, chatA, Request{Every: "1m", Notify: "changed"})
		time.Sleep(3*time.Minute + time.Second)
		synctest.Wait()
		got := g.d.Delivered()
		if len(got) != 2 || got[0].Text != answers[0] || got[1].Text != changedText+"\n\n"+answers[2] {
			t.Fatalf("%d delivered", len(got))
		}
		v := g.s.List(chatA)[0]
		if len(v.Job.LastAnswer) != maxLastAnswer || !v.Job.LastCut || len(v.LastRun.Answer) != maxRunAnswer || v.Delivery.Text != "" {
			t.Errorf("kept %d, %v, %d, %d bytes", len(v.Job.LastAnswer), v.Job.LastCut, len(v.LastRun.Answer), len(v.Delivery.Text))
		}
	})
}
