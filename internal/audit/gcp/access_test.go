package gcp

import (
	"errors"
	"testing"

	"google.golang.org/api/googleapi"

	"github.com/pullpath/pullpath/internal/audit"
)

func TestInstanceOf(t *testing.T) {
	for in, want := range map[string][3]string{
		"gce://shop-prod/us-central1-b/gke-prod-batch-1a2b3c4d-k005": {"shop-prod", "us-central1-b", "gke-prod-batch-1a2b3c4d-k005"},
		"gce://shop-prod/us-central1-b":                              {},
		"gce:///us-central1-b/x":                                     {},
		"aws:///us-east-1a/i-0abc":                                   {},
		"":                                                           {},
	} {
		p, z, i, ok := InstanceOf(in)
		if got := [3]string{p, z, i}; got != want || ok != (want[0] != "") {
			t.Errorf("InstanceOf(%q) = %v %v, want %v", in, got, ok, want)
		}
	}
}

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
