package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseChallenge(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header []string
		want   Challenge
		ok     bool
	}{
		{"quoted", []string{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource/mcp", scope="a b"`},
			Challenge{ResourceMetadata: "https://x/.well-known/oauth-protected-resource/mcp", Scope: "a b"}, true},
		{"unquoted and case", []string{`bearer error=insufficient_scope, Scope=write`}, Challenge{Error: "insufficient_scope", Scope: "write"}, true},
		{"escapes", []string{`Bearer scope="a \"b\" c\\d"`}, Challenge{Scope: `a "b" c\d`}, true},
		{"bare", []string{`Bearer`}, Challenge{}, true},
		{"another scheme first", []string{`Basic realm="x"`, `Bearer error="invalid_token"`}, Challenge{Error: "invalid_token"}, true},
		{"no bearer", []string{`Basic realm="x"`}, Challenge{}, false},
		{"none", nil, Challenge{}, false},
		{"unterminated quote", []string{`Bearer scope="a b`}, Challenge{Scope: "a b"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.header {
				h.Add("WWW-Authenticate", v)
			}
			got, ok := ParseChallenge(h)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %+v %v, want %+v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// server is an httptest server whose routes are added once its URL is
// known, recording the path of every request.
type server struct {
	*httptest.Server
	mux *http.ServeMux

	mu   sync.Mutex
	hits []string
}

func newServer(t *testing.T) *server {
	s := &server{mux: http.NewServeMux()}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits = append(s.hits, r.URL.Path)
		s.mu.Unlock()
		s.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) json(path string, v any) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, v) })
}

func (s *server) raw(path string, status int, ctype, body string) {
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	})
}

func (s *server) Hits() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hits)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

const htmlPage = "<!DOCTYPE html>\n<html><body>Bad Gateway</body></html>\n"

// Protected-resource metadata: at the challenge's URL, else the
// well-known URL with the endpoint's path, else the origin's; its resource
// must be the endpoint or a parent of it on the same origin.
func TestDiscoverResource(t *testing.T) {
	for _, tt := range []struct {
		name       string
		path       string // the MCP endpoint's path
		advertised string // the challenge's resource_metadata path
		routes     func(s *server)
		hits       []string
		err        string
	}{
		{name: "advertised", path: "/mcp", advertised: "/meta",
			routes: func(s *server) {
				s.json("/meta", ProtectedResource{Resource: s.URL + "/mcp", AuthorizationServers: []string{s.URL}})
			},
			hits: []string{"/meta"}},
		{name: "path-suffixed well-known", path: "/api/mcp",
			routes: func(s *server) {
				s.json("/.well-known/oauth-protected-resource/api/mcp", ProtectedResource{Resource: s.URL + "/api/mcp"})
			},
			hits: []string{"/.well-known/oauth-protected-resource/api/mcp"}},
		{name: "root well-known, resource the origin", path: "/mcp",
			routes: func(s *server) { s.json("/.well-known/oauth-protected-resource", ProtectedResource{Resource: s.URL}) },
			hits:   []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}},
		{name: "trailing slash", path: "/mcp/",
			routes: func(s *server) {
				s.json("/.well-known/oauth-protected-resource/mcp", ProtectedResource{Resource: s.URL + "/mcp"})
			},
			hits: []string{"/.well-known/oauth-protected-resource/mcp"}},
		{name: "a parent path", path: "/v1/mcp",
			routes: func(s *server) {
				s.json("/.well-known/oauth-protected-resource/v1/mcp", ProtectedResource{Resource: s.URL + "/v1"})
			}},
		{name: "advertised is HTML, the well-known serves", path: "/mcp", advertised: "/meta",
			routes: func(s *server) {
				s.raw("/meta", http.StatusOK, "text/html", htmlPage)
				s.json("/.well-known/oauth-protected-resource/mcp", ProtectedResource{Resource: s.URL + "/mcp"})
			},
			hits: []string{"/meta", "/.well-known/oauth-protected-resource/mcp"}},
		{name: "HTML and nothing else", path: "/mcp", advertised: "/meta",
			routes: func(s *server) { s.raw("/meta", http.StatusOK, "text/html", htmlPage) },
			err:    "/meta is an HTML page, not JSON"},
		{name: "not JSON of its shape", path: "/mcp",
			routes: func(s *server) {
				s.raw("/.well-known/oauth-protected-resource/mcp", http.StatusOK, "application/json", `{"resource": 5}`)
			},
			err: "is not metadata JSON"},
		{name: "over 1 MiB", path: "/mcp",
			routes: func(s *server) {
				s.raw("/.well-known/oauth-protected-resource/mcp", http.StatusOK, "application/json", `{"resource":"`+strings.Repeat("x", 2<<20)+`"}`)
			},
			err: "/.well-known/oauth-protected-resource/mcp is over 1 MiB"},
		{name: "none", path: "/mcp", routes: func(*server) {}, err: "/.well-known/oauth-protected-resource/mcp: HTTP 404"},
		{name: "another path", path: "/mcp",
			routes: func(s *server) {
				s.json("/.well-known/oauth-protected-resource/mcp", ProtectedResource{Resource: s.URL + "/other"})
			},
			err: "/other\", not for"},
		{name: "another origin", path: "/mcp",
			routes: func(s *server) {
				s.json("/.well-known/oauth-protected-resource/mcp", ProtectedResource{Resource: "https://elsewhere.example/mcp"})
			},
			err: `is for "https://elsewhere.example/mcp"`},
		{name: "no resource", path: "/mcp",
			routes: func(s *server) { s.json("/.well-known/oauth-protected-resource/mcp", ProtectedResource{}) }, err: `is for ""`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			tt.routes(s)
			advertised := ""
			if tt.advertised != "" {
				advertised = s.URL + tt.advertised
			}
			pr, err := discoverResource(t.Context(), s.Client(), s.URL+tt.path, advertised)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || pr.Resource == "" {
				t.Fatalf("%+v %v", pr, err)
			}
			if tt.hits != nil && !slices.Equal(s.Hits(), tt.hits) {
				t.Errorf("asked %v, want %v", s.Hits(), tt.hits)
			}
		})
	}
}

// Authorization-server metadata: RFC 8414 with the issuer's path inserted,
// then OpenID discovery inserted and appended; the issuer exact, the
// endpoints URLs, S256 offered.
func TestDiscoverServer(t *testing.T) {
	good := func(s *server, issuer string) map[string]any {
		return map[string]any{"issuer": issuer, "authorization_endpoint": s.URL + "/authorize", "token_endpoint": s.URL + "/token",
			"code_challenge_methods_supported": []string{"S256"}}
	}
	for _, tt := range []struct {
		name   string
		path   string // the issuer's path
		routes func(s *server, issuer string)
		hits   []string
		err    string
	}{
		{name: "RFC 8414 at the root", routes: func(s *server, iss string) { s.json("/.well-known/oauth-authorization-server", good(s, iss)) },
			hits: []string{"/.well-known/oauth-authorization-server"}},
		{name: "RFC 8414 with the path inserted", path: "/tenant/1",
			routes: func(s *server, iss string) { s.json("/.well-known/oauth-authorization-server/tenant/1", good(s, iss)) },
			hits:   []string{"/.well-known/oauth-authorization-server/tenant/1"}},
		{name: "OpenID at the root", routes: func(s *server, iss string) { s.json("/.well-known/openid-configuration", good(s, iss)) },
			hits: []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}},
		{name: "OpenID with the path inserted", path: "/tenant",
			routes: func(s *server, iss string) { s.json("/.well-known/openid-configuration/tenant", good(s, iss)) },
			hits:   []string{"/.well-known/oauth-authorization-server/tenant", "/.well-known/openid-configuration/tenant"}},
		{name: "OpenID with the path appended", path: "/tenant",
			routes: func(s *server, iss string) { s.json("/tenant/.well-known/openid-configuration", good(s, iss)) },
			hits: []string{"/.well-known/oauth-authorization-server/tenant", "/.well-known/openid-configuration/tenant",
				"/tenant/.well-known/openid-configuration"}},
		{name: "another issuer", routes: func(s *server, iss string) { s.json("/.well-known/oauth-authorization-server", good(s, iss+"/x")) },
			err: "is for the issuer"},
		{name: "HTML", routes: func(s *server, iss string) {
			s.raw("/.well-known/oauth-authorization-server", http.StatusOK, "text/html", htmlPage)
		}, err: "is an HTML page, not JSON"},
		{name: "no endpoints", routes: func(s *server, iss string) {
			s.json("/.well-known/oauth-authorization-server", map[string]any{"issuer": iss, "code_challenge_methods_supported": []string{"S256"}})
		}, err: "has no authorization_endpoint or token_endpoint"},
		{name: "an endpoint not a URL", routes: func(s *server, iss string) {
			m := good(s, iss)
			m["token_endpoint"] = "/token"
			s.json("/.well-known/oauth-authorization-server", m)
		}, err: `token_endpoint "/token" is not an http(s) URL`},
		{name: "no PKCE methods", routes: func(s *server, iss string) {
			m := good(s, iss)
			delete(m, "code_challenge_methods_supported")
			s.json("/.well-known/oauth-authorization-server", m)
		}, err: "does not support PKCE with S256"},
		{name: "plain PKCE only", routes: func(s *server, iss string) {
			m := good(s, iss)
			m["code_challenge_methods_supported"] = []string{"plain"}
			s.json("/.well-known/oauth-authorization-server", m)
		}, err: "does not support PKCE with S256"},
		{name: "none", routes: func(*server, string) {}, err: "no authorization server metadata"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			issuer := s.URL + tt.path
			tt.routes(s, issuer)
			m, err := discoverServer(t.Context(), s.Client(), issuer)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || m.Issuer != issuer {
				t.Fatalf("%+v %v", m, err)
			}
			if !slices.Equal(s.Hits(), tt.hits) {
				t.Errorf("asked %v, want %v", s.Hits(), tt.hits)
			}
		})
	}
	if _, err := discoverServer(t.Context(), http.DefaultClient, "ftp://x"); err == nil {
		t.Error("an ftp issuer")
	}
}

// as is an authorization server and the resource it protects (at
// URL+"/mcp"), for Begin, Finish and refresh: what it serves is edited by
// the test, what it receives recorded.
type as struct {
	*server
	meta map[string]any
	prm  map[string]any

	mu            sync.Mutex
	registrations []map[string]any
	registered    map[string]any // the registration's answer
	tokenForms    []url.Values
	tokenAuth     []string // each token request's Authorization header
	answer        func(form url.Values) (status int, ctype, body string)
}

func newAS(t *testing.T) *as {
	a := &as{server: newServer(t)}
	a.meta = map[string]any{"issuer": a.URL, "authorization_endpoint": a.URL + "/authorize", "token_endpoint": a.URL + "/token",
		"registration_endpoint": a.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"}, "scopes_supported": []string{"read", "write"}}
	a.prm = map[string]any{"resource": a.URL + "/mcp", "authorization_servers": []string{a.URL}, "scopes_supported": []string{"read"}}
	a.registered = map[string]any{"client_id": "dyn-1"}
	a.answer = func(url.Values) (int, string, string) {
		return http.StatusOK, "application/json", `{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-1","scope":"read"}`
	}
	a.mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, a.prm) })
	a.mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, a.meta) })
	a.mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		a.mu.Lock()
		a.registrations = append(a.registrations, req)
		ans := a.registered
		a.mu.Unlock()
		writeJSON(w, http.StatusCreated, ans)
	})
	a.mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		a.mu.Lock()
		a.tokenForms = append(a.tokenForms, r.PostForm)
		a.tokenAuth = append(a.tokenAuth, r.Header.Get("Authorization"))
		answer := a.answer
		a.mu.Unlock()
		status, ctype, body := answer(r.PostForm)
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	})
	return a
}

func (a *as) config() Config {
	return Config{ServerURL: a.URL + "/mcp", ClientName: "volcanicbot", RedirectURL: "http://127.0.0.1:8976/callback", HTTP: a.Client()}
}

func (a *as) lastToken(t *testing.T) (url.Values, string) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.tokenForms) == 0 {
		t.Fatal("no token request")
	}
	return a.tokenForms[len(a.tokenForms)-1], a.tokenAuth[len(a.tokenAuth)-1]
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// The authorization URL: the code flow, PKCE S256 of the flow's verifier,
// the state, the redirect, the resource indicator and the scope.
func TestBeginAuthorizationURL(t *testing.T) {
	a := newAS(t)
	f, err := Begin(t.Context(), a.config(), nil, Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(f.URL)
	if err != nil || u.Scheme+"://"+u.Host+u.Path != a.URL+"/authorize" {
		t.Fatalf("URL %q (%v)", f.URL, err)
	}
	q := u.Query()
	want := map[string]string{"response_type": "code", "client_id": "dyn-1", "redirect_uri": "http://127.0.0.1:8976/callback",
		"state": f.State(), "code_challenge_method": "S256", "code_challenge": s256(f.verifier), "resource": a.URL + "/mcp", "scope": "read"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, q.Get(k), v)
		}
	}
	if len(f.State()) < 20 || len(f.verifier) < 43 {
		t.Errorf("state %q, verifier %q: too short", f.State(), f.verifier)
	}
	g, _ := Begin(t.Context(), a.config(), nil, Challenge{})
	if g.State() == f.State() || g.verifier == f.verifier {
		t.Error("two flows share a state or a verifier")
	}
	if f.Issuer() != a.URL {
		t.Errorf("issuer %q", f.Issuer())
	}
}

// Who the client is: pre-registered (with the server's preferred secret
// method), a client ID metadata document where supported, a kept
// registration for the same issuer and redirect, else a new dynamic
// registration.
func TestBeginClientIdentity(t *testing.T) {
	const cimd = "https://bot.example/client.json"
	for _, tt := range []struct {
		name       string
		edit       func(a *as, cfg *Config, prev **State)
		clientID   string
		method     string
		secret     string
		registered bool // a registration request was sent
		err        string
	}{
		{name: "pre-registered, basic preferred", edit: func(a *as, c *Config, _ **State) {
			c.ClientID, c.ClientSecret = "pre", "sec"
			a.meta["token_endpoint_auth_methods_supported"] = []string{"client_secret_post", "client_secret_basic"}
		}, clientID: "pre", method: "client_secret_basic", secret: "sec"},
		{name: "pre-registered, post only", edit: func(a *as, c *Config, _ **State) {
			c.ClientID, c.ClientSecret = "pre", "sec"
			a.meta["token_endpoint_auth_methods_supported"] = []string{"client_secret_post"}
		}, clientID: "pre", method: "client_secret_post", secret: "sec"},
		{name: "pre-registered, public", edit: func(a *as, c *Config, _ **State) { c.ClientID = "pre" }, clientID: "pre", method: "none"},
		{name: "metadata document", edit: func(a *as, c *Config, _ **State) {
			c.ClientMetadataURL = cimd
			a.meta["client_id_metadata_document_supported"] = true
		}, clientID: cimd, method: "none"},
		{name: "metadata document unsupported: registered", edit: func(a *as, c *Config, _ **State) { c.ClientMetadataURL = cimd },
			clientID: "dyn-1", method: "none", registered: true},
		{name: "metadata document not https", edit: func(a *as, c *Config, _ **State) { c.ClientMetadataURL = "http://bot.example/c.json" },
			err: "is not an https URL"},
		{name: "registered", clientID: "dyn-1", method: "none", registered: true},
		{name: "registered with a secret", edit: func(a *as, c *Config, _ **State) {
			a.meta["token_endpoint_auth_methods_supported"] = []string{"client_secret_basic"}
			a.registered = map[string]any{"client_id": "dyn-2", "client_secret": "dyn-sec"}
		}, clientID: "dyn-2", method: "client_secret_basic", secret: "dyn-sec", registered: true},
		{name: "a kept registration", edit: func(a *as, c *Config, prev **State) {
			*prev = &State{Issuer: a.URL, ClientID: "old", ClientSecret: "old-sec", AuthMethod: "client_secret_post", Registered: true, RedirectURL: c.RedirectURL}
		}, clientID: "old", method: "client_secret_post", secret: "old-sec"},
		{name: "a registration for another redirect", edit: func(a *as, c *Config, prev **State) {
			*prev = &State{Issuer: a.URL, ClientID: "old", Registered: true, RedirectURL: "http://127.0.0.1:1/cb"}
		}, clientID: "dyn-1", method: "none", registered: true},
		{name: "a registration with another issuer", edit: func(a *as, c *Config, prev **State) {
			*prev = &State{Issuer: "https://old.example", ClientID: "old", Registered: true, RedirectURL: c.RedirectURL}
		}, clientID: "dyn-1", method: "none", registered: true},
		{name: "no registration endpoint", edit: func(a *as, c *Config, _ **State) { delete(a.meta, "registration_endpoint") },
			err: "give the server's entry an oauthClientId"},
		{name: "a registration without client_id", edit: func(a *as, c *Config, _ **State) { a.registered = map[string]any{"x": 1} },
			err: "the answer has no client_id", registered: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAS(t)
			cfg := a.config()
			var prev *State
			if tt.edit != nil {
				tt.edit(a, &cfg, &prev)
			}
			f, err := Begin(t.Context(), cfg, prev, Challenge{})
			a.mu.Lock()
			regs := slices.Clone(a.registrations)
			a.mu.Unlock()
			if (len(regs) > 0) != tt.registered {
				t.Errorf("registrations %v, want some: %v", regs, tt.registered)
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.next.ClientID != tt.clientID || f.next.AuthMethod != tt.method || f.next.ClientSecret != tt.secret ||
				f.next.Registered != (tt.registered || (prev != nil && f.next.ClientID == prev.ClientID)) {
				t.Errorf("client %+v, want %s %s %q", f.next, tt.clientID, tt.method, tt.secret)
			}
			if q := mustQuery(t, f.URL); q.Get("client_id") != tt.clientID {
				t.Errorf("authorization client_id %q", q.Get("client_id"))
			}
			if len(regs) > 0 {
				r := regs[0]
				if r["client_name"] != "volcanicbot" || r["application_type"] != "native" || r["token_endpoint_auth_method"] != tt.method ||
					!equalJSON(r["redirect_uris"], []string{cfg.RedirectURL}) || !equalJSON(r["grant_types"], []string{"authorization_code", "refresh_token"}) ||
					!equalJSON(r["response_types"], []string{"code"}) {
					t.Errorf("registration request %v", r)
				}
			}
		})
	}
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

func equalJSON(a any, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Scopes: the challenge's, else the resource's scopes_supported, else the
// configured ones; offline_access added where the authorization server has
// it; a step-up adds the challenge's to those held.
func TestSelectScope(t *testing.T) {
	offline := ServerMetadata{ScopesSupported: []string{"read", "offline_access"}}
	for _, tt := range []struct {
		name       string
		ch         Challenge
		pr         ProtectedResource
		meta       ServerMetadata
		configured []string
		want       string
	}{
		{"challenge first", Challenge{Scope: "write"}, ProtectedResource{ScopesSupported: []string{"read"}}, ServerMetadata{}, []string{"c"}, "write"},
		{"then the resource's", Challenge{}, ProtectedResource{ScopesSupported: []string{"read", "list"}}, ServerMetadata{}, []string{"c"}, "read list"},
		{"then the configured", Challenge{}, ProtectedResource{}, ServerMetadata{}, []string{"c", "d"}, "c d"},
		{"else none", Challenge{}, ProtectedResource{}, offline, nil, ""},
		{"offline_access added", Challenge{Scope: "read"}, ProtectedResource{}, offline, nil, "read offline_access"},
		{"offline_access once", Challenge{Scope: "offline_access read"}, ProtectedResource{}, offline, nil, "offline_access read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := selectScope(tt.ch, tt.pr, tt.meta, tt.configured); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}

	a := newAS(t)
	prev := &State{Issuer: a.URL, ClientID: "old", Registered: true, RedirectURL: a.config().RedirectURL, Scope: "read", AccessToken: "at"}
	for _, tt := range []struct {
		name string
		ch   Challenge
		want string
	}{
		{"step-up adds to those held", Challenge{Error: "insufficient_scope", Scope: "write read"}, "read write"},
		{"a new login asks for the challenge's", Challenge{Scope: "write"}, "write"},
		{"a new login without a challenge scope", Challenge{}, "read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Begin(t.Context(), a.config(), prev, tt.ch)
			if err != nil {
				t.Fatal(err)
			}
			if got := mustQuery(t, f.URL).Get("scope"); got != tt.want {
				t.Errorf("scope %q, want %q", got, tt.want)
			}
		})
	}
}

// Finish checks the answer (state, iss, an error), then exchanges the code
// with the verifier, the redirect and the resource.
func TestFinish(t *testing.T) {
	a := newAS(t)
	a.meta["authorization_response_iss_parameter_supported"] = true
	f, err := Begin(t.Context(), a.config(), nil, Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	back := func(v url.Values) string { return "http://127.0.0.1:8976/callback?" + v.Encode() }
	good := url.Values{"code": {"code-123456"}, "state": {f.State()}, "iss": {a.URL}}
	with := func(k, v string) string {
		q := url.Values{}
		for key, vals := range good {
			q[key] = slices.Clone(vals)
		}
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return back(q)
	}
	for _, tt := range []struct {
		name, answer, err string
	}{
		{"empty", "  ", "no code"},
		{"wrong state", with("state", "forged"), "wrong state"},
		{"no state", with("state", ""), "wrong state"},
		{"another iss", with("iss", "https://evil.example"), `another authorization server (iss "https://evil.example"`},
		{"iss missing where promised", with("iss", ""), "lacks the issuer"},
		{"an error", back(url.Values{"state": {f.State()}, "iss": {a.URL}, "error": {"access_denied"},
			"error_description": {"the user\nsaid no " + strings.Repeat("x", 1000)}}), "the authorization server refused: access_denied (the user said no xxx"},
		{"no code", with("code", ""), "the answer has no code"},
		{"not an address", "http://[::1/cb?code=x", "not the address the browser ended on"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.Finish(t.Context(), tt.answer)
			if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") || len(err.Error()) > 400 {
				t.Fatalf("error %v, want %q on one short line", err, tt.err)
			}
		})
	}
	a.mu.Lock()
	n := len(a.tokenForms)
	a.mu.Unlock()
	if n != 0 {
		t.Errorf("%d token requests for answers refused", n)
	}

	st, err := f.Finish(t.Context(), back(good))
	if err != nil {
		t.Fatal(err)
	}
	form, auth := a.lastToken(t)
	want := map[string]string{"grant_type": "authorization_code", "code": "code-123456", "redirect_uri": "http://127.0.0.1:8976/callback",
		"code_verifier": f.verifier, "resource": a.URL + "/mcp", "client_id": "dyn-1"}
	for k, v := range want {
		if form.Get(k) != v {
			t.Errorf("token request %s = %q, want %q", k, form.Get(k), v)
		}
	}
	if s256(form.Get("code_verifier")) != mustQuery(t, f.URL).Get("code_challenge") || auth != "" {
		t.Errorf("the verifier does not match the challenge, or a public client authenticated (%q)", auth)
	}
	if st.AccessToken != "at-1" || st.RefreshToken != "rt-1" || st.TokenType != "Bearer" || st.Scope != "read" || st.Resource != a.URL+"/mcp" ||
		st.ClientID != "dyn-1" || !st.Registered || time.Until(st.Expiry) < 59*time.Minute || !st.LoggedIn() {
		t.Errorf("state %+v", st)
	}
	if st, err := f.Finish(t.Context(), "bare-code-42"); err != nil || !st.LoggedIn() {
		t.Errorf("a bare code: %v", err)
	} else if form, _ := a.lastToken(t); form.Get("code") != "bare-code-42" {
		t.Errorf("the bare code sent as %q", form.Get("code"))
	}
}

// The client authenticates at the token endpoint as registered: none (its
// id in the form), client_secret_basic (both form-encoded, then Basic),
// client_secret_post (both in the form).
func TestTokenClientAuth(t *testing.T) {
	const id, secret = "my client:1", "s/e+c r&t"
	for _, tt := range []struct {
		method, basic string
		formID        string
		formSecret    string
	}{
		{"none", "", id, ""},
		{"client_secret_basic", "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret))), "", ""},
		{"client_secret_post", "", id, secret},
	} {
		t.Run(tt.method, func(t *testing.T) {
			a := newAS(t)
			st := &State{TokenEndpoint: a.URL + "/token", AuthMethod: tt.method, ClientID: id, AccessToken: "old", RefreshToken: "rt-0",
				Expiry: time.Now().Add(-time.Minute)}
			if tt.method != "none" {
				st.ClientSecret = secret
			}
			if _, _, err := st.Token(t.Context(), a.Client()); err != nil {
				t.Fatal(err)
			}
			form, auth := a.lastToken(t)
			if auth != tt.basic || form.Get("client_id") != tt.formID || form.Get("client_secret") != tt.formSecret {
				t.Errorf("Authorization %q, form %v", auth, form)
			}
		})
	}
}

// An expired token is refreshed with the refresh token and the resource
// (RFC 8707); what the answer leaves out (a new refresh token, the scope)
// is kept; a fresh token, or one without a refresh token, is used as it
// is.
func TestRefresh(t *testing.T) {
	a := newAS(t)
	expired := func() *State {
		return &State{TokenEndpoint: a.URL + "/token", AuthMethod: "none", ClientID: "c1", Resource: a.URL + "/mcp", Scope: "read write",
			AccessToken: "at-old", TokenType: "Bearer", RefreshToken: "rt-old", Expiry: time.Now().Add(5 * time.Second)} // within the 10 s margin
	}
	st := expired()
	token, changed, err := st.Token(t.Context(), a.Client())
	if err != nil || token != "at-1" || !changed || st.RefreshToken != "rt-1" || st.Scope != "read" {
		t.Fatalf("refresh: %q %v %v, state %+v", token, changed, err, st)
	}
	form, _ := a.lastToken(t)
	if form.Get("grant_type") != "refresh_token" || form.Get("refresh_token") != "rt-old" || form.Get("resource") != a.URL+"/mcp" ||
		form.Get("client_id") != "c1" || form.Has("scope") {
		t.Errorf("refresh request %v", form)
	}

	a.answer = func(url.Values) (int, string, string) {
		return http.StatusOK, "application/json", `{"access_token":"at-2","token_type":"bearer","expires_in":"60"}`
	}
	st = expired()
	if token, _, err := st.Token(t.Context(), a.Client()); err != nil || token != "at-2" || st.RefreshToken != "rt-old" || st.Scope != "read write" ||
		time.Until(st.Expiry) > time.Minute || time.Until(st.Expiry) < 50*time.Second {
		t.Errorf("an answer without refresh token or scope: %q %v, state %+v", token, err, st)
	}

	a.mu.Lock()
	before := len(a.tokenForms)
	a.mu.Unlock()
	fresh := &State{AccessToken: "at-f", RefreshToken: "rt", TokenEndpoint: a.URL + "/token", Expiry: time.Now().Add(time.Hour)}
	noRefresh := &State{AccessToken: "at-n", TokenEndpoint: a.URL + "/token", Expiry: time.Now().Add(-time.Hour)}
	noExpiry := &State{AccessToken: "at-z", RefreshToken: "rt", TokenEndpoint: a.URL + "/token"}
	for _, s := range []*State{fresh, noRefresh, noExpiry} {
		if token, changed, err := s.Token(t.Context(), a.Client()); err != nil || token != s.AccessToken || changed {
			t.Errorf("%+v: %q %v %v", s, token, changed, err)
		}
	}
	a.mu.Lock()
	after := len(a.tokenForms)
	a.mu.Unlock()
	if after != before {
		t.Errorf("%d token requests for tokens that need no refresh", after-before)
	}
	if _, _, err := (&State{}).Token(t.Context(), a.Client()); !errors.Is(err, ErrNoToken) {
		t.Errorf("no token: %v", err)
	}
	st = expired()
	st.DropTokens()
	if st.LoggedIn() || st.RefreshToken != "" || st.ClientID != "c1" || st.TokenEndpoint == "" {
		t.Errorf("dropped: %+v", st)
	}
}

// What the token endpoint answers instead of a token is one line naming
// the reason — the OAuth error and its description, or what the answer
// was — without the request's secrets; a refusal (an OAuth error) is told
// from a failure that may pass.
func TestTokenErrors(t *testing.T) {
	const refresh, secret = "rt-secret-0123456789", "cs-secret-0123456789"
	for _, tt := range []struct {
		name    string
		status  int
		ctype   string
		body    string
		err     string
		refused bool
	}{
		{"invalid_grant", 400, "application/json", `{"error":"invalid_grant","error_description":"token ` + refresh + ` revoked\nby the admin"}`,
			"the authorization server refused to refresh the token: invalid_grant (token [REDACTED] revoked by the admin)", true},
		{"invalid_client", 401, "application/json", `{"error":"invalid_client"}`, "refused to refresh the token: invalid_client", true},
		{"an error in a 200", 200, "application/json", `{"error":"invalid_grant"}`, "invalid_grant", true},
		{"a form-encoded error", 400, "application/x-www-form-urlencoded", "error=invalid_grant&error_description=gone", "invalid_grant (gone)", true},
		{"temporarily unavailable", 503, "application/json", `{"error":"temporarily_unavailable"}`,
			"refreshing the token failed: temporarily_unavailable", false},
		{"server_error", 400, "application/json", `{"error":"server_error"}`, "refreshing the token failed: server_error", false},
		{"HTML 500", 500, "text/html", htmlPage, "refreshing the token failed: HTTP 500 (an HTML page)", false},
		{"HTML 200", 200, "text/html", htmlPage, "HTTP 200 (an HTML page)", false},
		{"HTML without a content type", 502, "", htmlPage, "HTTP 502 (an HTML page)", false},
		{"empty", 502, "text/plain", "", "HTTP 502 (an empty answer)", false},
		{"plain text", 500, "text/plain", "client_secret=" + secret + " is\nwrong", "HTTP 500 (not JSON: client_secret=[REDACTED] is wrong)", false},
		{"huge", 400, "application/json", `{"error":"invalid_request","error_description":"` + strings.Repeat("x", 2<<20) + `"}`,
			"HTTP 400 (an answer of over 1 MiB)", false},
		{"long description", 400, "application/json", `{"error":"invalid_request","error_description":"` + strings.Repeat("y", 5000) + `"}`,
			"invalid_request (yyy", true},
		{"malformed JSON", 200, "application/json", `{"access_token":`, "HTTP 200 (malformed JSON)", false},
		{"no access_token", 200, "application/json", `{"token_type":"Bearer"}`, "HTTP 200 (an answer without access_token)", false},
		{"not Bearer", 200, "application/json", `{"access_token":"x","token_type":"mac"}`, `a token of type "mac", not Bearer`, false},
		{"JSON of no use", 500, "application/json", `{"message":"oops"}`, "refreshing the token failed: HTTP 500", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAS(t)
			a.answer = func(url.Values) (int, string, string) { return tt.status, tt.ctype, tt.body }
			st := &State{TokenEndpoint: a.URL + "/token", AuthMethod: "client_secret_post", ClientID: "c", ClientSecret: secret,
				AccessToken: "at-old", RefreshToken: refresh, Expiry: time.Now().Add(-time.Minute)}
			_, _, err := st.Token(t.Context(), a.Client())
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.err) || strings.ContainsAny(msg, "\r\n") || len(msg) > 400 ||
				strings.Contains(msg, refresh) || strings.Contains(msg, secret) {
				t.Errorf("error %q (%d bytes), want %q on one short line without secrets", msg, len(msg), tt.err)
			}
			if Refused(err) != tt.refused {
				t.Errorf("refused %v, want %v", Refused(err), tt.refused)
			}
			if st.AccessToken != "at-old" || st.RefreshToken != refresh {
				t.Errorf("a failed refresh changed the state: %+v", st)
			}
		})
	}

	a := newAS(t)
	a.Close()
	st := &State{TokenEndpoint: a.URL + "/token", ClientID: "c", AccessToken: "at", RefreshToken: refresh, Expiry: time.Now().Add(-time.Minute)}
	if _, _, err := st.Token(context.Background(), a.Client()); err == nil || Refused(err) || strings.Contains(err.Error(), refresh) {
		t.Errorf("an endpoint that does not answer: %v", err)
	}
}

func TestOneLineAndScrub(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"a\nb\r\n\tc  d", "a b c d"},
		{"  lead and trail \x00\x7f ", "lead and trail"},
		{strings.Repeat("é", 200), strings.Repeat("é", 100) + "…"},
	} {
		if got := oneLine(tt.in, 200); got != tt.want {
			t.Errorf("oneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := scrub("code=abc/def+ghi and abc%2Fdef%2Bghi, short x1", "abc/def+ghi", "x1"); got != "code=[REDACTED] and [REDACTED], short x1" {
		t.Errorf("scrub: %q", got)
	}
}
