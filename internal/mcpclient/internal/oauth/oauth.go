// Package oauth is the OAuth 2.1 client of a remote MCP server, as the MCP
// authorization spec (2025-11-25 and 2026-07-28) has it: the server's
// challenge (WWW-Authenticate), protected-resource metadata (RFC 9728),
// authorization-server metadata (RFC 8414, OpenID discovery), the client's
// identity (pre-registered, a client ID metadata document, or dynamic
// registration, RFC 7591), the authorization code with PKCE (S256) and
// resource indicators (RFC 8707), the iss check of RFC 9207, scope
// selection and step-up, and refresh. golang.org/x/oauth2 builds the
// authorization URL and the PKCE verifier; the token requests are our own
// (its refresh cannot send the resource indicator, and its errors quote
// the answer whole), as are discovery, registration and the checks, as no
// library does them.
//
// Nothing here logs, and no error carries a token or a secret: what an
// error quotes of a server's answer is on one line, cut, and scrubbed of
// the request's code, verifier, refresh token and client secret.
package oauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Challenge is what a 401 or 403 answer's WWW-Authenticate Bearer
// challenge says.
type Challenge struct {
	ResourceMetadata string // the protected-resource metadata URL
	Scope            string // the scopes the request needs, space-separated
	Error            string // "invalid_token", "insufficient_scope", …
}

// InsufficientScope reports whether the challenge asks for more scopes
// (step-up).
func (c Challenge) InsufficientScope() bool { return c.Error == "insufficient_scope" }

// ParseChallenge reads the Bearer challenge of h's WWW-Authenticate
// headers; ok is false when there is none.
func ParseChallenge(h http.Header) (c Challenge, ok bool) {
	for _, v := range h.Values("WWW-Authenticate") {
		scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			continue
		}
		params := authParams(rest)
		return Challenge{ResourceMetadata: params["resource_metadata"], Scope: params["scope"], Error: params["error"]}, true
	}
	return Challenge{}, false
}

// authParams parses a challenge's auth-params: k=v or k="v", comma
// separated, backslash escapes in quoted strings.
func authParams(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		s = strings.TrimLeft(s, " ,\t")
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			break
		}
		key := strings.ToLower(strings.TrimSpace(s[:eq]))
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val strings.Builder
		if strings.HasPrefix(s, `"`) {
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				val.WriteByte(s[i])
			}
			s = s[min(i+1, len(s)):]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val.WriteString(strings.TrimSpace(s[:end]))
			s = s[end:]
		}
		out[key] = val.String()
	}
	return out
}

// ProtectedResource is a server's protected-resource metadata (RFC 9728).
type ProtectedResource struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// ServerMetadata is an authorization server's metadata (RFC 8414).
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	TokenEndpointAuthMethods          []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethods              []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	ISSParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
}

// Config is what the client knows before it asks: the MCP endpoint, and
// the client's identity when it has one.
type Config struct {
	ServerURL string
	// ClientID and ClientSecret are pre-registered credentials; empty: a
	// client ID metadata document or a dynamic registration.
	ClientID, ClientSecret string
	// ClientMetadataURL is the https URL of the client's metadata
	// document, used as its client_id where the server supports that.
	ClientMetadataURL string
	ClientName        string
	RedirectURL       string
	// Scopes are asked for when neither the challenge nor the resource
	// names any.
	Scopes []string
	HTTP   *http.Client // nil: http.DefaultClient
}

// State is what a login leaves for the next requests and the next login
// (saved per server, 0600): the token, and the client registration with
// its issuer.
type State struct {
	Issuer        string    `json:"issuer"`
	TokenEndpoint string    `json:"token_endpoint"`
	AuthMethod    string    `json:"auth_method"` // none, client_secret_basic, client_secret_post
	ClientID      string    `json:"client_id"`
	ClientSecret  string    `json:"client_secret,omitempty"`
	Registered    bool      `json:"registered,omitempty"` // by dynamic registration: reused with the same issuer and redirect
	RedirectURL   string    `json:"redirect_url,omitempty"`
	Resource      string    `json:"resource,omitempty"`
	Scope         string    `json:"scope,omitempty"`
	AccessToken   string    `json:"access_token,omitempty"`
	TokenType     string    `json:"token_type,omitempty"`
	RefreshToken  string    `json:"refresh_token,omitempty"`
	Expiry        time.Time `json:"expiry,omitzero"`
	// Dropped is why the tokens were dropped (a refresh refused), kept
	// until the next login so that a restarted bot can still say it.
	Dropped string `json:"dropped,omitempty"`
}

// LoggedIn reports whether s holds a token.
func (s *State) LoggedIn() bool { return s != nil && s.AccessToken != "" }

// ErrNoToken is a state without a token: a login is needed.
var ErrNoToken = errors.New("not logged in")

// Flow is a login under way: the admin opens URL, and Finish takes where
// the authorization server sent the browser back (or the code).
type Flow struct {
	URL string

	cfg      Config
	state    string
	verifier string
	meta     ServerMetadata
	next     State // the state the login leaves, without the token yet
	scope    string
}

// maxBody caps a metadata or registration answer.
const maxBody = 1 << 20

// Begin discovers the server's authorization server, makes sure the
// client is known to it (the stored registration when the issuer is the
// same, else a new one), and builds the authorization URL for ch's scopes
// (a step-up adds them to those held). prev is the stored state (nil:
// none).
func Begin(ctx context.Context, cfg Config, prev *State, ch Challenge) (*Flow, error) {
	hc := cfg.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	cfg.HTTP = hc
	if cfg.ClientMetadataURL != "" && !strings.HasPrefix(cfg.ClientMetadataURL, "https://") {
		return nil, fmt.Errorf("oauthClientMetadataUrl %q is not an https URL", quoted(cfg.ClientMetadataURL))
	}
	pr, err := discoverResource(ctx, hc, cfg.ServerURL, ch.ResourceMetadata)
	if err != nil {
		return nil, err
	}
	if len(pr.AuthorizationServers) == 0 {
		return nil, errors.New("the protected-resource metadata names no authorization server")
	}
	issuer := pr.AuthorizationServers[0]
	meta, err := discoverServer(ctx, hc, issuer)
	if err != nil {
		return nil, err
	}
	next := State{Issuer: meta.Issuer, TokenEndpoint: meta.TokenEndpoint, Resource: pr.Resource, RedirectURL: cfg.RedirectURL}
	switch {
	case cfg.ClientID != "":
		next.ClientID, next.ClientSecret = cfg.ClientID, cfg.ClientSecret
		next.AuthMethod = authMethod(meta.TokenEndpointAuthMethods, cfg.ClientSecret != "")
	case meta.ClientIDMetadataDocumentSupported && cfg.ClientMetadataURL != "":
		next.ClientID, next.AuthMethod = cfg.ClientMetadataURL, "none"
	case prev != nil && prev.Registered && prev.Issuer == meta.Issuer && prev.ClientID != "" && prev.RedirectURL == cfg.RedirectURL:
		next.ClientID, next.ClientSecret, next.AuthMethod, next.Registered = prev.ClientID, prev.ClientSecret, prev.AuthMethod, true
	default:
		if err := register(ctx, hc, cfg, meta, &next); err != nil {
			return nil, err
		}
	}
	scope := selectScope(ch, pr, meta, cfg.Scopes)
	if ch.InsufficientScope() && prev != nil && prev.Scope != "" {
		scope = unionScopes(prev.Scope, scope)
	}
	f := &Flow{cfg: cfg, state: randomString(), verifier: oauth2.GenerateVerifier(), meta: meta, next: next, scope: scope}
	oc := &oauth2.Config{ClientID: next.ClientID, RedirectURL: cfg.RedirectURL, Endpoint: oauth2.Endpoint{AuthURL: meta.AuthorizationEndpoint}}
	if scope != "" {
		oc.Scopes = strings.Fields(scope)
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(f.verifier)}
	if pr.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", pr.Resource))
	}
	f.URL = oc.AuthCodeURL(f.state, opts...)
	return f, nil
}

// State is the flow's state parameter: what the redirect back carries.
func (f *Flow) State() string { return f.state }

// Issuer is the authorization server the flow logs in with.
func (f *Flow) Issuer() string { return f.meta.Issuer }

// Finish checks where the authorization server sent the browser back —
// the whole redirect URL, or only its code — and exchanges the code for a
// token (PKCE's verifier and the resource with it): the new state.
func (f *Flow) Finish(ctx context.Context, redirected string) (*State, error) {
	code, err := f.code(strings.TrimSpace(redirected))
	if err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {f.cfg.RedirectURL},
		"code_verifier": {f.verifier}}
	if f.next.Resource != "" {
		form.Set("resource", f.next.Resource) // RFC 8707 §2.2
	}
	st := f.next
	ans, err := requestToken(ctx, f.cfg.HTTP, &st, form)
	if err != nil {
		if Refused(err) {
			return nil, fmt.Errorf("the token endpoint refused the code: %w", err)
		}
		return nil, fmt.Errorf("exchanging the code for a token failed: %w", err)
	}
	st.Scope = f.scope
	st.setToken(ans, time.Now())
	return &st, nil
}

// code is the authorization code of a redirect, checked: the state, the
// issuer (RFC 9207), an error the server sent instead. What it quotes of
// the answer is on one line and cut.
func (f *Flow) code(redirected string) (string, error) {
	if redirected == "" {
		return "", errors.New("no code: paste the whole address the browser ended on")
	}
	if !strings.Contains(redirected, "?") && !strings.Contains(redirected, "=") {
		return redirected, nil // the bare code; the state could not be checked, but it was pasted by the admin
	}
	u, err := url.Parse(redirected)
	if err != nil {
		return "", errors.New("that is not the address the browser ended on, nor a code: paste the whole address")
	}
	q := u.Query()
	if q.Get("state") != f.state {
		return "", errors.New("the answer is not for this login (wrong state)")
	}
	iss, hasIss := q["iss"]
	switch {
	case hasIss && (len(iss) != 1 || iss[0] != f.meta.Issuer):
		return "", fmt.Errorf("the answer names another authorization server (iss %q, want %q)", quoted(strings.Join(iss, ",")), f.meta.Issuer)
	case !hasIss && f.meta.ISSParameterSupported:
		return "", errors.New("the answer lacks the issuer (iss) its authorization server promised")
	}
	if e := q.Get("error"); e != "" {
		msg := "the authorization server refused: " + quoted(e)
		if d := q.Get("error_description"); d != "" {
			msg += " (" + quoted(d) + ")"
		}
		return "", errors.New(msg)
	}
	code := q.Get("code")
	if code == "" {
		return "", errors.New("the answer has no code")
	}
	return code, nil
}

// authMethod picks how a client authenticates at the token endpoint from
// what the server supports.
func authMethod(supported []string, secret bool) string {
	if !secret {
		return "none"
	}
	if slices.Contains(supported, "client_secret_basic") || !slices.Contains(supported, "client_secret_post") {
		return "client_secret_basic"
	}
	return "client_secret_post"
}

// register registers the client dynamically (RFC 7591).
func register(ctx context.Context, hc *http.Client, cfg Config, meta ServerMetadata, st *State) error {
	if meta.RegistrationEndpoint == "" {
		return fmt.Errorf("the authorization server %s does not register clients (no registration_endpoint): give the server's entry an oauthClientId", meta.Issuer)
	}
	method := "none"
	switch {
	case len(meta.TokenEndpointAuthMethods) == 0 || slices.Contains(meta.TokenEndpointAuthMethods, "none"):
	case slices.Contains(meta.TokenEndpointAuthMethods, "client_secret_basic"):
		method = "client_secret_basic"
	case slices.Contains(meta.TokenEndpointAuthMethods, "client_secret_post"):
		method = "client_secret_post"
	}
	req := map[string]any{
		"client_name":                cfg.ClientName,
		"redirect_uris":              []string{cfg.RedirectURL},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           "native",
	}
	body, _ := json.Marshal(req)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, meta.RegistrationEndpoint, strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, err := hc.Do(hreq)
	if err != nil {
		return fmt.Errorf("registering the client failed: %s", quoted(err.Error()))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode/100 != 2 {
		msg := fmt.Sprintf("registering the client failed: HTTP %d", resp.StatusCode)
		if e := errorText(raw); e != "" {
			msg += ": " + e
		}
		return errors.New(msg)
	}
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.ClientID == "" {
		return errors.New("registering the client failed: the answer has no client_id")
	}
	st.ClientID, st.ClientSecret, st.Registered = out.ClientID, out.ClientSecret, true
	st.AuthMethod = method
	if out.AuthMethod != "" {
		st.AuthMethod = out.AuthMethod
	}
	if st.ClientSecret == "" {
		st.AuthMethod = "none"
	}
	return nil
}

// selectScope is the scope to ask for: the challenge's, else every scope
// the resource supports, else the configured ones, else none; with
// offline_access when the authorization server supports it (for a refresh
// token).
func selectScope(ch Challenge, pr ProtectedResource, meta ServerMetadata, configured []string) string {
	var scopes []string
	switch {
	case ch.Scope != "":
		scopes = strings.Fields(ch.Scope)
	case len(pr.ScopesSupported) > 0:
		scopes = slices.Clone(pr.ScopesSupported)
	default:
		scopes = slices.Clone(configured)
	}
	if len(scopes) > 0 && slices.Contains(meta.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	return strings.Join(scopes, " ")
}

func unionScopes(a, b string) string {
	out := strings.Fields(a)
	for _, s := range strings.Fields(b) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// errorText is an OAuth error answer's error and description, or nothing.
func errorText(raw []byte) string {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Error == "" {
		return ""
	}
	if e.Description == "" {
		return quoted(e.Error)
	}
	return quoted(e.Error) + " (" + quoted(e.Description) + ")"
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
