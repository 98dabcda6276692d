package llm

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	oaistream "github.com/openai/openai-go/v3/packages/ssestream"
)

// Streaming: both adapters ask for a stream when Request.OnText is set and
// hand each piece of text to it as it arrives. The SDK retries a request
// until its answer starts (429, 5xx, connection errors, as without
// streaming); a stream that fails after it started — a dropped connection,
// an error event, an end before the answer was complete — is tried again
// by streamWithRetries, but only while no text has reached OnText.

// Backoff of a stream tried again after it broke off, as the SDKs' own.
const (
	streamRetryBase = 500 * time.Millisecond
	streamRetryMax  = 8 * time.Second
)

// streamAttempt runs one streamed request. It returns started when the
// provider's answer had begun (a failure then is the stream's, which the
// SDK does not retry). A failed attempt's resp carries only its Usage:
// what it cost all the same (estimate.go).
type streamAttempt func(ctx context.Context, emit func(string)) (resp Response, started bool, err error)

// streamWithRetries runs attempt until it succeeds or fails for good:
// a failure after the stream started is tried again, up to retries times,
// while nothing was delivered to onText and the error is one worth a retry.
// The Usage it returns, answer or failure, counts every attempt's.
func streamWithRetries(ctx context.Context, retries int, onText func(string), attempt streamAttempt) (Response, error) {
	delivered := false
	emit := func(s string) {
		if s == "" {
			return
		}
		delivered = true
		onText(s)
	}
	var spent Usage // by the attempts that failed
	for try := 0; ; try++ {
		resp, started, err := attempt(ctx, emit)
		if err == nil {
			resp.Usage = resp.Usage.add(spent)
			return resp, nil
		}
		spent = spent.add(resp.Usage)
		var e *Error
		if !started || delivered || try >= retries || ctx.Err() != nil || !errors.As(err, &e) || !retryableStatus(e.Status) {
			return Response{Usage: spent}, err
		}
		t := time.NewTimer(min(streamRetryBase<<try, streamRetryMax))
		select {
		case <-ctx.Done():
			t.Stop()
			return Response{Usage: spent}, err
		case <-t.C:
		}
	}
}

// retryableStatus is the SDKs' rule: 408, 409, 429, 5xx, or no answer.
func retryableStatus(status int) bool {
	return status == 0 || status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// isEventStream reports whether res is a server-sent event stream. A
// server that ignores "stream" answers with JSON, which is read whole.
func isEventStream(res *http.Response) bool {
	if res == nil {
		return true // the SDK handed the body over without its response: trust it
	}
	mt, _, err := mime.ParseMediaType(res.Header.Get("Content-Type"))
	return err != nil || mt == "text/event-stream" || mt == ""
}

// errTruncated is a stream that ended before the provider said the answer
// was complete.
var errTruncated = errors.New("the stream ended before the answer was complete")

// streamError is the Error of a stream that failed after it started: an
// error event in the provider's shape keeps its status and message;
// anything else (a dropped connection, an undecodable event, a stream cut
// short) is a 502.
func streamError(ctx context.Context, provider, apiKey string, err error) *Error {
	if cerr := ctx.Err(); cerr != nil {
		return newError(provider, apiKey, cerr, nil)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return newError(provider, apiKey, err, nil)
	}
	var (
		body []byte
		oe   *oaistream.StreamError
		ae   *anthropic.Error
	)
	switch {
	case errors.As(err, &oe):
		body = oe.Event.Data
	case errors.As(err, &ae):
		body = []byte(ae.RawJSON())
	}
	if len(body) > 0 {
		if status, ok := embeddedErrorStatus(body); ok {
			msg := errorMessage(body)
			if msg == "" {
				msg = http.StatusText(status)
			}
			return &Error{Provider: provider, Status: status, Message: scrub("in the stream: "+msg, apiKey), Err: err}
		}
	}
	return &Error{Provider: provider, Status: http.StatusBadGateway,
		Message: scrub(fmt.Sprintf("the stream broke off: %v", err), apiKey), Err: err}
}
