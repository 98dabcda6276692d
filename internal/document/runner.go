package document

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"
	"time"
)

// Runner extracts a document in a child process, so that what Extract
// cannot bound in process — a parser that allocates without end or
// loops — ends the child, not the bot: the child has MemoryLimit bytes of
// address space (Linux), Timeout to finish (then it is killed), the
// document as its standard input and no environment; its answer is read
// up to a cap.
type Runner struct {
	// Command starts the child, which must call Serve with the argument
	// Runner appends (the binary itself: volcanicbot extract-document).
	Command []string
	// Env is the child's whole environment (none when empty).
	Env []string
	// Limits bound the extraction (the defaults when zero).
	Limits Limits
	// Timeout bounds one extraction (DefaultTimeout).
	Timeout time.Duration
	// MemoryLimit is the address space the child may map beyond what it
	// has at start (DefaultMemoryLimit): on Linux a hard limit.
	MemoryLimit int64
	// Parallel is how many children may run at once (DefaultParallel);
	// more extractions wait their turn (or their context).
	Parallel int

	once  sync.Once
	slots chan struct{}
}

// DefaultParallel children at once: chats sending bombs together cost
// at most this many times MemoryLimit.
const DefaultParallel = 2

// DefaultMemoryLimit is what the child may map beyond its start: room for
// a 64 MB document, a spreadsheet's unpacked parts and the text, far
// below what a bomb asks.
const DefaultMemoryLimit = 512 << 20

// request is what the child is asked, as its one argument.
type request struct {
	Kind        Kind   `json:"kind"`
	Limits      Limits `json:"limits"`
	Timeout     string `json:"timeout"`
	MemoryLimit int64  `json:"memoryLimit"`
}

// answer is the child's standard output.
type answer struct {
	Result Result `json:"result"`
	// Error is the operator's text, Class which error it was.
	Error string `json:"error,omitempty"`
	Class string `json:"class,omitempty"`
	User  string `json:"user,omitempty"`
}

// maxStack is the child's largest goroutine stack.
const maxStack = 64 << 20

// maxStderr is how much of the child's standard error is kept for the
// operator.
const maxStderr = 8 << 10

// Extract reads the document open in f as kind k in a child process.
func (r *Runner) Extract(ctx context.Context, f *os.File, k Kind) (Result, error) {
	if len(r.Command) == 0 {
		return Result{Kind: k}, errors.New("document: no command to run")
	}
	l := r.Limits.withDefaults()
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	mem := r.MemoryLimit
	if mem <= 0 {
		mem = DefaultMemoryLimit
	}
	tmp, err := os.MkdirTemp(l.TmpDir, "volcanic-document-")
	if err != nil {
		return Result{Kind: k}, fmt.Errorf("document: %w", err)
	}
	defer os.RemoveAll(tmp)
	l.TmpDir = tmp
	req, err := json.Marshal(request{Kind: k, Limits: l, Timeout: timeout.String(), MemoryLimit: mem})
	if err != nil {
		return Result{Kind: k}, err
	}
	r.once.Do(func() { r.slots = make(chan struct{}, cmp.Or(r.Parallel, DefaultParallel)) })
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-ctx.Done():
		return Result{Kind: k}, fmt.Errorf("document: %s extraction: %w", k, ctx.Err())
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Command[0], append(r.Command[1:], string(req))...)
	cmd.Env = append([]string{}, r.Env...)
	cmd.Stdin = f // its descriptor itself: the child reads at offsets
	stdout := &capped{max: 2*l.MaxText + 64<<10}
	stderr := &capped{max: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return Result{Kind: k}, fmt.Errorf("document: %s extraction: %w", k, ctx.Err())
	}
	var a answer
	if jerr := json.Unmarshal(stdout.b.Bytes(), &a); jerr != nil {
		// No answer: the child died (out of memory, a crash) or wrote
		// more than the text can be.
		why := fmt.Sprintf("%v, %d bytes out", err, stdout.b.Len())
		if stdout.over {
			why = "more output than the text cap"
		}
		first, _, _ := bytes.Cut(bytes.TrimSpace(stderr.b.Bytes()), []byte("\n"))
		return Result{Kind: k}, fmt.Errorf("document: %s extraction failed (%s; peak %s): %s: %w", k, why, peakOf(cmd), first, ErrTooLarge)
	}
	if a.Error != "" {
		msg := fmt.Sprintf("document: %s (peak %s)", a.Error, peakOf(cmd))
		return a.Result, &Error{User: a.User, Err: &childError{msg: msg, class: classError(a.Class)}}
	}
	a.Result.Kind = k
	return a.Result, nil
}

// childError is the child's error text (its sentinel's text already in
// it), matching the sentinel its class names.
type childError struct {
	msg   string
	class error
}

func (e *childError) Error() string { return e.msg }
func (e *childError) Unwrap() error { return e.class }

// classError is the sentinel a class names.
func classError(class string) error {
	switch class {
	case "too-large":
		return ErrTooLarge
	case "encrypted":
		return ErrEncrypted
	case "timeout":
		return context.DeadlineExceeded
	}
	return ErrDamaged
}

func errorClass(err error) string {
	switch {
	case errors.Is(err, ErrTooLarge):
		return "too-large"
	case errors.Is(err, ErrEncrypted):
		return "encrypted"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "damaged"
}

// Serve is the child's side of Runner: it reads the document from stdin
// (an open file), extracts it as args[0] asks and writes the answer to
// stdout. It returns the exit code.
func Serve(args []string, stdin *os.File, stdout io.Writer) int {
	var req request
	if len(args) != 1 || json.Unmarshal([]byte(args[0]), &req) != nil {
		fmt.Fprintln(os.Stderr, "usage: extract-document <request>")
		return 2
	}
	// A parser's recursion on a deeply nested document ends the child
	// at this depth rather than at the memory limit.
	debug.SetMaxStack(maxStack)
	if req.MemoryLimit > 0 {
		if err := limitMemory(req.MemoryLimit); err != nil {
			fmt.Fprintln(os.Stderr, "limit memory:", err)
			return 1
		}
	}
	timeout, err := time.ParseDuration(req.Timeout)
	if err != nil || timeout <= 0 {
		timeout = DefaultTimeout
	}
	// The parent kills the child at the deadline; should the parent be
	// gone (killed, crashed), the child ends itself: a parser looping
	// for ever never looks at ctx. The CPU limit backs that up.
	selfKill := time.AfterFunc(timeout+childGrace, func() {
		fmt.Fprintln(os.Stderr, "deadline: extraction still running")
		os.Exit(3)
	})
	defer selfKill.Stop()
	if err := limitCPU(2*timeout + childGrace); err != nil {
		fmt.Fprintln(os.Stderr, "limit CPU:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var a answer
	fi, err := stdin.Stat()
	if err == nil {
		a.Result, err = Extract(ctx, stdin, fi.Size(), req.Kind, req.Limits)
	}
	if err != nil {
		a.Error, a.Class, a.User = err.Error(), errorClass(err), userText(req.Kind, err)
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil {
		return 1
	}
	return 0
}

// childGrace is how long past its deadline a child ends itself, when
// its parent has not killed it.
const childGrace = 2 * time.Second

// capped keeps the first max bytes written and says whether more came.
type capped struct {
	b    bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); len(p) > room {
		c.over = true
		c.b.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.b.Write(p)
}
