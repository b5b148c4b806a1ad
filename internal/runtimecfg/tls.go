package runtimecfg

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	"github.com/pullpath/pullpath/internal/units"
)

// TLSConfig is the trust the runtime uses for this host: the system roots
// plus the host's CA files plus extraCAFiles (e.g. --registry-ca), the
// client certificates, and InsecureSkipVerify when skip_verify is set.
// ServerName is the host name of h.Host, so the config also works for a
// dial to one of its resolved addresses. Errors name the file.
func (h RegistryHost) TLSConfig(extraCAFiles []string) (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: h.SkipVerify} //nolint:gosec // the runtime's own skip_verify
	if name, _, err := net.SplitHostPort(h.Host); err == nil {
		cfg.ServerName = name
	} else {
		cfg.ServerName = h.Host
	}

	caFiles := append(append([]string{}, h.CAFiles...), extraCAFiles...)
	if len(caFiles) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		for _, f := range caFiles {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("CA file %s: %s", f, pathErrReason(err))
			}
			if !pool.AppendCertsFromPEM(data) {
				return nil, fmt.Errorf("CA file %s: no PEM certificate in it", f)
			}
		}
		cfg.RootCAs = pool
	}

	for _, pair := range h.ClientPairs {
		certPEM, err := os.ReadFile(pair[0])
		if err != nil {
			return nil, fmt.Errorf("client certificate %s: %s", pair[0], pathErrReason(err))
		}
		keyPEM := certPEM
		keyFile := pair[0]
		if pair[1] != "" {
			keyFile = pair[1]
			if keyPEM, err = os.ReadFile(pair[1]); err != nil {
				return nil, fmt.Errorf("client key %s: %s", pair[1], pathErrReason(err))
			}
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// X509KeyPair errors describe the PEM blocks, never key material.
			return nil, fmt.Errorf("client pair %s + %s: %s", pair[0], keyFile, units.OneLine(err.Error()))
		}
		cfg.Certificates = append(cfg.Certificates, cert)
	}
	return cfg, nil
}
