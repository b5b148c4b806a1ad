package pull

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// maxTokenResponse is the most of a token response the walk reads.
// containerd reads the whole body; no real token service sends more than a
// few KiB, and a response this large is said as such, not as "no token".
const maxTokenResponse = 1 << 20

// authorize is step 6: turn the challenge and the node's credentials into
// the Authorization value the registry accepts. Bearer challenges send the
// walk to the token service, a new endpoint of role auth.
func (s *session) authorize(ctx context.Context) *Error {
	c := s.challenge
	if c == nil {
		return nil
	}
	host := s.reg.rep.Host
	creds := s.w.creds
	switch {
	case c.Scheme == "basic" && creds.Username == "" && creds.Password == "":
		s.w.step(stepToken, host, report.StepWarn, "", "Basic challenge and no credentials on this node: the pull is anonymous", 0, 0)
		return nil
	case c.Scheme == "basic":
		s.setAuth("Basic " + base64.StdEncoding.EncodeToString([]byte(creds.Username+":"+creds.Password)))
		s.w.step(stepToken, host, report.StepPass, "", "Basic credentials: "+creds.String(), 0, 0)
		return nil
	case creds.RegistryToken != "":
		s.setAuth("Bearer " + creds.RegistryToken)
		s.w.step(stepToken, host, report.StepPass, "", "registry token: "+creds.String(), 0, 0)
		return nil
	}
	return s.bearerToken(ctx)
}

// setAuth keeps the Authorization value for the registry host and adds it
// to the run's secrets.
func (s *session) setAuth(v string) {
	s.auth = v
	s.w.sec.AddAuthorization(v)
}

// bearerToken asks the challenge's realm for a token, in four phases: the
// realm, the request, the exchange (redirects followed like containerd's
// client), the answer.
func (s *session) bearerToken(ctx context.Context) *Error {
	start := time.Now()
	tr := &tokenRun{s: s, start: start, scope: "repository:" + s.w.ref.Repository + ":pull"}
	realm, f := tr.realm()
	if f != nil {
		return s.w.failed(stepToken, start, f)
	}
	ep := s.reg
	if realm.Scheme+"://"+realm.Host != s.base.Scheme+"://"+s.base.Host {
		ep = s.w.reach(ctx, realm, verdict.RoleAuth, "token realm of "+s.reg.rep.Host, s.tlsFor(realm))
		if ep.err != nil {
			return ep.err
		}
	}
	resp, ep, f := tr.fetch(ctx, ep, realm)
	if f != nil {
		return s.w.failed(stepToken, start, f)
	}
	defer resp.Body.Close()
	tr.ep = ep
	if f := tr.status(resp); f != nil {
		return s.w.failed(stepToken, start, f)
	}
	tok, f := tr.token(resp)
	if f != nil {
		return s.w.failed(stepToken, start, f)
	}
	s.setAuth("Bearer " + tok)
	st, note := s.judgeGrant(tok)
	s.w.step(stepToken, ep.rep.Host, st, "", fmt.Sprintf("token for %s from %s (%s)%s", tr.scope, ep.rep.Host, s.w.creds.String(), note), since(start), 0)
	return nil
}

// judgeGrant decides what a token that was granted means for the pull. A
// JWT whose access claim grants no pull on the repository is an empty
// grant (Docker Hub's answer to a repository the identity may not read,
// or that does not exist): the registry's 401 for the manifest is then
// ambiguous, and the manifest step says so.
func (s *session) judgeGrant(tok string) (report.StepStatus, string) {
	if granted, known := jwtGrantsPull(tok, s.w.ref.Repository); known && !granted {
		s.grantedEmpty = true
		return report.StepWarn, ": the token grants no pull on the repository"
	}
	return report.StepPass, ""
}

// tokenRun is one token request as it goes through its phases.
type tokenRun struct {
	s     *session
	start time.Time
	scope string
	ep    *endpoint // the endpoint that answered
	body  []byte    // the POST form, re-sent on 307/308
	oauth bool      // the answer is the OAuth2 POST's
}

// realm parses the challenge's realm as containerd does
// (core/remotes/docker/auth/fetch.go, GenerateTokenOptions: url.Parse of
// the realm parameter; a request to it then needs an absolute http(s) URL).
func (tr *tokenRun) realm() (*url.URL, *Error) {
	s := tr.s
	host := s.reg.rep.Host
	raw := s.challenge.Params["realm"]
	realm, err := url.Parse(raw)
	if err != nil || realm.Host == "" || (realm.Scheme != "https" && realm.Scheme != "http") {
		return nil, site{stage: verdict.StageAuth, role: s.role, host: host}.fail(verdict.ChallengeInvalid, err, "the Bearer challenge of %s has no usable realm (%q)", host, truncate(redact.URLString(raw), 120))
	}
	s.w.sec.AddURL(realm)
	return realm, nil
}

// secret is the user name and secret containerd's credentials callback
// gives for the node's credentials (CRI's ParseAuth): an identity token
// travels as the secret with no user name.
func (tr *tokenRun) secret() (user, secret string) {
	c := tr.s.w.creds
	if c.IdentityToken != "" {
		return "", c.IdentityToken
	}
	return c.Username, c.Password
}

// fetch asks for the token the way containerd does
// (core/remotes/docker/authorizer.go doBearerAuth): with a secret, first
// an OAuth2 POST (auth/fetch.go FetchTokenWithOAuth: grant_type password
// with a user name, refresh_token without), and a GET with Basic
// credentials (FetchToken) when the POST answers 404, 401 or 400, or 405
// with a user name; without a secret, an anonymous GET.
func (tr *tokenRun) fetch(ctx context.Context, ep *endpoint, realm *url.URL) (*http.Response, *endpoint, *Error) {
	user, secret := tr.secret()
	if secret != "" {
		req, err := tr.post(ctx, realm, user, secret)
		if err != nil {
			return nil, ep, ep.asAuth().fail(verdict.ChallengeInvalid, err, "token request to %s: %v", realm.Host, err)
		}
		resp, last, f := tr.exchange(ctx, ep, req)
		if f != nil {
			return nil, last, f
		}
		c := resp.StatusCode
		if c != http.StatusNotFound && c != http.StatusUnauthorized && c != http.StatusBadRequest && !(c == http.StatusMethodNotAllowed && user != "") {
			tr.oauth = true
			return resp, last, nil
		}
		resp.Body.Close()
		tr.body = nil
	}
	req, err := tr.get(ctx, realm, user, secret)
	if err != nil {
		return nil, ep, ep.asAuth().fail(verdict.ChallengeInvalid, err, "token request to %s: %v", realm.Host, err)
	}
	return tr.exchange(ctx, ep, req)
}

// post is the OAuth2 token request (FetchTokenWithOAuth's form).
func (tr *tokenRun) post(ctx context.Context, realm *url.URL, user, secret string) (*http.Request, error) {
	form := url.Values{"scope": {tr.scope}, "service": {tr.s.challenge.Params["service"]}, "client_id": {"pullpath"}}
	if user == "" {
		form.Set("grant_type", "refresh_token")
		form.Set("refresh_token", secret)
	} else {
		form.Set("grant_type", "password")
		form.Set("username", user)
		form.Set("password", secret)
	}
	tr.body = []byte(form.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, realm.String(), bytes.NewReader(tr.body))
	if err == nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		req.Header.Set("User-Agent", "pullpath/1")
	}
	return req, err
}

// get is the token specification's GET (FetchToken): service and scope in
// the query, Basic credentials when there is a secret.
func (tr *tokenRun) get(ctx context.Context, realm *url.URL, user, secret string) (*http.Request, error) {
	q := realm.Query()
	if svc := tr.s.challenge.Params["service"]; svc != "" {
		q.Set("service", svc)
	}
	q.Set("scope", tr.scope)
	u := *realm
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err == nil {
		req.Header.Set("User-Agent", "pullpath/1")
		if secret != "" {
			req.SetBasicAuth(user, secret)
		}
	}
	return req, err
}

// exchange sends the token request and follows its redirects the way
// containerd's token client does: containerd fetches tokens with the
// registry host's http.Client and Go's default redirect policy
// (core/remotes/docker/auth/fetch.go FetchToken / FetchTokenWithOAuth:
// client.Do), which follows 301, 302, 303, 307 and 308 and stops at the
// 10th request (net/http defaultCheckRedirect): 9 redirects. Each new host
// is walked as an endpoint of role auth (resolve, connect, TLS).
//
// Credentials go only to the realm's own host name: Go forwards
// Authorization to the same host or a subdomain of it; the walk forwards
// it to the same host only, and a credential in a POST form is left out
// of a redirect to another host.
func (tr *tokenRun) exchange(ctx context.Context, ep *endpoint, req *http.Request) (*http.Response, *endpoint, *Error) {
	s := tr.s
	origin := req.URL.Hostname()
	for redirects := 0; ; redirects++ {
		resp, err := s.send(ep, req)
		if err != nil {
			return nil, ep, ep.asAuth().requestFailure(err, "the token request")
		}
		loc := resp.Header.Get("Location")
		if !followedRedirect(resp.StatusCode) || loc == "" {
			return resp, ep, nil
		}
		resp.Body.Close()
		next, err := req.URL.Parse(loc)
		if err != nil || (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" {
			return nil, ep, ep.asAuth().fail(verdict.RedirectInvalid, err, "the token service %s redirected to an unusable Location %q", ep.rep.Host, redact.URLString(loc))
		}
		s.w.sec.AddURL(next)
		if redirects+1 > s.w.opts.MaxRedirects {
			return nil, ep, ep.asAuth().fail(verdict.RedirectLoop, nil, "the token request was still redirecting after %d redirects, containerd's limit (last to %s)", s.w.opts.MaxRedirects, redact.URL(next))
		}
		if next.Scheme+"://"+next.Host != req.URL.Scheme+"://"+req.URL.Host {
			ep = s.w.reach(ctx, next, verdict.RoleAuth, "redirect of the token request from "+ep.rep.Host, s.tlsFor(next))
			if ep.err != nil {
				return nil, ep, ep.err
			}
		}
		req, err = tr.redirected(ctx, req, resp.StatusCode, next, next.Hostname() == origin)
		if err != nil {
			return nil, ep, ep.asAuth().fail(verdict.RedirectInvalid, err, "the token service %s redirected to %s: %v", ep.rep.Host, redact.URL(next), err)
		}
	}
}

// followedRedirect is the set of statuses Go's client follows.
func followedRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// redirected is the next request of a redirect, by Go's rules
// (net/http redirectBehavior): 301, 302 and 303 turn a POST into a GET
// without a body; 307 and 308 keep the method and the body.
func (tr *tokenRun) redirected(ctx context.Context, prev *http.Request, code int, next *url.URL, sameHost bool) (*http.Request, error) {
	method, body := prev.Method, tr.body
	if code != http.StatusTemporaryRedirect && code != http.StatusPermanentRedirect {
		body = nil
		if method != http.MethodGet && method != http.MethodHead {
			method = http.MethodGet
		}
	}
	if method == http.MethodGet {
		body = nil
	}
	if body != nil && !sameHost {
		form, _ := url.ParseQuery(string(body))
		form.Del("refresh_token")
		form.Del("password")
		body = []byte(form.Encode())
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, next.String(), rd)
	if err != nil {
		return nil, err
	}
	for k, v := range prev.Header {
		if k == "Authorization" && !sameHost || body == nil && (k == "Content-Type" || k == "Content-Length") {
			continue
		}
		req.Header[k] = v
	}
	return req, nil
}

// status maps the token service's answer to a failure; nil for 2xx.
func (tr *tokenRun) status(resp *http.Response) *Error {
	s, auth := tr.s, tr.ep.asAuth()
	authEP := auth.host
	who := s.w.creds.String()
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusUnauthorized:
		es, text := readErrorBody(resp.Body)
		return auth.fail(verdict.AuthUnauthorized, nil, "the token service %s refused %s (401): %s", authEP, who, firstMessage(es, text))
	case http.StatusForbidden:
		es, text := readErrorBody(resp.Body)
		code, scope := identityDecision(s.w.creds, refusedTokenScope)
		if scope {
			return auth.fail(code, nil, "scope: %s (the token service %s refused %s for %s, 403: %s)", scopeSentence(s.w.ref.Repository), authEP, who, tr.scope, firstMessage(es, text))
		}
		return auth.fail(code, nil, "the token service %s refused an anonymous token for %s (403): the registry wants credentials the node did not send: %s", authEP, tr.scope, firstMessage(es, text))
	}
	return auth.statusFailure(resp, "the token request")
}

// token reads the token out of a 200 answer as containerd does
// (core/remotes/docker/auth/fetch.go: for FetchToken "access_token" wins
// over "token", for FetchTokenWithOAuth only "access_token" counts; an
// answer without is ErrNoToken), within maxTokenResponse.
func (tr *tokenRun) token(resp *http.Response) (string, *Error) {
	auth := tr.ep.asAuth()
	authEP := auth.host
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	if err != nil {
		return "", auth.requestFailure(err, "reading the token response")
	}
	if len(b) > maxTokenResponse {
		return "", auth.fail(verdict.HTTPBadResponse, nil, "the token response of %s exceeded %d bytes, the probe's read limit for a token", authEP, maxTokenResponse)
	}
	var body struct {
		Token        string `json:"token"`
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	derr := json.NewDecoder(bytes.NewReader(b)).Decode(&body)
	tr.s.w.sec.Add(body.Token, body.AccessToken, body.RefreshToken)
	if derr != nil {
		return "", auth.fail(verdict.HTTPBadResponse, derr, "the token service %s answered 200 with a body that is not a token response (%v)", authEP, derr)
	}
	tok := body.Token
	if body.AccessToken != "" || tr.oauth {
		tok = body.AccessToken // an OAuth2 answer has only access_token (OAuthTokenResponse)
	}
	if tok == "" {
		return "", auth.fail(verdict.HTTPBadResponse, nil, "the token service %s answered 200 without a token", authEP)
	}
	return tok, nil
}

// jwtGrantsPull reads the access claim of a registry JWT (without
// verifying it: the registry does that) to tell whether it grants pull on
// repo. known is false for opaque tokens.
func jwtGrantsPull(tok, repo string) (granted, known bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return false, false
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false, false
	}
	var claims struct {
		Access *[]struct {
			Type    string   `json:"type"`
			Name    string   `json:"name"`
			Actions []string `json:"actions"`
		} `json:"access"`
	}
	if json.Unmarshal(b, &claims) != nil || claims.Access == nil {
		return false, false
	}
	for _, a := range *claims.Access {
		if a.Type == "repository" && a.Name == repo {
			for _, act := range a.Actions {
				if act == "pull" || act == "*" {
					return true, true
				}
			}
		}
	}
	return false, true
}
