package pull

import (
	"context"
	"net/http"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// ping is step 5: GET /v2/. 200 means no authentication; 401 carries the
// challenge that says how to authenticate.
func (s *session) ping(ctx context.Context) *Error {
	start := time.Now()
	host := s.reg.rep.Host
	resp, _, f := s.get(ctx, s.url("/"), nil, verdict.StageRegistry, "GET /v2/", "/v2/")
	if f != nil {
		return s.w.failed(stepPing, start, f)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		s.w.step(stepPing, host, report.StepPass, "", "200: no authentication required", since(start), 0)
		return nil
	case http.StatusUnauthorized:
		h := resp.Header.Get("WWW-Authenticate")
		cs := ParseAuthHeader(resp.Header)
		c, ok := Find(cs, "bearer")
		if !ok {
			c, ok = Find(cs, "basic")
		}
		if !ok {
			return s.w.failed(stepPing, start, s.registry().fail(verdict.ChallengeInvalid, nil, "GET /v2/ on %s answered 401 without a usable WWW-Authenticate challenge (%q)", host, truncate(h, 120)))
		}
		s.challenge = &c
		s.w.step(stepPing, host, report.StepPass, "", "401 with a "+c.Scheme+" challenge"+realmNote(c), since(start), 0)
		return nil
	case http.StatusNotFound:
		return s.w.failed(stepPing, start, s.registry().fail(verdict.HTTPBadResponse, nil, "GET /v2/ on %s answered 404: no registry API at %s", host, s.url("/").Path))
	}
	return s.w.failed(stepPing, start, s.registry().statusFailure(resp, "GET /v2/"))
}

func realmNote(c Challenge) string {
	if r := c.Params["realm"]; r != "" && c.Scheme == "bearer" {
		return ", token realm " + r
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
