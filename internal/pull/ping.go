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
func (s *session) ping(ctx context.Context) *failure {
	start := time.Now()
	host := s.reg.rep.Host
	resp, err := s.do(ctx, s.reg, http.MethodGet, s.url("/"), nil)
	if err != nil {
		f := requestFailure(err, s.reg, "GET /v2/")
		s.w.step("ping", host, report.StepFail, f.code, f.summary, since(start), 0)
		return f
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		s.w.step("ping", host, report.StepPass, "", "200: no authentication required", since(start), 0)
		return nil
	case http.StatusUnauthorized:
		h := resp.Header.Get("WWW-Authenticate")
		cs := ParseAuthHeader(resp.Header)
		c, ok := Find(cs, "bearer")
		if !ok {
			c, ok = Find(cs, "basic")
		}
		if !ok {
			f := fail(verdict.ChallengeInvalid, verdict.StageRegistry, s.role, host, "GET /v2/ on %s answered 401 without a usable WWW-Authenticate challenge (%q)", host, truncate(h, 120))
			s.w.step("ping", host, report.StepFail, f.code, f.summary, since(start), 0)
			return f
		}
		s.challenge = &c
		s.w.step("ping", host, report.StepPass, "", "401 with a "+c.Scheme+" challenge"+realmNote(c), since(start), 0)
		return nil
	case http.StatusNotFound:
		f := fail(verdict.HTTPBadResponse, verdict.StageRegistry, s.role, host, "GET /v2/ on %s answered 404: no registry API at %s", host, s.url("/").Path)
		s.w.step("ping", host, report.StepFail, f.code, f.summary, since(start), 0)
		return f
	}
	f := statusFailure(resp, s.reg, "GET /v2/")
	s.w.step("ping", host, report.StepFail, f.code, f.summary, since(start), 0)
	return f
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
