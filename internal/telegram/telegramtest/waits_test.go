package telegramtest

import (
	"testing"
	"time"
)

// WaitSent sees a message stored while it looks: it took the change
// channel after reading the messages, so a message stored between the
// two was missed and WaitSent slept until the next change or its timeout
// (TestApprovalsCommand waited its 20 s for a message already sent).
func TestWaitSentMissesNoMessage(t *testing.T) {
	f := Start(Options{InProcess: true, Limits: &NoLimits})
	defer f.Close()
	for i := range int64(5000) {
		go f.store(&Message{ChatID: i, Method: "sendMessage", Text: "x"})
		if _, err := f.WaitSent(i, 1, 10*time.Second); err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
	}
}

// WaitUntil looks again at every change, and misses none made while it
// looks.
func TestWaitUntilMissesNoChange(t *testing.T) {
	f := Start(Options{InProcess: true, Limits: &NoLimits})
	defer f.Close()
	for i := range int64(5000) {
		go f.store(&Message{ChatID: i, Method: "sendMessage", Text: "x"})
		if err := f.WaitUntil(func() bool { return len(f.Sent(i)) == 1 }, 10*time.Second); err != nil {
			t.Fatalf("message %d: %v", i+1, err)
		}
	}
	if err := f.WaitUntil(func() bool { return false }, time.Millisecond); err == nil {
		t.Error("WaitUntil did not time out")
	}
}
