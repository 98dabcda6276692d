package oauth

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// discoverResource fetches the protected-resource metadata: at the
// challenge's URL, else at the well-known URL for the endpoint's path,
// else at the origin's. Its resource must be the endpoint (or a prefix of
// it, on the same origin).
func discoverResource(ctx context.Context, hc *http.Client, serverURL, advertised string) (ProtectedResource, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return ProtectedResource{}, fmt.Errorf("the server's URL %q is not a URL", serverURL)
	}
	var candidates []string
	if advertised != "" {
		candidates = append(candidates, advertised)
	}
	origin := u.Scheme + "://" + u.Host
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
	}
	candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")
	var bad, missing error
	for _, c := range candidates {
		var pr ProtectedResource
		if err := getJSON(ctx, hc, c, &pr); err != nil {
			if errors.Is(err, errMalformed) {
				bad = cmp.Or(bad, err)
			} else {
				missing = cmp.Or(missing, err)
			}
			continue
		}
		if pr.Resource == "" || !bindsTo(pr.Resource, u) {
			return ProtectedResource{}, fmt.Errorf("the protected-resource metadata at %s is for %q, not for %s", c, quoted(pr.Resource), serverURL)
		}
		return pr, nil
	}
	// The document that is there but wrong says more than those not there.
	return ProtectedResource{}, fmt.Errorf("no protected-resource metadata for %s: %w", serverURL, cmp.Or(bad, missing))
}

// bindsTo reports whether resource identifies u: the same scheme and host,
// and a path that is u's or one of its parents.
func bindsTo(resource string, u *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Fragment != "" || !strings.EqualFold(r.Scheme, u.Scheme) || !strings.EqualFold(r.Host, u.Host) {
		return false
	}
	rp, up := strings.TrimSuffix(r.Path, "/"), strings.TrimSuffix(u.Path, "/")
	return rp == "" || rp == up || strings.HasPrefix(up, rp+"/")
}

// discoverServer fetches the authorization server's metadata at the
// well-known URLs of RFC 8414 and OpenID discovery for issuer (path
// inserted, then appended), and checks it is issuer's and usable.
func discoverServer(ctx context.Context, hc *http.Client, issuer string) (ServerMetadata, error) {
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return ServerMetadata{}, fmt.Errorf("the authorization server %q is not an http(s) URL", quoted(issuer))
	}
	origin := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	candidates := []string{origin + "/.well-known/oauth-authorization-server" + p, origin + "/.well-known/openid-configuration" + p}
	if p != "" {
		candidates = append(candidates, origin+p+"/.well-known/openid-configuration")
	}
	var bad, missing error
	for _, c := range candidates {
		var m ServerMetadata
		if err := getJSON(ctx, hc, c, &m); err != nil {
			if errors.Is(err, errMalformed) {
				bad = cmp.Or(bad, err)
			} else {
				missing = cmp.Or(missing, err)
			}
			continue
		}
		if m.Issuer != issuer {
			return ServerMetadata{}, fmt.Errorf("the authorization server metadata at %s is for the issuer %q, not %q", c, quoted(m.Issuer), issuer)
		}
		if err := m.check(); err != nil {
			return ServerMetadata{}, err
		}
		return m, nil
	}
	return ServerMetadata{}, fmt.Errorf("no authorization server metadata for %s: %w", issuer, cmp.Or(bad, missing))
}

// check refuses metadata a login cannot use: endpoints missing or not
// http(s) URLs, no PKCE with S256 (the MCP spec has a client refuse a
// server that does not advertise it).
func (m ServerMetadata) check() error {
	var missing []string
	for _, e := range []struct{ name, value string }{{"authorization_endpoint", m.AuthorizationEndpoint}, {"token_endpoint", m.TokenEndpoint}} {
		if e.value == "" {
			missing = append(missing, e.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the authorization server %s has no %s in its metadata", m.Issuer, strings.Join(missing, " or "))
	}
	for _, e := range []struct{ name, value string }{{"authorization_endpoint", m.AuthorizationEndpoint},
		{"token_endpoint", m.TokenEndpoint}, {"registration_endpoint", m.RegistrationEndpoint}} {
		if e.value == "" {
			continue
		}
		if u, err := url.Parse(e.value); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("the authorization server %s's %s %q is not an http(s) URL", m.Issuer, e.name, quoted(e.value))
		}
	}
	if !slices.Contains(m.CodeChallengeMethods, "S256") {
		return fmt.Errorf("the authorization server %s does not support PKCE with S256 (code_challenge_methods_supported)", m.Issuer)
	}
	return nil
}

// errMalformed marks a metadata document that is there, but not metadata.
var errMalformed = errors.New("malformed metadata")

// getJSON fetches u's JSON document into v. A document that is there but
// not JSON of v's shape is errMalformed.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%q is not a URL", quoted(u))
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return errors.New(quoted(err.Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("%s: %s", u, quoted(err.Error()))
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	text := strings.TrimSpace(string(raw))
	switch {
	case len(raw) > maxBody:
		return fmt.Errorf("%w: %s is over 1 MiB", errMalformed, u)
	case ctype == "text/html" || strings.HasPrefix(text, "<"):
		return fmt.Errorf("%w: %s is an HTML page, not JSON", errMalformed, u)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %s is not metadata JSON: %s", errMalformed, u, quoted(err.Error()))
	}
	return nil
}
