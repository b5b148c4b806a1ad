package monitor

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// kubeClient is the few Kubernetes API calls the agent makes, over
// net/http with the service-account token: get its Node, post Events on
// it, list workloads for --from-cluster. client-go would add about 30 MB of
// binary and 10-20 MiB of RSS to every node for these four requests.
type kubeClient struct {
	base      *url.URL
	tokenFile string
	http      *http.Client
}

// kubeTimeout bounds one API request.
const kubeTimeout = 30 * time.Second

func newKubeClient(api, tokenFile, caFile string) (*kubeClient, error) {
	u, err := url.Parse(api)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("--kube-api %q: want https://HOST:PORT", api)
	}
	tr := &http.Transport{Proxy: nil, TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: kubeTimeout, MaxIdleConns: 2, IdleConnTimeout: 90 * time.Second}
	if u.Scheme == "https" {
		pool := x509.NewCertPool()
		if caFile != "" {
			b, err := os.ReadFile(caFile)
			if err != nil {
				return nil, fmt.Errorf("--kube-ca-file %s: %v", caFile, pathErr(err))
			}
			if !pool.AppendCertsFromPEM(b) {
				return nil, fmt.Errorf("--kube-ca-file %s: no PEM certificate in it", caFile)
			}
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if tokenFile != "" {
		if _, err := os.ReadFile(tokenFile); err != nil {
			return nil, fmt.Errorf("--kube-token-file %s: %v", tokenFile, pathErr(err))
		}
	}
	return &kubeClient{base: u, tokenFile: tokenFile, http: &http.Client{Transport: tr, Timeout: kubeTimeout,
		// the bearer token must not follow a redirect anywhere
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

// apiError is a non-2xx answer, with the Status message the API sent.
type apiError struct {
	Method, Path string
	Code         int
	Message      string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Code, e.Message)
}

func (k *kubeClient) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, kubeTimeout)
	defer cancel()
	u := *k.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "pullpath-monitor")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if k.tokenFile != "" {
		// re-read every time: projected tokens rotate (about hourly)
		tok, err := os.ReadFile(k.tokenFile)
		if err != nil {
			return fmt.Errorf("token %s: %v", k.tokenFile, pathErr(err))
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := k.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var st struct {
			Message string `json:"message"`
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &st) != nil || st.Message == "" {
			st.Message = firstLine(string(b))
		}
		return &apiError{Method: method, Path: path, Code: resp.StatusCode, Message: st.Message}
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %v", method, path, err)
	}
	return nil
}

// objectMeta is the part of metadata the agent reads.
type objectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	UID         string            `json:"uid,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type listMeta struct {
	Continue string `json:"continue,omitempty"`
}
