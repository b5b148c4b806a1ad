package sweep

import (
	"errors"
	"fmt"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/pullpath/pullpath/internal/units"
)

// ForbiddenError is a request the API refused for want of an RBAC verb.
type ForbiddenError struct {
	Verb, Resource, Namespace, User string
	Message                         string
	Err                             error // the API's error (apierrors.IsForbidden)
}

func (e *ForbiddenError) Unwrap() error { return e.Err }

func (e *ForbiddenError) Error() string {
	where := "cluster-wide"
	if e.Namespace != "" {
		where = "in namespace " + e.Namespace
	}
	who := ""
	if e.User != "" {
		who = " for " + e.User
	}
	return fmt.Sprintf("RBAC verb %q on %q is missing %s%s (the API answered 403); deploy/sweep/rbac.yaml lists every verb sweep needs", e.Verb, e.Resource, where, who)
}

// `pods is forbidden: User "x" cannot create resource "pods" in API group "" in the namespace "y"`
var forbiddenRE = regexp.MustCompile(`(User|ServiceAccount|Group) "([^"]+)" cannot (\w+) resource "([^"]+)"(?: in API group "[^"]*")?(?: in the namespace "([^"]+)")?`)

// apiError turns an API error of (verb, resource, ns) into one line; a 403
// names the missing verb as the API said it. Every error it returns
// unwraps to the API's, so callers ask apierrors (IsNotFound, IsForbidden)
// rather than read the text.
func apiError(err error, verb, resource, ns string) error {
	if err == nil {
		return nil
	}
	if apierrors.IsForbidden(err) {
		// Only the authorizer's refusal names a verb; a 403 from
		// admission (a missing ServiceAccount, Pod Security) is said as
		// the API said it.
		if m := forbiddenRE.FindStringSubmatch(err.Error()); m != nil {
			fe := &ForbiddenError{Verb: m[3], Resource: m[4], Namespace: ns, User: m[2], Message: err.Error(), Err: err}
			if m[5] != "" {
				fe.Namespace = m[5]
			}
			return fe
		}
		if resource == "pods" && verb == "create" {
			return &AdmissionError{Namespace: ns, Message: units.OneLine(err.Error()), Err: err}
		}
	}
	if apierrors.IsNotFound(err) && resource != "pods" && resource != "jobs" {
		return wrapLine(err, "%s %s", verb, resource)
	}
	return wrapLine(err, "%s %s in namespace %s", verb, resource, ns)
}

// lineError is an error said on one line after what was being done; it
// unwraps to the error itself.
type lineError struct {
	msg string
	err error
}

func (e *lineError) Error() string { return e.msg }
func (e *lineError) Unwrap() error { return e.err }

// wrapLine is "WHAT: err" on one line (WHAT from format and args),
// unwrapping to err.
func wrapLine(err error, format string, args ...any) error {
	return &lineError{msg: fmt.Sprintf(format, args...) + ": " + units.OneLine(err.Error()), err: err}
}

// AdmissionError is a Pod the API refused at admission (not for RBAC): no
// Pod of the run can be made either.
type AdmissionError struct {
	Namespace, Message string
	Err                error // the API's error
}

func (e *AdmissionError) Unwrap() error { return e.Err }

func (e *AdmissionError) Error() string {
	return fmt.Sprintf("namespace %s refuses the probe Pods: %s (deploy/sweep/namespace.yaml has the Pod Security label; the namespace needs its default ServiceAccount)", e.Namespace, e.Message)
}

// IsForbidden reports whether err is a missing RBAC verb.
func IsForbidden(err error) bool {
	var fe *ForbiddenError
	return errors.As(err, &fe)
}
