package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/pullpath/pullpath/internal/labsvc"
)

// clusterPKI is the cluster's CA and the files every component reads,
// made in Go for each run (no openssl, no kubeadm).
type clusterPKI struct {
	dir    string
	ca     *labsvc.CA
	CAFile string
	CAKey  string
	SAKey  string
	SAPub  string
}

func newClusterPKI(dir string) (*clusterPKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := labsvc.NewCA("pullpath lab kubernetes CA")
	if err != nil {
		return nil, err
	}
	p := &clusterPKI{dir: dir, ca: ca, CAFile: filepath.Join(dir, "ca.crt"), CAKey: filepath.Join(dir, "ca.key"),
		SAKey: filepath.Join(dir, "sa.key"), SAPub: filepath.Join(dir, "sa.pub")}
	if err := ca.WriteFiles(p.CAFile, p.CAKey); err != nil {
		return nil, err
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(sa)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.SAKey, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}
	return p, os.WriteFile(p.SAPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

// issue writes NAME.crt and NAME.key: a client certificate (CN, O) or,
// with names or ips, a serving one.
func (p *clusterPKI) issue(name, cn string, orgs []string, dns []string, ips []net.IP) (certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return "", "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	if len(dns) > 0 || len(ips) > 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca.Cert, &key.PublicKey, p.ca.Key)
	if err != nil {
		return "", "", fmt.Errorf("certificate %s: %v", name, err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(p.dir, name+".crt"), filepath.Join(p.dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
}

// kubeconfig writes a kubeconfig for a client certificate it issues.
func (p *clusterPKI) kubeconfig(path, server, name, cn string, orgs []string) error {
	cf, kf, err := p.issue(name, cn, orgs, nil, nil)
	if err != nil {
		return err
	}
	return writeClientKubeconfig(path, server, p.CAFile, cf, kf)
}

func writeClientKubeconfig(path, server, caFile, certFile, keyFile string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["lab"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["lab"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["lab"] = &clientcmdapi.Context{Cluster: "lab", AuthInfo: "lab", Namespace: "default"}
	cfg.CurrentContext = "lab"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %v", path, err)
	}
	return os.Chmod(path, 0o600)
}
