package session

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A racer swaps the sent name between a file and a symlink to a secret
// outside the workspace, or a FIFO, as fast as it can: not one of 300
// sends may deliver the secret or wait on the FIFO.
func TestSendRacedBySwaps(t *testing.T) {
	for _, c := range []struct{ swapIn, sender string }{{"symlink", "tool"}, {"fifo", "tool"}, {"symlink", "walk"}, {"fifo", "walk"}} {
		swapIn := c.swapIn
		t.Run(c.swapIn+"/"+c.sender, func(t *testing.T) {
			e, s, ws, secret := sendEnv(t)
			var send func(string) ([]string, error)
			for _, sd := range senders(e, s) {
				if sd.name == c.sender {
					send = sd.send
				}
			}
			var contents []string
			name := filepath.Join(ws, "race.txt")
			write(t, name, "inside")
			stop := make(chan struct{})
			var wg sync.WaitGroup
			other := filepath.Join(ws, "race.other")
			var err error
			if swapIn == "symlink" {
				err = os.Symlink(secret, other)
			} else {
				err = syscall.Mkfifo(other, 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					// Swap the two names in one step, as fast as the kernel does.
					if err := unix.Renameat2(unix.AT_FDCWD, name, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE); err != nil {
						t.Errorf("racer: %v", err)
						return
					}
				}
			})
			var refused, sent atomic.Int32
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range 300 {
					got, err := send("race.txt")
					if err != nil {
						refused.Add(1)
					} else {
						sent.Add(1)
					}
					contents = append(contents, got...)
				}
			}()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				close(stop)
				wg.Wait()
				for range 100 {
					unblockFIFO(ws)
					select {
					case <-done:
					case <-time.After(10 * time.Millisecond):
						continue
					}
					break
				}
				t.Fatalf("sends hung on a swapped-in %s (%d sent, %d refused)", swapIn, sent.Load(), refused.Load())
			}
			close(stop)
			wg.Wait()
			leaked := 0
			for _, c := range contents {
				if c != "inside" {
					leaked++
				}
			}
			t.Logf("300 sends against a racer: %d sent, %d refused, %d with other content", sent.Load(), refused.Load(), leaked)
			if leaked > 0 {
				t.Errorf("%d of 300 sends delivered something other than the checked file", leaked)
			}
		})
	}
}
