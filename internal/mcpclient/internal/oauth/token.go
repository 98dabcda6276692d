package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// TokenError is what the token endpoint answered instead of a token: an
// OAuth error (Code, Description; RFC 6749 §5.2), or an answer that is
// neither (What it was).
type TokenError struct {
	Status      int    // the HTTP status
	Code        string // the OAuth error code ("invalid_grant"), when the answer was one
	Description string // its error_description: one line, cut, secrets scrubbed
	What        string // otherwise: what the answer was ("an HTML page"), or ""
}

func (e *TokenError) Error() string {
	if e.Code != "" {
		if e.Description != "" {
			return e.Code + " (" + e.Description + ")"
		}
		return e.Code
	}
	s := "HTTP " + strconv.Itoa(e.Status)
	if e.What != "" {
		s += " (" + e.What + ")"
	}
	return s
}

// Refused reports whether the authorization server refused the grant —
// an OAuth error answer, not one saying it is down for now: the same
// request will not do better later.
func (e *TokenError) Refused() bool {
	return e.Code != "" && e.Status < 500 && e.Code != "temporarily_unavailable" && e.Code != "server_error"
}

// Refused reports whether err is the token endpoint's refusal (see
// TokenError.Refused): a refresh it refused means a login is needed.
func Refused(err error) bool {
	var te *TokenError
	return errors.As(err, &te) && te.Refused()
}

// tokenAnswer is the token endpoint's answer (RFC 6749 §5.1, §5.2).
type tokenAnswer struct {
	AccessToken      string          `json:"access_token"`
	TokenType        string          `json:"token_type"`
	RefreshToken     string          `json:"refresh_token"`
	ExpiresIn        json.RawMessage `json:"expires_in"` // a number; some servers send a string of one
	Scope            string          `json:"scope"`
	Error            string          `json:"error"`
	ErrorDescription string          `json:"error_description"`
}

// expiresIn is the answer's lifetime; 0: not said.
func (a tokenAnswer) expiresIn() time.Duration {
	s := strings.Trim(string(a.ExpiresIn), `"`)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > int64(100*365*24*time.Hour/time.Second) {
		return 0
	}
	return time.Duration(n) * time.Second
}

// requestToken posts form (a grant) to st's token endpoint, the client
// authenticated as st says, and reads the token. What fails is a
// *TokenError, or the request's own error; neither quotes a secret of the
// request. It adds the client's credentials to form, which is the caller's
// own (built for this request).
func requestToken(ctx context.Context, hc *http.Client, st *State, form url.Values) (tokenAnswer, error) {
	secrets := []string{form.Get("code"), form.Get("code_verifier"), form.Get("refresh_token"), st.ClientSecret, st.AccessToken}
	method := st.AuthMethod
	if method == "" && st.ClientSecret != "" {
		method = "client_secret_basic"
	}
	switch method {
	case "client_secret_basic":
	case "client_secret_post":
		form.Set("client_id", st.ClientID)
		form.Set("client_secret", st.ClientSecret)
	default:
		form.Set("client_id", st.ClientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, st.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return tokenAnswer{}, fmt.Errorf("the token endpoint %q is not a URL", st.TokenEndpoint)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if method == "client_secret_basic" { // RFC 6749 §2.3.1: each form-encoded first
		req.SetBasicAuth(url.QueryEscape(st.ClientID), url.QueryEscape(st.ClientSecret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return tokenAnswer{}, errors.New(quoted(err.Error(), secrets...))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return tokenAnswer{}, fmt.Errorf("reading the token endpoint's answer: %s", quoted(err.Error(), secrets...))
	}
	over := len(raw) > maxBody
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var ans tokenAnswer
	parsed := !over && parseTokenAnswer(raw, ctype, &ans)
	ok := resp.StatusCode/100 == 2
	switch {
	case parsed && ans.Error != "":
		return tokenAnswer{}, &TokenError{Status: resp.StatusCode, Code: quoted(ans.Error, secrets...),
			Description: quoted(ans.ErrorDescription, secrets...)}
	case !parsed || !ok:
		return tokenAnswer{}, &TokenError{Status: resp.StatusCode, What: describeBody(raw, ctype, over, parsed, secrets)}
	case ans.AccessToken == "":
		return tokenAnswer{}, &TokenError{Status: resp.StatusCode, What: "an answer without access_token"}
	case ans.TokenType != "" && !strings.EqualFold(ans.TokenType, "bearer"):
		return tokenAnswer{}, &TokenError{Status: resp.StatusCode, What: fmt.Sprintf("a token of type %q, not Bearer", quoted(ans.TokenType))}
	}
	return ans, nil
}

// parseTokenAnswer reads a JSON answer, or a form-encoded one (some
// servers send those).
func parseTokenAnswer(raw []byte, ctype string, ans *tokenAnswer) bool {
	if ctype == "application/x-www-form-urlencoded" {
		v, err := url.ParseQuery(string(raw))
		if err != nil {
			return false
		}
		*ans = tokenAnswer{AccessToken: v.Get("access_token"), TokenType: v.Get("token_type"), RefreshToken: v.Get("refresh_token"),
			ExpiresIn: json.RawMessage(strconv.Quote(v.Get("expires_in"))), Scope: v.Get("scope"), Error: v.Get("error"),
			ErrorDescription: v.Get("error_description")}
		return true
	}
	return json.Unmarshal(raw, ans) == nil
}

// describeBody says what an answer that is no token and no OAuth error
// was.
func describeBody(raw []byte, ctype string, over, parsed bool, secrets []string) string {
	text := strings.TrimSpace(string(raw))
	switch {
	case over:
		return "an answer of over 1 MiB"
	case text == "":
		return "an empty answer"
	case ctype == "text/html" || strings.HasPrefix(text, "<"):
		return "an HTML page"
	case parsed:
		return "" // JSON, but neither a token nor an OAuth error
	case ctype == "application/json" || strings.HasPrefix(text, "{"):
		return "malformed JSON"
	default:
		return "not JSON: " + quoted(text, secrets...)
	}
}

// expiryDelta is how long before its expiry a token counts as expired: a
// request sent with it must arrive in time.
const expiryDelta = 10 * time.Second

// fresh reports whether s's access token is still good at now.
func (s *State) fresh(now time.Time) bool {
	return s.Expiry.IsZero() || now.Add(expiryDelta).Before(s.Expiry)
}

// Token returns a valid access token: the one held, or, when it expired
// and a refresh token is there, a refreshed one (changed: save the
// state). A refresh the authorization server refused is an error for
// which Refused is true: the tokens are of no more use, a login is
// needed; any other failure may pass.
func (s *State) Token(ctx context.Context, hc *http.Client) (token string, changed bool, err error) {
	if !s.LoggedIn() {
		return "", false, ErrNoToken
	}
	if s.fresh(time.Now()) || s.RefreshToken == "" {
		return s.AccessToken, false, nil
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {s.RefreshToken}}
	if s.Resource != "" {
		form.Set("resource", s.Resource) // RFC 8707 §2.2: the token is for this resource still
	}
	ans, err := requestToken(ctx, hc, s, form)
	if err != nil {
		if Refused(err) {
			return "", false, fmt.Errorf("the authorization server refused to refresh the token: %w", err)
		}
		return "", false, fmt.Errorf("refreshing the token failed: %w", err)
	}
	s.setToken(ans, time.Now())
	return s.AccessToken, true, nil
}

// DropTokens forgets s's tokens and keeps the client's registration: what
// a refused refresh leaves for the next login.
func (s *State) DropTokens() {
	s.AccessToken, s.TokenType, s.RefreshToken, s.Expiry, s.Scope = "", "", "", time.Time{}, ""
}

func (s *State) setToken(a tokenAnswer, now time.Time) {
	s.AccessToken, s.TokenType, s.Expiry, s.Dropped = a.AccessToken, a.TokenType, time.Time{}, ""
	if s.TokenType == "" {
		s.TokenType = "Bearer"
	}
	if d := a.expiresIn(); d > 0 {
		s.Expiry = now.Add(d)
	}
	if a.RefreshToken != "" {
		s.RefreshToken = a.RefreshToken
	}
	if a.Scope != "" {
		s.Scope = a.Scope
	}
}
