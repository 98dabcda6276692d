package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// maxErrorMessage caps the provider's message kept in an Error.
const maxErrorMessage = 500

// newError builds the Error of a failed call. res is the last HTTP response,
// if any; its body (already read by the SDK and put back) supplies the
// provider's message. The API key never reaches Message.
func newError(provider, apiKey string, err error, res *http.Response) *Error {
	e := &Error{Provider: provider, Err: err}
	switch {
	case errors.Is(err, context.Canceled):
		e.Message = "cancelled"
		return e
	case errors.Is(err, context.DeadlineExceeded):
		e.Message = "timed out"
		return e
	}
	if res != nil && res.StatusCode >= 400 {
		e.Status = res.StatusCode
		if res.Body != nil {
			body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
			res.Body = io.NopCloser(bytes.NewReader(body))
			e.Message = errorMessage(body)
		}
		if e.Message == "" {
			e.Message = http.StatusText(e.Status)
		}
	} else if err != nil {
		e.Message = err.Error()
	}
	e.Message = scrub(e.Message, apiKey)
	return e
}

// scrub removes the API key from s and caps its length.
func scrub(s, apiKey string) string {
	if apiKey != "" {
		s = strings.ReplaceAll(s, apiKey, "[redacted]")
	}
	if len(s) > maxErrorMessage {
		s = s[:maxErrorMessage]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}

// errorMessage finds the human-readable message in an error body:
// {"error":{"message":…}} (OpenAI, Anthropic, OpenRouter), {"error":"…"}
// (Ollama), {"message":…} or {"detail":…} (assorted proxies), else the body
// itself when it is short text.
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		s := strings.TrimSpace(string(body))
		if s != "" && utf8.ValidString(s) && !strings.HasPrefix(s, "<") {
			return s
		}
		return ""
	}
	if len(v.Error) > 0 {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		}
	}
	if v.Message != "" {
		return v.Message
	}
	if len(v.Detail) > 0 {
		var s string
		if json.Unmarshal(v.Detail, &s) == nil {
			return s
		}
		return string(v.Detail)
	}
	return ""
}

// embeddedErrorStatus reports whether a 200 body is really an error —
// {"error": …} (OpenRouter and OpenAI-compatible proxies) or
// {"type":"error", …} (Anthropic-compatible ones) — and the HTTP status it
// stands for.
func embeddedErrorStatus(body []byte) (int, bool) {
	if !bytes.Contains(body, []byte(`"error"`)) {
		return 0, false
	}
	var v struct {
		Type  string          `json:"type"`
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return 0, false
	}
	if len(v.Error) == 0 || string(v.Error) == "null" {
		return 0, false
	}
	var inner struct {
		Code json.RawMessage `json:"code"`
		Type string          `json:"type"`
	}
	_ = json.Unmarshal(v.Error, &inner)
	var code int
	if json.Unmarshal(inner.Code, &code) == nil && code >= 400 && code <= 599 {
		return code, true
	}
	if s, ok := anthropicErrorStatus[inner.Type]; ok {
		return s, true
	}
	return http.StatusBadGateway, true
}

// anthropicErrorStatus maps Anthropic's error types to their HTTP statuses.
var anthropicErrorStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"overloaded_error":      529,
}

// embeddedErrors is an SDK middleware (both SDKs share the signature) that
// turns a 200 response whose body is an error into the HTTP error it
// stands for, so the SDK retries it when it is 429 or 5xx and reports it as
// an error otherwise. It runs once per attempt and reads the whole body,
// unless the body is an event stream (a streamed answer), which it leaves
// to be read as it arrives.
func embeddedErrors(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil || res.StatusCode != http.StatusOK || res.Body == nil {
		return res, err
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "text/event-stream" {
		return res, nil
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	res.ContentLength = int64(len(body))
	if status, ok := embeddedErrorStatus(body); ok {
		res.StatusCode = status
		res.Status = fmt.Sprintf("%d %s", status, http.StatusText(status))
	}
	return res, nil
}
