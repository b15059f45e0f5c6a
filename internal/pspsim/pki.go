package pspsim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is a throwaway certificate authority with one server certificate
// (for 127.0.0.1 and localhost) and one client certificate, the three
// pieces of a mutual-TLS PSP connection.
type PKI struct {
	CAPEM []byte // the authority's certificate, PEM
	CA    *x509.CertPool

	Server        tls.Certificate
	ServerCertPEM []byte
	ServerKeyPEM  []byte

	Client        tls.Certificate
	ClientCertPEM []byte
	ClientKeyPEM  []byte
}

// NewPKI returns a new authority and its two certificates, valid for
// validFor from an hour ago.
func NewPKI(validFor time.Duration) (*PKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pspsim test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validFor), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("pki: CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("pki: CA: %w", err)
	}
	p := &PKI{CAPEM: pemBlock("CERTIFICATE", caDER), CA: x509.NewCertPool()}
	p.CA.AddCert(ca)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, server bool) (tls.Certificate, []byte, []byte, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return tls.Certificate{}, nil, nil, err
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validFor),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if server {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
			tmpl.DNSNames = []string{"localhost"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return tls.Certificate{}, nil, nil, err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return tls.Certificate{}, nil, nil, err
		}
		certPEM, keyPEM := pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", keyDER)
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		return c, certPEM, keyPEM, err
	}
	if p.Server, p.ServerCertPEM, p.ServerKeyPEM, err = issue(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, true); err != nil {
		return nil, fmt.Errorf("pki: server certificate: %w", err)
	}
	if p.Client, p.ClientCertPEM, p.ClientKeyPEM, err = issue(3, "pixgate", x509.ExtKeyUsageClientAuth, false); err != nil {
		return nil, fmt.Errorf("pki: client certificate: %w", err)
	}
	return p, nil
}

// PKIFiles are the paths WriteFiles wrote.
type PKIFiles struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

// WriteFiles writes the PEM files into dir (keys readable by the owner
// only) and returns their paths.
func (p *PKI) WriteFiles(dir string) (PKIFiles, error) {
	f := PKIFiles{
		CA:         filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
	}
	for _, w := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{f.CA, p.CAPEM, 0o644}, {f.ServerCert, p.ServerCertPEM, 0o644}, {f.ServerKey, p.ServerKeyPEM, 0o600},
		{f.ClientCert, p.ClientCertPEM, 0o644}, {f.ClientKey, p.ClientKeyPEM, 0o600}} {
		if err := os.WriteFile(w.path, w.data, w.mode); err != nil {
			return PKIFiles{}, fmt.Errorf("pki: %w", err)
		}
	}
	return f, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
