package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/pullpath/pullpath/internal/labsvc"
)

// credentials are the files kube-apiserver needs and the values a client
// needs to reach it. All of them are made in Go for each start: no openssl.
type credentials struct {
	caPEM      []byte // the CA that signed the serving certificate
	token      string // the admin bearer token (system:masters)
	certFile   string // serving certificate for 127.0.0.1 and localhost
	keyFile    string // its private key
	saPubFile  string // service-account verification key
	saKeyFile  string // service-account signing key
	tokensFile string // --token-auth-file
}

// writeCredentials creates a CA, a serving certificate signed by it, a
// service-account key pair and a token file in dir.
func writeCredentials(dir string) (*credentials, error) {
	c := &credentials{
		certFile:   filepath.Join(dir, "serving.crt"),
		keyFile:    filepath.Join(dir, "serving.key"),
		saPubFile:  filepath.Join(dir, "sa.pub"),
		saKeyFile:  filepath.Join(dir, "sa.key"),
		tokensFile: filepath.Join(dir, "tokens.csv"),
	}

	// 1. A CA, and a serving certificate for the loopback names it signs
	//    (the lab's PKI: one way to make certificates in the project).
	ca, err := labsvc.NewCA("pullpath-test-ca")
	if err != nil {
		return nil, err
	}
	c.caPEM = ca.CertPEM
	leaf, err := ca.Issue(labsvc.LeafOptions{DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		return nil, fmt.Errorf("issue serving certificate: %w", err)
	}
	if err := leaf.WriteFiles(c.certFile, c.keyFile); err != nil {
		return nil, err
	}

	// 2. The service-account key pair.
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate service-account key: %w", err)
	}
	if err := writeECKey(c.saKeyFile, saKey); err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("marshal service-account public key: %w", err)
	}
	if err := writePEM(c.saPubFile, "PUBLIC KEY", pubDER); err != nil {
		return nil, err
	}

	// 3. An admin token in system:masters.
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate token: %w", err)
	}
	c.token = hex.EncodeToString(raw)
	line := c.token + `,admin,admin-uid,"system:masters"` + "\n"
	if err := os.WriteFile(c.tokensFile, []byte(line), 0o600); err != nil {
		return nil, fmt.Errorf("write token file: %w", err)
	}
	return c, nil
}

func writeECKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal key for %s: %w", path, err)
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, typ string, der []byte) error {
	data := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
