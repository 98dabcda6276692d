package fakemcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// OAuthServer is an OAuth authorization server and the MCP server it
// protects, in one httptest server: protected-resource and
// authorization-server metadata, dynamic registration, an authorization
// endpoint that approves at once (it redirects back with the code, the
// state and its iss), a token endpoint (PKCE checked; refresh), and an
// MCP endpoint (the fake's normal tools over HTTP) that wants a token,
// and the scope mcp:write for tools/call (403 insufficient_scope).
type OAuthServer struct {
	URL string // the server's origin; the MCP endpoint is URL+"/mcp"

	srv *httptest.Server
	mcp http.Handler

	mu         sync.Mutex
	challenge  string
	authQuery  url.Values
	tokenForms []url.Values
	tokens     map[string]string // access token → its scope
	expiresIn  int
	tokenError string
	n          int
}

// NewOAuthServer starts one, closed with the test.
func NewOAuthServer(t *testing.T) *OAuthServer {
	o := &OAuthServer{mcp: HTTPHandler(""), tokens: map[string]string{}, expiresIn: 3600}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": o.URL + "/mcp", "authorization_servers": []string{o.URL},
			"scopes_supported": []string{"mcp:read"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"issuer": o.URL, "authorization_endpoint": o.URL + "/authorize",
			"token_endpoint": o.URL + "/token", "registration_endpoint": o.URL + "/register",
			"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": []string{"mcp:read", "mcp:write", "offline_access"},
			"token_endpoint_auth_methods_supported": []string{"none"}, "authorization_response_iss_parameter_supported": true})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": "client-1", "redirect_uris": req["redirect_uris"]})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		o.mu.Lock()
		o.challenge, o.authQuery = q.Get("code_challenge"), q
		o.mu.Unlock()
		back, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect_uri", http.StatusBadRequest)
			return
		}
		v := back.Query()
		v.Set("code", "code-"+q.Get("scope"))
		v.Set("state", q.Get("state"))
		v.Set("iss", o.URL)
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		defer o.mu.Unlock()
		o.tokenForms = append(o.tokenForms, r.PostForm)
		if o.tokenError != "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": o.tokenError, "error_description": "the code expired"})
			return
		}
		scope := ""
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if base64.RawURLEncoding.EncodeToString(sum[:]) != o.challenge {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier mismatch"})
				return
			}
			scope = strings.TrimPrefix(r.PostForm.Get("code"), "code-")
		case "refresh_token":
			scope = strings.TrimPrefix(r.PostForm.Get("refresh_token"), "refresh-")
		}
		o.n++
		token := fmt.Sprintf("access-%d-%s", o.n, strings.ReplaceAll(scope, " ", "+"))
		o.tokens[token] = scope
		writeJSON(w, http.StatusOK, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": o.expiresIn,
			"refresh_token": "refresh-" + scope, "scope": scope})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.mu.Lock()
		scope, ok := o.tokens[token]
		o.mu.Unlock()
		meta := o.URL + "/.well-known/oauth-protected-resource/mcp"
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+meta+`"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && !strings.Contains(scope, "mcp:write") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="`+meta+`"`)
				w.WriteHeader(http.StatusForbidden)
				return
			}
		}
		o.mcp.ServeHTTP(w, r)
	})
	o.srv = httptest.NewServer(mux)
	o.URL = o.srv.URL
	t.Cleanup(o.srv.Close)
	return o
}

// AuthQuery is the last authorization request's query.
func (o *OAuthServer) AuthQuery() url.Values {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.authQuery
}

// TokenRequests are the token endpoint's requests so far.
func (o *OAuthServer) TokenRequests() []url.Values {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]url.Values(nil), o.tokenForms...)
}

// SetExpiresIn is the lifetime of the next tokens, in seconds.
func (o *OAuthServer) SetExpiresIn(s int) {
	o.mu.Lock()
	o.expiresIn = s
	o.mu.Unlock()
}

// SetTokenError makes the token endpoint answer the OAuth error code
// ("" again: tokens).
func (o *OAuthServer) SetTokenError(code string) {
	o.mu.Lock()
	o.tokenError = code
	o.mu.Unlock()
}

// Revoke forgets every token issued: the next requests need a login.
func (o *OAuthServer) Revoke() {
	o.mu.Lock()
	o.tokens = map[string]string{}
	o.mu.Unlock()
}

// Browse follows an authorization URL as a browser would, up to the
// redirect back to the client: the address it ends on.
func Browse(t *testing.T, authURL string) string {
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

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
