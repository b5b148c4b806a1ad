package aws

import (
	"encoding/json"
	"fmt"
	"strings"
)

// decision of a policy for one request.
type decision int

const (
	implicitDeny decision = iota
	allowed
	explicitDeny
	undecided // a condition this audit cannot evaluate
)

func (d decision) String() string {
	return [...]string{"implicitDeny", "allowed", "explicitDeny", "undecided"}[d]
}

// request is what a VPC endpoint policy is asked.
type request struct {
	action, resource string
	// signedByAWS: ECR hands the node a pre-signed S3 URL signed by ECR
	// itself, so for layer downloads the principal is not the node's role
	// and not in the caller's account: only Principal "*" matches it.
	signedByAWS bool
	principal   string // the node role ARN otherwise
	account     string
}

// evalPolicy evaluates an endpoint policy document the way IAM does: an
// explicit Deny that matches wins over any Allow; else an Allow that
// matches allows; else the request is implicitly denied. An empty
// document is the default full-access policy.
func evalPolicy(doc string, req request) (decision, string) {
	if strings.TrimSpace(doc) == "" {
		return allowed, "no policy: the default full-access policy"
	}
	var p struct {
		Statement json.RawMessage
	}
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		return undecided, "the policy document is not JSON: " + err.Error()
	}
	var stmts []map[string]json.RawMessage
	if err := json.Unmarshal(p.Statement, &stmts); err != nil {
		var one map[string]json.RawMessage
		if err2 := json.Unmarshal(p.Statement, &one); err2 != nil {
			return undecided, "the policy has no readable Statement"
		}
		stmts = []map[string]json.RawMessage{one}
	}
	result, why := implicitDeny, "no statement allows "+req.action+" on "+req.resource
	var unsure []string
	for i, s := range stmts {
		sid := stringOf(s["Sid"])
		if sid == "" {
			sid = fmt.Sprintf("statement %d", i+1)
		}
		effect := stringOf(s["Effect"])
		if !stmtMatches(s, req) {
			continue
		}
		cond, condDecided := conditionApplies(s["Condition"], effect, req)
		if !condDecided {
			unsure = append(unsure, sid+" has a condition this audit cannot evaluate")
			continue
		}
		if !cond {
			continue
		}
		switch {
		case strings.EqualFold(effect, "Deny"):
			return explicitDeny, sid + " denies " + req.action + " on " + req.resource
		case strings.EqualFold(effect, "Allow") && result != allowed:
			result, why = allowed, sid+" allows "+req.action+" on "+req.resource
		}
	}
	if len(unsure) > 0 && result != allowed {
		return undecided, strings.Join(unsure, "; ")
	}
	if len(unsure) > 0 && result == allowed {
		// A Deny with a condition may still apply.
		return undecided, why + ", but " + strings.Join(unsure, "; ")
	}
	return result, why
}

func stmtMatches(s map[string]json.RawMessage, req request) bool {
	if v, ok := s["Action"]; ok {
		if !anyMatch(stringsOf(v), req.action, false) {
			return false
		}
	} else if v, ok := s["NotAction"]; ok {
		if anyMatch(stringsOf(v), req.action, false) {
			return false
		}
	} else {
		return false
	}
	if v, ok := s["Resource"]; ok {
		if !anyMatch(stringsOf(v), req.resource, true) {
			return false
		}
	} else if v, ok := s["NotResource"]; ok {
		if anyMatch(stringsOf(v), req.resource, true) {
			return false
		}
	}
	if v, ok := s["Principal"]; ok {
		return principalMatches(v, req)
	}
	if v, ok := s["NotPrincipal"]; ok {
		return !principalMatches(v, req)
	}
	return true // endpoint policies may omit Principal: everyone
}

func principalMatches(v json.RawMessage, req request) bool {
	if stringOf(v) == "*" {
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return false
	}
	for k, raw := range m {
		if !strings.EqualFold(k, "AWS") {
			continue
		}
		for _, p := range stringsOf(raw) {
			if p == "*" {
				return true
			}
			if req.signedByAWS {
				continue
			}
			if p == req.principal || p == req.account || p == "arn:aws:iam::"+req.account+":root" {
				return true
			}
		}
	}
	return false
}

// conditionApplies decides the condition keys whose value is known for an
// ECR layer download (the bucket is AWS's, the URL is signed by ECR): an
// account or organization of the caller's never matches them.
func conditionApplies(raw json.RawMessage, effect string, req request) (applies, decided bool) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return true, true
	}
	var ops map[string]map[string]json.RawMessage
	if json.Unmarshal(raw, &ops) != nil {
		return false, false
	}
	applies = true
	for op, keys := range ops {
		for key := range keys {
			k := strings.ToLower(key)
			known := req.signedByAWS && (k == "aws:resourceaccount" || k == "s3:resourceaccount" || k == "aws:principalaccount" ||
				k == "aws:principalorgid" || k == "aws:resourceorgid" || k == "aws:principalarn")
			if !known {
				return false, false
			}
			// The request's value is AWS's, never the caller's: a
			// positive test (StringEquals your-account) fails, a negative
			// one (StringNotEquals your-account) holds.
			negative := strings.Contains(strings.ToLower(op), "not")
			if !negative {
				applies = false
			}
		}
	}
	return applies, true
}

func stringOf(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

func stringsOf(v json.RawMessage) []string {
	var list []string
	if json.Unmarshal(v, &list) == nil {
		return list
	}
	if s := stringOf(v); s != "" {
		return []string{s}
	}
	return nil
}

func anyMatch(patterns []string, v string, caseSensitive bool) bool {
	for _, p := range patterns {
		if wildcard(p, v, caseSensitive) {
			return true
		}
	}
	return false
}

// wildcard matches IAM's * (any run) and ? (one character).
func wildcard(pattern, s string, caseSensitive bool) bool {
	if !caseSensitive {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	p, v := 0, 0
	star, mark := -1, 0
	for v < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[v]):
			p++
			v++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, v
			p++
		case star >= 0:
			p = star + 1
			mark++
			v = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
