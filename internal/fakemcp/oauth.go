package fakemcp

import (
	"bytes"
	"crypto/rand"
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
// endpoint that approves at once (it redirects back with a one-time code,
// the state and its iss), a token endpoint (the code single-use and bound
// to its PKCE challenge, client, redirect and resource; the client's
// secret checked; refresh tokens known, rotated and revocable), and an MCP endpoint
// (the fake's normal tools over HTTP) that wants a token, and the scope
// mcp:write for tools/call (403 insufficient_scope). SetFault makes one
// part go wrong.
type OAuthServer struct {
	URL string // the server's origin; the MCP endpoint is URL+"/mcp"

	srv *httptest.Server
	mcp http.Handler

	mu         sync.Mutex
	authQuery  url.Values
	tokenForms []url.Values
	codes      map[string]*grant
	clients    map[string]string // client id → secret ("" for a public client)
	tokens     map[string]string // access token → its scope
	refresh    map[string]string // refresh token → its scope
	expiresIn  int
	tokenError string
	fault      Fault
	n          int
}

// grant is an authorization code as the token endpoint checks it.
type grant struct {
	challenge, scope, clientID, redirectURI, resource string
	used, expired                                     bool
}

// Fault is a way the fake goes wrong, for the tests of what a client makes
// of it (SetFault).
type Fault int

const (
	// NoFault: everything as it should be.
	NoFault Fault = iota
	// ResourceMetadataHTML: the protected-resource metadata is an HTML page.
	ResourceMetadataHTML
	// ResourceMetadataNoServers: the protected-resource metadata names no
	// authorization server.
	ResourceMetadataNoServers
	// ResourceMetadataOtherResource: the protected-resource metadata is for
	// another resource.
	ResourceMetadataOtherResource
	// ServerMetadataHTML: the authorization-server metadata is an HTML page.
	ServerMetadataHTML
	// ServerMetadataNoEndpoints: the authorization-server metadata has no
	// authorization or token endpoint.
	ServerMetadataNoEndpoints
	// ServerMetadataOtherIssuer: the authorization-server metadata names
	// another issuer.
	ServerMetadataOtherIssuer
	// ServerMetadataNoPKCE: the authorization-server metadata does not
	// offer S256.
	ServerMetadataNoPKCE
	// TokenHTML: the token endpoint answers 500 with an HTML page.
	TokenHTML
	// TokenHuge: the token endpoint answers 400 with a JSON error of 3 MiB.
	TokenHuge
	// TokenEcho: the token endpoint answers an OAuth error whose
	// description is long, many lines, and quotes the request's code,
	// verifier, refresh token and client secret.
	TokenEcho
)

// NewOAuthServer starts one, closed with the test.
func NewOAuthServer(t *testing.T) *OAuthServer {
	o := &OAuthServer{mcp: HTTPHandler(""), codes: map[string]*grant{}, clients: map[string]string{},
		tokens: map[string]string{}, refresh: map[string]string{}, expiresIn: 3600}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", o.resourceMetadata)
	mux.HandleFunc("/.well-known/oauth-authorization-server", o.serverMetadata)
	mux.HandleFunc("/register", o.register)
	mux.HandleFunc("/authorize", o.authorize)
	mux.HandleFunc("/token", o.token)
	mux.HandleFunc("/mcp", o.serveMCP)
	// The URL is set before the server serves: a handler reads it, and a
	// client in another process (the real binary) gives the race detector
	// no edge from this goroutine to the handler's.
	o.srv = httptest.NewUnstartedServer(mux)
	o.URL = "http://" + o.srv.Listener.Addr().String()
	o.srv.Start()
	t.Cleanup(o.srv.Close)
	return o
}

const htmlPage = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><h1>Bad Gateway</h1></body></html>\n"

func (o *OAuthServer) currentFault() Fault {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.fault
}

func (o *OAuthServer) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	meta := map[string]any{"resource": o.URL + "/mcp", "authorization_servers": []string{o.URL},
		"scopes_supported": []string{"mcp:read"}}
	switch o.currentFault() {
	case ResourceMetadataHTML:
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, htmlPage)
		return
	case ResourceMetadataNoServers:
		delete(meta, "authorization_servers")
	case ResourceMetadataOtherResource:
		meta["resource"] = "https://elsewhere.example/mcp"
	}
	writeJSON(w, http.StatusOK, meta)
}

func (o *OAuthServer) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	meta := map[string]any{"issuer": o.URL, "authorization_endpoint": o.URL + "/authorize",
		"token_endpoint": o.URL + "/token", "registration_endpoint": o.URL + "/register",
		"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": []string{"mcp:read", "mcp:write", "offline_access"},
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_basic", "client_secret_post"},
		"authorization_response_iss_parameter_supported": true}
	switch o.currentFault() {
	case ServerMetadataHTML:
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, htmlPage)
		return
	case ServerMetadataNoEndpoints:
		delete(meta, "authorization_endpoint")
		delete(meta, "token_endpoint")
	case ServerMetadataOtherIssuer:
		meta["issuer"] = "https://evil.example"
	case ServerMetadataNoPKCE:
		meta["code_challenge_methods_supported"] = []string{"plain"}
	}
	writeJSON(w, http.StatusOK, meta)
}

func (o *OAuthServer) register(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	_ = json.NewDecoder(r.Body).Decode(&req)
	o.mu.Lock()
	id := fmt.Sprintf("client-%d", len(o.clients)+1)
	o.clients[id] = ""
	o.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req["redirect_uris"]})
}

// AddClient registers a client by hand (a pre-registered client id and
// its secret; "" for a public client).
func (o *OAuthServer) AddClient(id, secret string) {
	o.mu.Lock()
	o.clients[id] = secret
	o.mu.Unlock()
}

func (o *OAuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || back.Scheme == "" {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	_, known := o.clients[q.Get("client_id")]
	code := "code-" + randomToken()
	o.authQuery = q
	if known {
		o.codes[code] = &grant{challenge: q.Get("code_challenge"), scope: q.Get("scope"), clientID: q.Get("client_id"),
			redirectURI: q.Get("redirect_uri"), resource: q.Get("resource")}
	}
	o.mu.Unlock()
	v := back.Query()
	if known {
		v.Set("code", code)
	} else {
		v.Set("error", "unauthorized_client")
		v.Set("error_description", "unknown client_id")
	}
	v.Set("state", q.Get("state"))
	v.Set("iss", o.URL)
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// tokenError answers an OAuth error (RFC 6749 §5.2).
func tokenError(w http.ResponseWriter, status int, code, description string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": description})
}

func (o *OAuthServer) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	form := r.PostForm
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tokenForms = append(o.tokenForms, form)
	clientID, secret, basic := r.BasicAuth()
	if basic {
		clientID, _ = url.QueryUnescape(clientID)
		secret, _ = url.QueryUnescape(secret)
	} else {
		clientID, secret = form.Get("client_id"), form.Get("client_secret")
	}
	switch o.fault {
	case TokenHTML:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, htmlPage)
		return
	case TokenHuge:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_request","error_description":"`+strings.Repeat("x", 3<<20)+`"}`)
		return
	case TokenEcho:
		line := fmt.Sprintf("refused code=%s code_verifier=%s refresh_token=%s client_secret=%s\n",
			form.Get("code"), form.Get("code_verifier"), form.Get("refresh_token"), secret)
		tokenError(w, http.StatusBadRequest, "invalid_request", strings.Repeat(line, 500))
		return
	}
	if o.tokenError != "" {
		tokenError(w, http.StatusBadRequest, o.tokenError, "the code expired")
		return
	}
	want, known := o.clients[clientID]
	if !known || want != secret {
		tokenError(w, http.StatusUnauthorized, "invalid_client", "unknown client, or a wrong secret")
		return
	}
	if res := form.Get("resource"); res != "" && res != o.URL+"/mcp" {
		tokenError(w, http.StatusBadRequest, "invalid_target", "not a resource of this server")
		return
	}
	scope := ""
	switch form.Get("grant_type") {
	case "authorization_code":
		g := o.codes[form.Get("code")]
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		switch {
		case g == nil:
			tokenError(w, http.StatusBadRequest, "invalid_grant", "unknown code")
			return
		case g.used:
			tokenError(w, http.StatusBadRequest, "invalid_grant", "the code was already used")
			return
		case g.expired:
			tokenError(w, http.StatusBadRequest, "invalid_grant", "the code expired")
			return
		case g.clientID != clientID || g.redirectURI != form.Get("redirect_uri") || g.resource != form.Get("resource"):
			tokenError(w, http.StatusBadRequest, "invalid_grant", "the code was issued for another client, redirect or resource")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			tokenError(w, http.StatusBadRequest, "invalid_grant", "PKCE verifier mismatch")
			return
		}
		g.used = true
		scope = g.scope
	case "refresh_token":
		s, ok := o.refresh[form.Get("refresh_token")]
		if !ok {
			tokenError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is not valid")
			return
		}
		delete(o.refresh, form.Get("refresh_token")) // rotated: each is good once (OAuth 2.1 §4.3.1)
		scope = s
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", form.Get("grant_type"))
		return
	}
	o.n++
	token := fmt.Sprintf("access-%d-%s", o.n, strings.ReplaceAll(scope, " ", "+"))
	refresh := "refresh-" + randomToken()
	o.tokens[token] = scope
	o.refresh[refresh] = scope
	writeJSON(w, http.StatusOK, map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": o.expiresIn,
		"refresh_token": refresh, "scope": scope})
}

func (o *OAuthServer) serveMCP(w http.ResponseWriter, r *http.Request) {
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
}

func randomToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
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

// SetFault makes the fake go wrong as f says (NoFault again: right).
func (o *OAuthServer) SetFault(f Fault) {
	o.mu.Lock()
	o.fault = f
	o.mu.Unlock()
}

// ExpireCodes makes every code issued so far expired.
func (o *OAuthServer) ExpireCodes() {
	o.mu.Lock()
	for _, g := range o.codes {
		g.expired = true
	}
	o.mu.Unlock()
}

// SpendCodes makes every code issued so far used, as if another client had
// exchanged it first.
func (o *OAuthServer) SpendCodes() {
	o.mu.Lock()
	for _, g := range o.codes {
		g.used = true
	}
	o.mu.Unlock()
}

// Revoke forgets every token issued, access and refresh: the next
// requests need a login.
func (o *OAuthServer) Revoke() {
	o.mu.Lock()
	o.tokens = map[string]string{}
	o.refresh = map[string]string{}
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
