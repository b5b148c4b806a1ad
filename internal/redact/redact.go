// Package redact keeps secrets out of everything pullpath prints: signed
// query strings (S3 X-Amz-Signature, Azure sig=), user info in URLs, bearer
// tokens and basic credentials inside free text.
package redact

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces a secret value.
const Mask = "REDACTED"

// URL returns u as a string without user info and with every query value
// masked. Query keys stay: they are evidence ("the redirect was a presigned
// S3 URL"), their values never are.
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q, err := url.ParseQuery(c.RawQuery)
		if err != nil {
			c.RawQuery = Mask
		} else {
			keys := make([]string, 0, len(q))
			for k := range q {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := make([]string, 0, len(keys))
			for _, k := range keys {
				parts = append(parts, url.QueryEscape(k)+"="+Mask)
			}
			c.RawQuery = strings.Join(parts, "&")
		}
	}
	c.Fragment = ""
	return c.String()
}

// URLString is URL for a string; an unparsable string is masked whole.
func URLString(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return Mask
	}
	return URL(u)
}

var (
	reAuthHeader = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{16,}`)
	reAuthField  = regexp.MustCompile(`(?i)(authorization["']?\s*[:=]\s*["']?)(?:(bearer|basic)\s+)?[^\s"',]+`)
	reQuery      = regexp.MustCompile(`(?i)([?&](?:x-amz-[a-z-]+|sig|signature|se|sp|sv|sr|skoid|sktid|skt|ske|sks|skv|token|access_token|refresh_token|password|code|expires|key-pair-id|policy)=)[^&\s"']+`)
	reUserinfo   = regexp.MustCompile(`(?i)(https?://)[^/\s:@"']+:[^/\s@"']+@`)
	reJWT        = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)
	reJSONSecret = regexp.MustCompile(`(?i)("(?:token|access_token|refresh_token|password|identitytoken|auth)"\s*:\s*")[^"]*"`)
)

// String scrubs secrets out of free text such as an error message or a
// runtime log line: Authorization values, signed query values, user info in
// URLs, JWTs and token fields of JSON bodies.
//
// Each pattern runs only when a cheap literal check says it could match:
// explain redacts every kept message of a cluster, most of which hold no
// secret at all.
func String(s string) string {
	lower := strings.ToLower(s)
	if strings.Contains(lower, "authorization") {
		s = reAuthField.ReplaceAllStringFunc(s, func(m string) string {
			sm := reAuthField.FindStringSubmatch(m)
			if sm[2] == "" {
				return sm[1] + Mask
			}
			return sm[1] + sm[2] + " " + Mask
		})
	}
	if strings.Contains(lower, "bearer") || strings.Contains(lower, "basic") {
		s = reAuthHeader.ReplaceAllString(s, "$1 "+Mask)
	}
	if strings.ContainsAny(s, "?&") {
		s = reQuery.ReplaceAllString(s, "${1}"+Mask)
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = reUserinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	}
	if strings.Contains(s, "eyJ") {
		s = reJWT.ReplaceAllString(s, Mask)
	}
	if strings.Contains(s, `"`) {
		s = reJSONSecret.ReplaceAllString(s, `${1}`+Mask+`"`)
	}
	return s
}

var reSecretQueryKey = regexp.MustCompile(`(?i)^(?:x-amz-signature|x-amz-credential|x-amz-security-token|sig|signature|token|access_token|refresh_token|password|code|policy|skoid|sktid)$`)

// SecretQueryKey reports whether a query parameter's value is a secret (a
// signature, a credential or a token), not evidence such as an expiry.
func SecretQueryKey(k string) bool { return reSecretQueryKey.MatchString(k) }
