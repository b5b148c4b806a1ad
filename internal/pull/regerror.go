package pull

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
)

// RegistryError is one entry of the distribution spec's error body
// ({"errors":[{"code":"MANIFEST_UNKNOWN","message":"..."}]}).
type RegistryError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// readErrorBody reads at most 64 KiB of an error response and pulls out the
// registry error codes, or the code of an S3 / Azure storage XML error.
func readErrorBody(r io.Reader) (codes []RegistryError, text string) {
	b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	text = strings.TrimSpace(string(b))
	var body struct {
		Errors []RegistryError `json:"errors"`
	}
	if json.Unmarshal(b, &body) == nil && len(body.Errors) > 0 {
		return body.Errors, text
	}
	// S3: <Error><Code>AccessDenied</Code><Message>...</Message></Error>;
	// Azure: <Error><Code>AuthorizationFailure</Code><Message>...</Message></Error>
	var x struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(b, &x) == nil && x.Code != "" {
		return []RegistryError{{Code: x.Code, Message: strings.TrimSpace(x.Message)}}, text
	}
	return nil, text
}

func hasCode(es []RegistryError, codes ...string) bool {
	for _, e := range es {
		for _, c := range codes {
			if strings.EqualFold(e.Code, c) {
				return true
			}
		}
	}
	return false
}

func firstMessage(es []RegistryError, text string) string {
	for _, e := range es {
		if e.Message != "" {
			return e.Code + ": " + e.Message
		}
		if e.Code != "" {
			return e.Code
		}
	}
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	return text
}
