package stdio

import (
	"errors"
	"io"
	"os"
	"syscall"
	"unsafe"
)

// rawPipe reads or writes one end of a pipe with raw system calls, where
// os.File's Read and Write tell the runtime that the goroutine enters a
// system call. That entry wakes the runtime's monitor thread (sysmon) when
// it sleeps for want of work — and in a call's round trip it does: the
// process's only running goroutine waits for the server's answer about
// every other call, and the next read or write woke it again: a futex
// wake-up and the monitor's context switches, on the caller's core, for
// half the calls (mcpclient's BenchmarkCallTool pinned to one core:
// 0.2–0.5 futex calls and 1.5–2.1 context switches of the client per call
// with os.File, none and 1.05 with rawPipe). A read or write of a
// non-blocking pipe never sleeps in the kernel, so there is no P for the
// monitor to take back from it; the monitor sleeps on until the process's
// next timer or next ordinary system call (the bot makes many: sockets,
// files, logs). When the pipe is empty or full the goroutine waits in the
// runtime's poller, under the same deadlines, as os.File's would.
//
// One rawPipe serves one direction of one goroutine at a time: reads are
// serialised by the transport's read token, writes by its write lock.
type rawPipe struct {
	f        *os.File
	rc       syscall.RawConn
	b        []byte // the caller's buffer while a read or write runs
	n        int    // bytes read or written so far
	errno    error  // the system call's error, if any
	tryRead  func(fd uintptr) bool
	tryWrite func(fd uintptr) bool
}

// newRawPipe is f read or written with raw system calls, or f itself when
// f is not a non-blocking descriptor in the runtime's poller (a raw call
// on a blocking one would hold its thread and P for as long as it waits).
func newRawPipe(f *os.File) io.ReadWriter {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	nonblocking := false
	if err := rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = errno == 0 && flags&syscall.O_NONBLOCK != 0
	}); err != nil || !nonblocking {
		return f
	}
	p := &rawPipe{f: f, rc: rc}
	p.tryRead, p.tryWrite = p.read, p.write // bound once: no allocation a call
	return p
}

// read is one read(2) into p.b; false asks the poller to wait (EAGAIN).
func (p *rawPipe) read(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p.b[0])), uintptr(len(p.b)))
		switch errno {
		case 0:
			p.n = int(n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		p.errno = errno
		return true
	}
}

// write writes what is left of p.b; false asks the poller to wait for
// room (EAGAIN).
func (p *rawPipe) write(fd uintptr) bool {
	for p.n < len(p.b) {
		rest := p.b[p.n:]
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch errno {
		case 0:
			p.n += int(n)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			p.errno = errno
			return true
		}
	}
	return true
}

// Read is os.File's Read: io.EOF at the end, errors as *os.PathError.
func (p *rawPipe) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := p.run(b, p.tryRead, "read")
	if err == nil && n == 0 {
		return 0, io.EOF
	}
	return n, err
}

// Write is os.File's Write: all of b, or an error as *os.PathError with
// what was written.
func (p *rawPipe) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	return p.run(b, p.tryWrite, "write")
}

func (p *rawPipe) run(b []byte, try func(uintptr) bool, op string) (int, error) {
	p.b, p.n, p.errno = b, 0, nil
	var err error
	if op == "read" {
		err = p.rc.Read(try)
	} else {
		err = p.rc.Write(try)
	}
	n := p.n
	if err == nil {
		err = p.errno
	}
	p.b, p.errno = nil, nil
	if err == nil {
		return n, nil
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) && !errors.Is(err, os.ErrDeadlineExceeded) {
		err = os.ErrClosed // the poller's "use of closed file", as os.File says it
	}
	return n, &os.PathError{Op: op, Path: p.f.Name(), Err: err}
}
