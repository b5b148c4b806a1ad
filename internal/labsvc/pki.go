package labsvc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CA is a lab certificate authority (ECDSA P-256) that issues leaf
// certificates for lab services.
type CA struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
}

// LeafOptions says what a leaf certificate is for and when it is valid.
// Zero NotBefore means one hour ago; zero NotAfter means 24 hours from now.
type LeafOptions struct {
	DNSNames  []string
	IPs       []net.IP
	NotBefore time.Time
	NotAfter  time.Time
}

// Leaf is an issued certificate with its key.
type Leaf struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte // the leaf followed by the CA certificate
	KeyPEM  []byte
}

// NewCA makes a new self-signed lab CA valid from one hour ago for ten years.
func NewCA(commonName string) (*CA, error) {
	if commonName == "" {
		commonName = "pullpath lab CA"
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"pullpath lab"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	return &CA{Cert: cert, Key: key, CertPEM: EncodeCertPEM(der)}, nil
}

// Issue makes a server (and client) leaf certificate signed by the CA.
// Validity is not checked against the current time, so expired and
// not-yet-valid certificates can be made on purpose.
func (ca *CA) Issue(opts LeafOptions) (*Leaf, error) {
	if len(opts.DNSNames) == 0 && len(opts.IPs) == 0 {
		return nil, errors.New("issue leaf certificate: want at least one DNS name or IP address")
	}
	now := time.Now()
	if opts.NotBefore.IsZero() {
		opts.NotBefore = now.Add(-time.Hour)
	}
	if opts.NotAfter.IsZero() {
		opts.NotAfter = now.Add(24 * time.Hour)
	}
	if !opts.NotAfter.After(opts.NotBefore) {
		return nil, fmt.Errorf("issue leaf certificate: NotAfter %s is not after NotBefore %s", opts.NotAfter.Format(time.RFC3339), opts.NotBefore.Format(time.RFC3339))
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate leaf key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	cn := ""
	if len(opts.DNSNames) > 0 {
		cn = opts.DNSNames[0]
	} else {
		cn = opts.IPs[0].String()
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"pullpath lab"}},
		NotBefore:    opts.NotBefore,
		NotAfter:     opts.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     opts.DNSNames,
		IPAddresses:  opts.IPs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, fmt.Errorf("create leaf certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse leaf certificate: %w", err)
	}
	keyPEM, err := EncodeKeyPEM(key)
	if err != nil {
		return nil, err
	}
	chain := append(EncodeCertPEM(der), ca.CertPEM...)
	return &Leaf{Cert: cert, Key: key, CertPEM: chain, KeyPEM: keyPEM}, nil
}

// Pool returns a certificate pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// WriteCAFile writes the CA certificate in PEM to path (mode 0644),
// creating parent directories.
func (ca *CA) WriteCAFile(path string) error {
	return writeFile(path, ca.CertPEM, 0o644)
}

// TLSCertificate returns the leaf as a tls.Certificate (chain included).
func (l *Leaf) TLSCertificate() (tls.Certificate, error) {
	c, err := tls.X509KeyPair(l.CertPEM, l.KeyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("leaf key pair: %w", err)
	}
	return c, nil
}

// WriteFiles writes the certificate chain and the key in PEM (key mode 0600).
func (l *Leaf) WriteFiles(certPath, keyPath string) error {
	if err := writeFile(certPath, l.CertPEM, 0o644); err != nil {
		return err
	}
	return writeFile(keyPath, l.KeyPEM, 0o600)
}

// EncodeCertPEM encodes a DER certificate as a PEM "CERTIFICATE" block.
func EncodeCertPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// EncodeKeyPEM encodes an ECDSA private key as a PEM "EC PRIVATE KEY" block.
func EncodeKeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal EC key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// loadTLS returns the certificate to serve: cert if set, else the key pair
// read from certFile and keyFile, else nil (plain HTTP).
func loadTLS(cert *tls.Certificate, certFile, keyFile string) (*tls.Config, error) {
	switch {
	case cert != nil:
		return &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}, nil
	case certFile != "" || keyFile != "":
		if certFile == "" || keyFile == "" {
			return nil, fmt.Errorf("TLS needs both a certificate file and a key file, got cert %q key %q", certFile, keyFile)
		}
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("load TLS key pair %q/%q: %w", certFile, keyFile, err)
		}
		return &tls.Config{Certificates: []tls.Certificate{c}, MinVersion: tls.VersionTLS12}, nil
	}
	return nil, nil
}

func newSerial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, fmt.Errorf("certificate serial: %w", err)
	}
	return s, nil
}

func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create directory for %q: %w", path, err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	return nil
}

// WriteFiles writes the CA certificate and its private key in PEM (key
// mode 0600), so another process can LoadCA it and issue more leaves.
func (ca *CA) WriteFiles(certPath, keyPath string) error {
	keyPEM, err := EncodeKeyPEM(ca.Key)
	if err != nil {
		return err
	}
	if err := writeFile(certPath, ca.CertPEM, 0o644); err != nil {
		return err
	}
	return writeFile(keyPath, keyPEM, 0o600)
}

// LoadCA reads a CA written by WriteFiles.
func LoadCA(certPath, keyPath string) (*CA, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("read CA certificate: %w", err)
	}
	blk, _ := pem.Decode(certPEM)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("CA certificate %q: want a PEM CERTIFICATE block", certPath)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("CA certificate %q: %w", certPath, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("CA certificate %q is not a CA certificate", certPath)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("read CA key: %w", err)
	}
	kblk, _ := pem.Decode(keyPEM)
	if kblk == nil || kblk.Type != "EC PRIVATE KEY" {
		return nil, fmt.Errorf("CA key %q: want a PEM EC PRIVATE KEY block", keyPath)
	}
	key, err := x509.ParseECPrivateKey(kblk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("CA key %q: %w", keyPath, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("CA key %q does not match certificate %q", keyPath, certPath)
	}
	return &CA{Cert: cert, Key: key, CertPEM: EncodeCertPEM(cert.Raw)}, nil
}
