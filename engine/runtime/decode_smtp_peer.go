package runtime

import (
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// maxCAFileBytes bounds a trusted CA bundle.
const maxCAFileBytes = 1 << 20

// decodeSMTP reads an smtp provider connection.
func (r *reader) decodeSMTP(m *mapping) *SMTPProvider {
	s := &SMTPProvider{
		Host:    m.required("host"),
		TLS:     TLSStartTLS,
		Timeout: millis(m.integer("timeoutMilliseconds", 30000, 1, 600000)),
	}
	if s.Host != "" && !isHostname(s.Host) && net.ParseIP(s.Host) == nil {
		m.fail("host", "must be a host name or an IP address, without scheme or port")
	}
	switch t := m.str("tls"); t {
	case "", TLSStartTLS:
	case TLSImplicit, TLSNone:
		s.TLS = t
	default:
		m.fail("tls", "must be starttls, implicit or none")
	}
	var defaultPort int64
	switch s.TLS {
	case TLSStartTLS:
		defaultPort = 587
	case TLSImplicit:
		defaultPort = 465
	case TLSNone:
		if s.Host != "" && !isLoopbackHost(s.Host) {
			m.fail("tls", "none is allowed only towards a loopback host")
		}
		if !m.has("port") {
			m.fail("port", "is required with tls: none")
		}
	}
	s.Port = int(m.integer("port", defaultPort, 1, 65535))

	if m.has("authentication") {
		a := m.child("authentication", "usernameRef", "passwordRef")
		s.Username = a.secret("usernameRef", true)
		s.Password = a.secret("passwordRef", true)
	}
	if m.has("dkim") {
		s.DKIM = r.decodeDKIM(m.child("dkim", "domain", "selector", "privateKeyRef"))
	}
	if path, data := r.readFile(m, "trustedCaFile", maxCAFileBytes); data != nil {
		if !x509.NewCertPool().AppendCertsFromPEM(data) {
			m.fail("trustedCaFile", "holds no PEM certificate")
		} else {
			s.TrustedCAFile = path
		}
	}
	return s
}

// decodeDKIM reads a DKIM signing key and checks it parses.
func (r *reader) decodeDKIM(m *mapping) *DKIM {
	d := &DKIM{Domain: m.required("domain"), Selector: m.required("selector")}
	if d.Domain != "" && !isHostname(d.Domain) {
		m.fail("domain", "must be a domain name")
	}
	if d.Selector != "" && !isHostname(d.Selector) {
		m.fail("selector", "must be DNS labels (letters, digits, - and _)")
	}
	d.PrivateKey = m.secret("privateKeyRef", true)
	if !d.PrivateKey.IsZero() {
		if reason := checkDKIMKey(d.PrivateKey.value); reason != "" {
			m.fail("privateKeyRef", "%s", reason)
			d.PrivateKey = Secret{}
		}
	}
	return d
}

// checkDKIMKey returns why b is not a usable DKIM private key, or "".
func checkDKIMKey(b []byte) string {
	block, _ := pem.Decode(b)
	if block == nil {
		return "the key must be PEM: an RSA (PKCS #1 or #8) or Ed25519 (PKCS #8) private key"
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	default:
		return "the PEM block must be RSA PRIVATE KEY or PRIVATE KEY"
	}
	if err != nil {
		return "the private key does not parse"
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if k.N.BitLen() < 1024 {
			return "an RSA DKIM key must have at least 1024 bits (RFC 8301)"
		}
	case ed25519.PrivateKey:
	default:
		return "the key must be RSA or Ed25519"
	}
	return ""
}

// decodePeer reads a peer provider connection.
func (r *reader) decodePeer(m *mapping) *PeerProvider {
	p := &PeerProvider{
		IdentityKey: m.secret("identityKeyRef", true),
		Listen:      r.multiaddrs(m, "listen", false),
		Protocol:    DefaultPeerProtocol,
		Relays:      r.multiaddrs(m, "relays", true),
	}
	if proto := m.str("protocol"); proto != "" {
		if !isMultiaddr(proto) {
			m.fail("protocol", "must be a protocol id such as /switchboard/1.0.0/message")
		} else {
			p.Protocol = proto
		}
	}
	if proto := m.str("pooledProtocol"); proto != "" {
		if !isMultiaddr(proto) || proto == p.Protocol {
			m.fail("pooledProtocol", "must be a protocol id other than protocol, such as /dkg/10.0.2/message")
		} else {
			p.PooledProtocol = proto
		}
	}
	seconds := func(key string, def int64) time.Duration {
		return time.Duration(m.integer(key, def, 1, 86_400)) * time.Second
	}
	p.Pooled = PooledTiming{Keepalive: seconds("keepaliveSeconds", DefaultKeepaliveSeconds),
		IdleClose:      seconds("idleCloseSeconds", DefaultIdleCloseSeconds),
		RequestTimeout: seconds("requestTimeoutSeconds", DefaultRequestTimeoutSeconds)}
	p.RelayService = RelayService{CircuitDuration: DefaultRelayCircuitSeconds * time.Second, CircuitBytes: DefaultRelayCircuitBytes}
	if m.has("relayService") {
		rs := m.child("relayService", "enabled", "circuitSeconds", "circuitBytes")
		p.RelayService.Enabled = rs.boolean("enabled", false)
		p.RelayService.CircuitDuration = time.Duration(rs.integer("circuitSeconds", DefaultRelayCircuitSeconds, 1, 7*86_400)) * time.Second
		p.RelayService.CircuitBytes = rs.integer("circuitBytes", DefaultRelayCircuitBytes, 1<<17, 1<<40)
	}
	mem, line := m.at("addressBook")
	book := r.open(m.vals["addressBook"], mem, line, nil)
	if len(book.keys) > 0 {
		p.AddressBook = make(map[string][]string, len(book.keys))
	}
	for _, id := range book.keys {
		if !isPeerID(id) {
			book.fail(id, "must be a peer id (32 to 128 letters and digits)")
			continue
		}
		if n := deref(book.vals[id]); n == nil || (n.Kind == yaml.SequenceNode && len(n.Content) == 0) {
			book.fail(id, "must list at least one multiaddr")
			continue
		}
		p.AddressBook[id] = r.multiaddrs(book, id, false)
	}
	p.AllowedPeers, p.AnyPeer = r.allowedPeers(m, p.AddressBook)
	p.InboxQuota = InboxQuota{MessagesPerMinute: DefaultInboxMessagesPerMinute, BytesPerDay: DefaultInboxBytesPerDay}
	if m.has("inboxQuota") {
		q := m.child("inboxQuota", "messagesPerMinute", "bytesPerDay")
		p.InboxQuota.MessagesPerMinute = int(q.integer("messagesPerMinute", DefaultInboxMessagesPerMinute, 1, 1_000_000))
		p.InboxQuota.BytesPerDay = q.integer("bytesPerDay", DefaultInboxBytesPerDay, 1, 1<<50)
	}
	return p
}

// allowedPeers reads allowedPeers: a list of peer ids, or the string any. Absent, it is the
// address book's peer ids.
func (r *reader) allowedPeers(m *mapping, book map[string][]string) (ids []string, anyPeer bool) {
	n := deref(m.vals["allowedPeers"])
	switch {
	case n == nil:
		for id := range book {
			ids = append(ids, id)
		}
	case n.Kind == yaml.ScalarNode:
		if m.str("allowedPeers") != "any" {
			m.fail("allowedPeers", "must be a list of peer ids or the string any")
		}
		return nil, true
	default:
		mem, _ := m.at("allowedPeers")
		list := m.strings("allowedPeers")
		for i, id := range list {
			if isPeerID(id) {
				ids = append(ids, id)
				continue
			}
			line := n.Line
			if len(list) == len(n.Content) { // no item was dropped: the i-th item is id
				line = n.Content[i].Line
			}
			r.diags.add(CodeInvalid, line, mem+"["+strconv.Itoa(i)+"]", "must be a peer id (32 to 128 letters and digits)")
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), false
}

// multiaddrs reads a list of multiaddrs; circuit says each must end its path with /p2p/ID.
func (r *reader) multiaddrs(m *mapping, key string, relay bool) []string {
	addrs := m.strings(key)
	out := addrs[:0]
	for i, a := range addrs {
		ok := isMultiaddr(a)
		if ok && relay {
			ok = strings.Contains(a, "/p2p/")
		}
		if !ok {
			mem, line := m.at(key)
			msg := "must be a multiaddr such as /ip4/203.0.113.7/tcp/4001"
			if relay {
				msg = "must be a relay multiaddr ending in /p2p/PEER-ID"
			}
			r.diags.add(CodeInvalid, line, mem+"["+strconv.Itoa(i)+"]", "%s", msg)
			continue
		}
		out = append(out, a)
	}
	return out
}
