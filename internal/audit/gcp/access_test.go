package gcp

import (
	"errors"
	"testing"

	"google.golang.org/api/googleapi"

	"github.com/pullpath/pullpath/internal/audit"
)

// A refused required call names its permission; an unauthenticated one is
// a credentials error; anything else keeps the call and the API's words.
func TestCallError(t *testing.T) {
	var de *audit.DeniedError
	if err := callError(&googleapi.Error{Code: 403, Message: "Required \"container.clusters.get\" permission(s)"}, "gcloud container clusters describe prod", "container.clusters.get"); !errors.As(err, &de) || de.Permission != "container.clusters.get" {
		t.Errorf("403: %v, want a DeniedError for container.clusters.get", err)
	}
	var ne *audit.NoCredentialsError
	if err := callError(&googleapi.Error{Code: 401, Message: "Request had invalid authentication credentials."}, "c", "p"); !errors.As(err, &ne) {
		t.Errorf("401: %v, want a NoCredentialsError", err)
	}
	if err := callError(&googleapi.Error{Code: 404, Message: "Not found"}, "gcloud x", "p"); errors.As(err, &de) || errors.As(err, &ne) || err.Error() != "gcloud x: 404 Not found" {
		t.Errorf("404: %v", err)
	}
}
