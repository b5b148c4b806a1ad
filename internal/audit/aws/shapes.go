package aws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/pullpath/pullpath/internal/units"
)

// The shapes a contract file is read in, besides the CLI's one object:
//
//   - an SDK's response: boto3's dict (the CLI's members beside
//     ResponseMetadata), the Go SDK's output marshalled (beside
//     ResultMetadata and NextToken); the extra members are ignored;
//   - a recorded response, {"status_code": 200, "data": {...}}, as
//     placebo (Cloud Custodian's recordings) saves boto3's answers, with
//     its timestamps as {"__class__": "datetime", "year": ...} objects; a
//     recorded error ({"status_code": 403, "data": {"Error": {...}}}) is
//     the call failing, as live mode's refusals are;
//   - several pages of one listing, one after another or in one array
//     (each page one of the shapes above, holding its NextToken): their
//     lists are joined in order.

// RecordedError is a file that holds the API's refusal instead of its
// answer (a recorded error response, or boto3's ClientError dict): the
// call failed, as a live call refused.
type RecordedError struct {
	Status  int
	Code    string // UnauthorizedOperation, AccessDenied, ...
	Message string
}

func (e *RecordedError) Error() string {
	s := fmt.Sprintf("the recorded call failed: %s", e.Code)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + units.OneLine(e.Message)
	}
	return s
}

// filePages splits a file into its pages, each the command's output
// object (a recording's data unwrapped). truncated is whether the last
// page names a next one (NextToken, Marker with IsTruncated): the file
// holds part of the listing.
func filePages(data []byte) (pages []json.RawMessage, truncated bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var values []json.RawMessage
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			if len(values) == 0 {
				return nil, false, err // the single-object error path names it
			}
			return nil, false, fmt.Errorf("page %d: %w", len(values)+1, err)
		}
		values = append(values, v)
	}
	if len(values) == 0 {
		return nil, false, errors.New("empty") // the single-object path names it
	}
	if len(values) == 1 && len(values[0]) > 0 && values[0][0] == '[' {
		if err := json.Unmarshal(values[0], &values); err != nil {
			return nil, false, err
		}
		if len(values) == 0 {
			return nil, false, errors.New("an empty array, not a page of the command's output")
		}
	}
	for i, v := range values {
		p, err := unwrapPage(v)
		if err != nil {
			if len(values) > 1 {
				return nil, false, fmt.Errorf("page %d: %w", i+1, err)
			}
			return nil, false, err
		}
		values[i] = p
	}
	return values, nextToken(values[len(values)-1]), nil
}

// unwrapPage is one page's output object: a recording's data, checked for
// a recorded error.
func unwrapPage(v json.RawMessage) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(v, &top); err != nil {
		return v, nil // not an object: the caller's checks say what it is
	}
	status := 0
	if sc, ok := top["status_code"]; ok {
		if data, ok := top["data"]; ok {
			_ = json.Unmarshal(sc, &status)
			v = data
			top = nil
			if err := json.Unmarshal(v, &top); err != nil {
				return nil, fmt.Errorf("a recording whose data is not an object (%s)", units.OneLine(err.Error()))
			}
		}
	}
	if raw, ok := top["Error"]; ok && (status >= 300 || len(top) <= 2) {
		var e struct{ Code, Message string }
		_ = json.Unmarshal(raw, &e)
		return nil, &RecordedError{Status: status, Code: e.Code, Message: e.Message}
	}
	if status >= 300 {
		return nil, &RecordedError{Status: status, Code: "error"}
	}
	return v, nil
}

// nextToken: the page names a next one.
func nextToken(page json.RawMessage) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(page, &top) != nil {
		return false
	}
	for k, v := range top {
		switch strings.ToLower(k) {
		case "nexttoken", "marker":
			var s string
			if json.Unmarshal(v, &s) == nil && s != "" {
				return true
			}
		}
	}
	return false
}

// mergePage appends the lists of one decoded page (src) to dst's, member
// by member, and keeps dst's other members where set (the first page's).
func mergePage(dst, src reflect.Value) {
	for i := 0; i < dst.NumField(); i++ {
		d, s := dst.Field(i), src.Field(i)
		if !d.CanSet() {
			continue
		}
		switch {
		case d.Kind() == reflect.Slice:
			d.Set(reflect.AppendSlice(d, s))
		case d.IsZero():
			d.Set(s)
		}
	}
}

// Page is a file's one output object, a recording's data unwrapped (a
// recorded refusal, or a file of several pages, is an error).
func Page(data []byte) ([]byte, error) {
	pages, _, err := filePages(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if err != nil {
		return nil, err
	}
	if len(pages) != 1 {
		return nil, fmt.Errorf("%d pages, want one", len(pages))
	}
	return pages[0], nil
}
