package runtime

import (
	"crypto/tls"
	"net/netip"
	"strings"
)

// maxTLSFileBytes bounds a certificate chain or a private key file.
const maxTLSFileBytes = 1 << 20

// decodeListenTLS reads `listen.tls`: the certificate and key the API listener serves. Both
// files are read and must make a pair now, so that check and serve refuse a missing,
// unreadable or mismatched pair before anything binds; serve reads them again when they change.
func (r *reader) decodeListenTLS(m *mapping) *TLS {
	if !m.has("tls") {
		return nil
	}
	t := m.child("tls", "certFile", "keyFile")
	for _, key := range []string{"certFile", "keyFile"} {
		if !t.has(key) {
			t.fail(key, "is required")
		}
	}
	certPath, cert := r.readFile(t, "certFile", maxTLSFileBytes)
	keyPath, key := r.readFile(t, "keyFile", maxTLSFileBytes)
	if cert == nil || key == nil {
		return nil
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		member, reason := tlsPairProblem(err)
		t.fail(member, "%s", reason)
		return nil
	}
	return &TLS{CertFile: certPath, KeyFile: keyPath}
}

// tlsPairProblem names the member at fault and why, for an error of tls.X509KeyPair (whose
// messages never quote the files' contents).
func tlsPairProblem(err error) (member, reason string) {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "certificate input"):
		return "certFile", "holds no PEM certificate"
	case strings.Contains(msg, "key input"):
		return "keyFile", "holds no PEM private key"
	case strings.Contains(msg, "does not match"), strings.Contains(msg, "type mismatch"):
		return "keyFile", "is not the private key of the certificate in certFile"
	case strings.Contains(msg, "private key"):
		return "keyFile", "does not parse as a private key (PKCS #1, PKCS #8 or SEC 1): " + msg
	}
	return "certFile", "does not parse as a certificate: " + msg
}

// decodeTrustedProxies reads `listen.trustedProxies`: the peers whose X-Forwarded-* headers
// are believed. Each item is a CIDR block, or one address.
func (r *reader) decodeTrustedProxies(m *mapping) []netip.Prefix {
	var out []netip.Prefix
	for i, text := range m.strings("trustedProxies") {
		p, err := netip.ParsePrefix(text)
		if err != nil {
			a, aerr := netip.ParseAddr(text)
			if aerr != nil || a.Zone() != "" {
				m.fail("trustedProxies", "item %d must be a CIDR block (such as 10.0.0.0/8) or an IP address", i)
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out
}
