package stdio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestRawPipeAnswersAsOSFile runs each exchange on a pipe through os.File
// and through rawPipe, and wants the same outcome: the bytes, io.EOF, the
// deadline, a closed file, a broken pipe, a write that waits for room.
func TestRawPipeAnswersAsOSFile(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 1<<20) // over a pipe's capacity
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) string
	}{
		{"line", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) string {
			n, err := wrap(w).Write([]byte("hello\n"))
			buf := make([]byte, 64)
			m, rerr := wrap(r).Read(buf)
			return fmt.Sprintf("wrote %d %v, read %q %v", n, err, buf[:m], rerr)
		}},
		{"end of file", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) string {
			w.Close()
			n, err := wrap(r).Read(make([]byte, 8))
			return fmt.Sprintf("%d %v", n, err)
		}},
		{"read deadline", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) string {
			_ = r.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			n, err := wrap(r).Read(make([]byte, 8))
			return outcome(n, err)
		}},
		{"read of a closed file", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) string {
			p := wrap(r)
			r.Close()
			n, err := p.Read(make([]byte, 8))
			return outcome(n, err)
		}},
		{"broken pipe", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) string {
			r.Close()
			n, err := wrap(w).Write([]byte("x\n"))
			return outcome(n, err)
		}},
		{"a write waits for room", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) string {
			got := make(chan int64, 1)
			go func() {
				n, _ := io.Copy(io.Discard, wrap(r))
				got <- n
			}()
			n, err := wrap(w).Write(big)
			w.Close()
			return fmt.Sprintf("wrote %d %v, read %d", n, err, <-got)
		}},
		{"write deadline on a full pipe", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) string {
			_ = w.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
			n, err := wrap(w).Write(big)
			return fmt.Sprintf("partial %v, %s", n > 0 && n < len(big), outcome(0, err))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var outcomes [2]string
			for i, wrap := range []func(*os.File) io.ReadWriter{
				func(f *os.File) io.ReadWriter { return f },
				func(f *os.File) io.ReadWriter {
					p := newRawPipe(f)
					if _, ok := p.(*rawPipe); !ok {
						t.Fatalf("newRawPipe(%s) is not a rawPipe", f.Name())
					}
					return p
				},
			} {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				outcomes[i] = tc.run(t, r, w, wrap)
				r.Close()
				w.Close()
			}
			if outcomes[0] != outcomes[1] {
				t.Errorf("os.File: %s\nrawPipe: %s", outcomes[0], outcomes[1])
			}
		})
	}
}

// outcome is n and what err is, by kind: the messages of the poller's
// errors are not os.File's.
func outcome(n int, err error) string {
	var pe *os.PathError
	kind := "no error"
	switch {
	case err == nil:
	case !errors.As(err, &pe):
		kind = fmt.Sprintf("not a *os.PathError: %v", err)
	case errors.Is(err, os.ErrDeadlineExceeded):
		kind = pe.Op + ": deadline"
	case errors.Is(err, os.ErrClosed):
		kind = pe.Op + ": closed"
	case errors.Is(err, syscall.EPIPE):
		kind = pe.Op + ": broken pipe"
	default:
		kind = pe.Op + ": " + err.Error()
	}
	return fmt.Sprintf("%d, %s", n, kind)
}

// TestRawPipeLeavesBlockingFiles: a raw read of a blocking descriptor
// would hold its thread and P while it waits, so a blocking file is
// read and written as it is.
func TestRawPipeLeavesBlockingFiles(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer r.Close()
	defer w.Close()
	for _, f := range []*os.File{r, w} {
		if p := newRawPipe(f); p != io.ReadWriter(f) {
			t.Errorf("newRawPipe(blocking %s) = %T, want the file itself", f.Name(), p)
		}
	}
}
