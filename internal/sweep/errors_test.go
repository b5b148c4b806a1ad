package sweep

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every error apiError returns says what was done on one line and unwraps
// to the API's error, so callers ask apierrors, not the text.
func TestAPIErrorUnwraps(t *testing.T) {
	nsMissing := apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "pullpath-sweep")
	denied := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
		errors.New(`User "oncall" cannot create resource "pods" in API group "" in the namespace "pullpath-sweep"`))
	admission := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "p", errors.New(`violates PodSecurity "baseline:latest": host namespaces`))
	tests := []struct {
		name     string
		err      error
		verb     string
		resource string
		want     string
		is       func(error) bool
	}{
		{"a missing namespace", nsMissing, "create", "jobs", `create jobs in namespace pullpath-sweep: namespaces "pullpath-sweep" not found`, apierrors.IsNotFound},
		{"a missing object outside the namespace", apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, "n1"), "get", "nodes", `get nodes: nodes "n1" not found`, apierrors.IsNotFound},
		{"RBAC", denied, "create", "pods", `RBAC verb "create" on "pods" is missing in namespace pullpath-sweep for oncall (the API answered 403); deploy/sweep/rbac.yaml lists every verb sweep needs`, apierrors.IsForbidden},
		{"admission", admission, "create", "pods", "", apierrors.IsForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := apiError(tt.err, tt.verb, tt.resource, "pullpath-sweep")
			if tt.want != "" && got.Error() != tt.want {
				t.Errorf("apiError = %q, want %q", got, tt.want)
			}
			if !tt.is(got) {
				t.Errorf("apiError(%v) does not unwrap to the API's error", tt.err)
			}
		})
	}
	if got := apiError(admission, "create", "pods", "pullpath-sweep"); !errors.As(got, new(*AdmissionError)) {
		t.Errorf("apiError(admission 403) = %T, want an AdmissionError", got)
	}
}
