package enginetest

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CertPair is a self-signed server certificate written to files, for tests of TLS listeners.
type CertPair struct {
	CertFile, KeyFile string
	// Cert is the parsed certificate: add it to a pool to trust it, compare its serial number
	// to tell one pair from another.
	Cert *x509.Certificate
}

// WriteCertPair makes an Ed25519 certificate for localhost, 127.0.0.1 and ::1 with the given
// serial number and writes it and its key as PEM files NAME.crt and NAME.key in dir. Pairs made
// with serial numbers of the same byte length have files of the same sizes, so a test can swap
// one pair for another without the sizes telling.
func WriteCertPair(tb testing.TB, dir, name string, serial int64) CertPair {
	tb.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "switchboard test"},
		NotBefore:    time.Unix(0, 0).UTC(),
		NotAfter:     time.Unix(1<<33, 0).UTC(),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		tb.Fatal(err)
	}
	p := CertPair{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key"), Cert: cert}
	if err := os.WriteFile(p.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Pool is a certificate pool that trusts the pair's certificate.
func (p CertPair) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.Cert)
	return pool
}
