package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// MinSecretLen is the shortest value Secrets masks by value. A shorter
// "secret" would erase ordinary letters of every message; the patterns of
// String still catch it in an Authorization header or a query string.
const MinSecretLen = 4

// Secrets is the set of secret values one run holds or obtains: passwords
// (--password-stdin, docker config), credential-helper answers, tokens it
// received, the Authorization values it built, signed query values. Each is
// added where it enters the process; every string that leaves the process
// goes through String or Scrub, so a server that quotes a secret back in
// an error body cannot put it in any output.
//
// A nil *Secrets is valid: it masks only what String recognizes.
type Secrets struct {
	mu   sync.RWMutex
	vals []string // longest first, so a value that contains another goes whole
	seen map[string]bool
}

// NewSecrets returns an empty set.
func NewSecrets() *Secrets { return &Secrets{seen: map[string]bool{}} }

// Add records secret values, with the forms a server may echo them in
// (URL-encoded, JSON-escaped, base64).
func (s *Secrets) Add(vals ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vals {
		s.add(v)
		s.add(url.QueryEscape(v))
		s.add(url.PathEscape(v))
		if b, err := json.Marshal(v); err == nil {
			s.add(string(b[1 : len(b)-1]))
		}
		s.add(base64.StdEncoding.EncodeToString([]byte(v)))
	}
	sort.Slice(s.vals, func(i, j int) bool { return len(s.vals[i]) > len(s.vals[j]) })
}

// AddBasic records a user name and password the way they travel: the
// password, "user:password", and its base64 (the Basic header value). The
// user name alone is not a secret.
func (s *Secrets) AddBasic(user, password string) {
	if password == "" {
		return
	}
	s.Add(password, user+":"+password)
}

// AddAuthorization records an Authorization header value and its
// credential part ("Bearer TOKEN" -> TOKEN).
func (s *Secrets) AddAuthorization(v string) {
	vals := []string{v}
	if _, cred, ok := strings.Cut(v, " "); ok {
		vals = append(vals, cred)
	}
	s.Add(vals...)
}

// AddURL records the values of a URL's signed query parameters
// (X-Amz-Signature, sig, token...) and its user info password.
func (s *Secrets) AddURL(u *url.URL) {
	if s == nil || u == nil {
		return
	}
	if p, ok := u.User.Password(); ok {
		s.AddBasic(u.User.Username(), p)
	}
	for k, vs := range u.Query() {
		if SecretQueryKey(k) {
			s.Add(vs...)
		}
	}
}

func (s *Secrets) add(v string) {
	if len(v) < MinSecretLen || s.seen[v] {
		return
	}
	s.seen[v] = true
	s.vals = append(s.vals, v)
}

// String masks every known secret value in x, then what String recognizes.
func (s *Secrets) String(x string) string {
	if s != nil {
		s.mu.RLock()
		for _, v := range s.vals {
			if strings.Contains(x, v) {
				x = strings.ReplaceAll(x, v, Mask)
			}
		}
		s.mu.RUnlock()
	}
	return String(x)
}

// Scrub masks secrets in every exported string reachable from v (a pointer
// to a report): struct fields, slices, maps and pointers, in place. Named
// string types (codes, roles, stages) are left alone: the engine chose
// them from a closed set, so a password that happens to be "registry"
// cannot rename a role. It is the last step before a report leaves the
// engine that filled it.
func (s *Secrets) Scrub(v any) {
	scrubValue(s, reflect.ValueOf(v), 0)
}

var plainString = reflect.TypeOf("")

func scrubValue(s *Secrets, v reflect.Value, depth int) {
	if depth > 32 || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			scrubValue(s, v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				scrubValue(s, v.Field(i), depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			scrubValue(s, v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.Type().Elem().Kind() == reflect.String {
			for _, k := range v.MapKeys() {
				v.SetMapIndex(k, reflect.ValueOf(s.String(v.MapIndex(k).String())).Convert(v.Type().Elem()))
			}
			return
		}
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			if e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface {
				scrubValue(s, e, depth+1)
			}
		}
	case reflect.String:
		// Only plain strings carry text from outside; a named string
		// type (a verdict code, a role) is a closed set the engine chose.
		if v.CanSet() && v.Type() == plainString {
			if out := s.String(v.String()); out != v.String() {
				v.SetString(out)
			}
		}
	}
}

// Err returns err with its message masked; errors.As and errors.Is still
// reach the original (a *runtimecfg.ConfigError stays one).
func (s *Secrets) Err(err error) error {
	if err == nil {
		return nil
	}
	msg := s.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &maskedError{msg: msg, err: err}
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }
