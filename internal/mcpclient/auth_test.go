package mcpclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/fakemcp"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/redact"
)

// oauthServer is an authorization server and the MCP server it protects,
// in one httptest server: discovery, registration, the authorization
// endpoint (it approves at once and redirects with the code), the token
// endpoint (PKCE checked, refresh), and an MCP endpoint that wants a
// token, and the scope mcp:write for tools/call.
type oauthServer struct {
	t   *testing.T
	srv *httptest.Server
	mcp http.Handler

	mu         sync.Mutex
	challenge  string // the last authorization request's code_challenge
	authQuery  url.Values
	tokenForms []url.Values
	tokens     map[string]string // access token → its scope
	expiresIn  int
	tokenError string // the token endpoint answers this error when set
	n          int
}

func newOAuthServer(t *testing.T) *oauthServer {
	o := &oauthServer{t: t, mcp: fakemcp.HTTPHandler(""), tokens: map[string]string{}, expiresIn: 3600}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": o.srv.URL + "/mcp", "authorization_servers": []string{o.srv.URL},
			"scopes_supported": []string{"mcp:read"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"issuer": o.srv.URL, "authorization_endpoint": o.srv.URL + "/authorize",
			"token_endpoint": o.srv.URL + "/token", "registration_endpoint": o.srv.URL + "/register",
			"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": []string{"mcp:read", "mcp:write", "offline_access"},
			"token_endpoint_auth_methods_supported": []string{"none"}, "authorization_response_iss_parameter_supported": true})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "client-1", "redirect_uris": req["redirect_uris"]})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		o.mu.Lock()
		o.challenge, o.authQuery = q.Get("code_challenge"), q
		o.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		v := back.Query()
		v.Set("code", "code-"+q.Get("scope"))
		v.Set("state", q.Get("state"))
		v.Set("iss", o.srv.URL)
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		defer o.mu.Unlock()
		o.tokenForms = append(o.tokenForms, r.PostForm)
		if o.tokenError != "" {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]string{"error": o.tokenError, "error_description": "the code expired"})
			return
		}
		scope := ""
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if base64.RawURLEncoding.EncodeToString(sum[:]) != o.challenge {
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier mismatch"})
				return
			}
			scope = strings.TrimPrefix(r.PostForm.Get("code"), "code-")
		case "refresh_token":
			scope = strings.TrimPrefix(r.PostForm.Get("refresh_token"), "refresh-")
		}
		o.n++
		token := fmt.Sprintf("access-%d-%s", o.n, strings.ReplaceAll(scope, " ", "+"))
		o.tokens[token] = scope
		writeJSON(w, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": o.expiresIn,
			"refresh_token": "refresh-" + scope, "scope": scope})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		scope, ok := o.tokens[token]
		o.mu.Unlock()
		meta := o.srv.URL + "/.well-known/oauth-protected-resource/mcp"
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+meta+`"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && !strings.Contains(scope, "mcp:write") {
			body, _ := readAllAndRestore(r)
			if strings.Contains(body, `"tools/call"`) {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="`+meta+`"`)
				w.WriteHeader(http.StatusForbidden)
				return
			}
		}
		o.mcp.ServeHTTP(w, r)
	})
	o.srv = httptest.NewServer(mux)
	t.Cleanup(o.srv.Close)
	return o
}

func readAllAndRestore(r *http.Request) (string, error) {
	raw, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return string(raw), err
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// browse follows the authorization URL as a browser would, up to the
// redirect back to the bot: the address it ends on.
func browse(t *testing.T, authURL string) string {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorization answered %d", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// A server that wants OAuth: discovery says needs login; a login (PKCE,
// resource indicator, dynamic registration) stores the token in a 0600
// file and the server is discovered again; a call that needs more scopes
// says so, and a second login with them lets it run; an expired token is
// refreshed; no token reaches the log.
func TestOAuthLogin(t *testing.T) {
	o := newOAuthServer(t)
	cfg := httpConfig("remote", o.srv.URL+"/mcp", nil)
	dir := t.TempDir()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	client := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: redact.NewEnvFilter(os.Environ()), Logger: logger,
		AuthDir: filepath.Join(dir, "mcp-auth")})
	t.Cleanup(client.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	cats := client.Discover(ctx)
	var nl *NeedsLoginError
	if !errors.As(cats[0].Err, &nl) || nl.StepUp {
		t.Fatalf("discovery: %v, want needs login", cats[0].Err)
	}
	s, _ := client.NewSession(t.TempDir())
	defer s.Close()
	if txt := s.StatusText(); !strings.Contains(txt, "needs login") {
		t.Errorf("/mcp:\n%s", txt)
	}

	const redirect = "http://127.0.0.1:9/callback"
	login, err := client.Login(ctx, "remote", redirect)
	if err != nil {
		t.Fatal(err)
	}
	back := browse(t, login.URL)
	o.mu.Lock()
	q := o.authQuery
	o.mu.Unlock()
	if q.Get("resource") != o.srv.URL+"/mcp" || q.Get("code_challenge_method") != "S256" || q.Get("client_id") != "client-1" ||
		q.Get("scope") != "mcp:read offline_access" || q.Get("redirect_uri") != redirect {
		t.Errorf("authorization request %v", q)
	}
	if err := login.Finish(ctx, back); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp-auth", "remote.json")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want 0600", fi, err)
	}
	cats = client.Discover(ctx)
	if cats[0].Err != nil || len(cats[0].Catalog.Tools) == 0 {
		t.Fatalf("discovery after the login: %v", cats[0].Err)
	}

	echo := Tool{Server: "remote", MCPName: fakemcp.ToolEcho, Name: fakemcp.ToolEcho}
	res, err := s.Call(ctx, echo, json.RawMessage(`{"text":"hi"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "needs a login with more permissions") {
		t.Fatalf("a call without mcp:write: %q (%v)", res.Text(), err)
	}
	login, err = client.Login(ctx, "remote", redirect)
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(login.URL); !strings.Contains(u.Query().Get("scope"), "mcp:write") {
		t.Errorf("the step-up asks for %q", u.Query().Get("scope"))
	}
	o.mu.Lock()
	o.expiresIn = 1 // expired at once (x/oauth2 allows 10 s): the next request refreshes it
	o.mu.Unlock()
	if err := login.Finish(ctx, browse(t, login.URL)); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Call(ctx, echo, json.RawMessage(`{"text":"hi"}`)); err != nil || res.IsError || res.Text() != "hi" {
		t.Fatalf("the call after the step-up: %q (%v)", res.Text(), err)
	}
	o.mu.Lock()
	last := o.tokenForms[len(o.tokenForms)-1]
	o.mu.Unlock()
	if last.Get("grant_type") != "refresh_token" {
		t.Errorf("the expired token was not refreshed: last token request %v", last)
	}
	raw, _ := os.ReadFile(path)
	var st struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.Unmarshal(raw, &st)
	if st.AccessToken == "" || strings.Contains(logs.String(), st.AccessToken) || strings.Contains(logs.String(), "refresh-") {
		t.Errorf("the token %q is in the log, or not in the file", st.AccessToken)
	}
}

// What goes wrong in a login is one line, and leaves the server needing
// it: a wrong state, a token endpoint's error, metadata for another
// issuer.
func TestOAuthLoginFailures(t *testing.T) {
	o := newOAuthServer(t)
	cfg := httpConfig("remote", o.srv.URL+"/mcp", nil)
	client := New(Options{Servers: []mcpconfig.ServerConfig{cfg}, Env: redact.NewEnvFilter(os.Environ())})
	t.Cleanup(client.Close)
	ctx := t.Context()
	login, err := client.Login(ctx, "remote", "http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatal(err)
	}
	back := browse(t, login.URL)
	forged := strings.Replace(back, "state=", "state=x", 1)
	if err := login.Finish(ctx, forged); err == nil || !strings.Contains(err.Error(), "wrong state") {
		t.Errorf("a wrong state: %v", err)
	}
	otherIss := strings.Replace(back, "iss=", "iss=x", 1)
	if err := login.Finish(ctx, otherIss); err == nil || !strings.Contains(err.Error(), "another authorization server") {
		t.Errorf("a wrong iss: %v", err)
	}
	o.mu.Lock()
	o.tokenError = "invalid_grant"
	o.mu.Unlock()
	if err := login.Finish(ctx, back); err == nil || !strings.Contains(err.Error(), "invalid_grant the code expired") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a token error: %v", err)
	}
	if client.LoggedIn("remote") {
		t.Error("logged in after failures")
	}
}
