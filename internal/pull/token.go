package pull

import (
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

// authorize is step 6: turn the challenge and the node's credentials into
// the Authorization value the registry accepts. Bearer challenges send the
// walk to the token service, a new endpoint of role auth.
func (s *session) authorize(ctx context.Context) *failure {
	host := s.reg.rep.Host
	c := s.challenge
	if c == nil {
		return nil
	}
	creds := s.w.creds
	if c.Scheme == "basic" {
		if creds.Username == "" && creds.Password == "" {
			s.w.step("token", host, report.StepWarn, "", "Basic challenge and no credentials on this node: the pull is anonymous", 0, 0)
			return nil
		}
		s.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(creds.Username+":"+creds.Password))
		s.w.step("token", host, report.StepPass, "", "Basic credentials: "+creds.String(), 0, 0)
		return nil
	}
	if creds.RegistryToken != "" {
		s.auth = "Bearer " + creds.RegistryToken
		s.w.step("token", host, report.StepPass, "", "registry token: "+creds.String(), 0, 0)
		return nil
	}

	start := time.Now()
	realm, err := url.Parse(c.Params["realm"])
	if err != nil || realm.Host == "" || (realm.Scheme != "https" && realm.Scheme != "http") {
		f := fail(verdict.ChallengeInvalid, verdict.StageAuth, s.role, host, "the Bearer challenge of %s has no usable realm (%q)", host, truncate(c.Params["realm"], 120))
		s.w.step("token", host, report.StepFail, f.code, f.summary, since(start), 0)
		return f
	}
	ep := s.reg
	if realm.Scheme+"://"+realm.Host != s.base.Scheme+"://"+s.base.Host {
		ep = s.w.reach(ctx, realm, verdict.RoleAuth, "token realm of "+host, s.tlsFor(realm))
		if ep.fail != nil {
			return ep.fail
		}
	}
	scope := "repository:" + s.w.ref.Repository + ":pull"
	q := realm.Query()
	if svc := c.Params["service"]; svc != "" {
		q.Set("service", svc)
	}
	q.Set("scope", scope)

	var req *http.Request
	if creds.IdentityToken != "" {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {creds.IdentityToken}, "service": {c.Params["service"]}, "scope": {scope}, "client_id": {"pullpath"}}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, realm.String(), strings.NewReader(form.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	} else {
		u := *realm
		u.RawQuery = q.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err == nil && creds.Username != "" {
			req.SetBasicAuth(creds.Username, creds.Password)
		}
	}
	if err != nil {
		return fail(verdict.ChallengeInvalid, verdict.StageAuth, verdict.RoleAuth, realm.Host, "token request to %s: %v", realm.Host, err)
	}
	req.Header.Set("User-Agent", "pullpath/1")
	resp, err := s.send(ep, req)
	authEP := ep.rep.Host
	if err != nil {
		f := requestFailure(err, ep, "the token request")
		f.stage, f.role = verdict.StageAuth, verdict.RoleAuth
		s.w.step("token", authEP, report.StepFail, f.code, f.summary, since(start), 0)
		return f
	}
	defer resp.Body.Close()
	who := creds.String()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		es, text := readErrorBody(resp.Body)
		f := fail(verdict.AuthUnauthorized, verdict.StageAuth, verdict.RoleAuth, authEP, "the token service %s refused %s (401): %s", authEP, who, redact.String(firstMessage(es, text)))
		s.w.step("token", authEP, report.StepFail, f.code, f.summary, since(start), 0)
		return f
	case http.StatusForbidden:
		es, text := readErrorBody(resp.Body)
		f := fail(verdict.AuthForbidden, verdict.StageAuth, verdict.RoleAuth, authEP, "the token service %s refused %s for %s (403): %s", authEP, who, scope, redact.String(firstMessage(es, text)))
		s.w.step("token", authEP, report.StepFail, f.code, f.summary, since(start), 0)
		return f
	default:
		f := statusFailure(resp, ep, "the token request")
		f.stage, f.role = verdict.StageAuth, verdict.RoleAuth
		s.w.step("token", authEP, report.StepFail, f.code, f.summary, since(start), 0)
		return f
	}
	var body struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil || (body.Token == "" && body.AccessToken == "") {
		f := fail(verdict.HTTPBadResponse, verdict.StageAuth, verdict.RoleAuth, authEP, "the token service %s answered 200 without a token", authEP)
		s.w.step("token", authEP, report.StepFail, f.code, f.summary, since(start), 0)
		return f
	}
	tok := body.Token
	if tok == "" {
		tok = body.AccessToken
	}
	s.auth = "Bearer " + tok
	detail := fmt.Sprintf("token for %s from %s (%s)", scope, authEP, who)
	st := report.StepPass
	if granted, known := jwtGrantsPull(tok, s.w.ref.Repository); known && !granted {
		s.grantedEmpty = true
		st = report.StepWarn
		detail += ": the token grants no pull on the repository"
	}
	s.w.step("token", authEP, st, "", detail, since(start), 0)
	return nil
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
