package dkimkey

import (
	"crypto"
	"fmt"
	"strings"
)

// maxTXTString is the longest character-string one DNS TXT record string may hold (RFC 1035
// section 3.3); longer values are published as several strings that resolvers join.
const maxTXTString = 255

// Record is the DNS TXT record that publishes a DKIM public key.
type Record struct {
	// Name is the owner name, "SELECTOR._domainkey.DOMAIN" (no trailing dot).
	Name string
	// Value is the record text as resolvers return it: "v=DKIM1; k=rsa; p=BASE64".
	Value string
	// Algorithm is the key's algorithm, as in the k= tag.
	Algorithm Algorithm
}

// NewRecord builds the TXT record of pub under selector and domain. Both must be DNS names
// (ValidName); pub must be an RSA or Ed25519 public key. Refusals wrap ErrInvalidInput.
func NewRecord(domain, selector string, pub crypto.PublicKey) (Record, error) {
	if err := ValidName("domain", domain); err != nil {
		return Record{}, err
	}
	if err := ValidName("selector", selector); err != nil {
		return Record{}, err
	}
	alg, err := AlgorithmOf(pub)
	if err != nil {
		return Record{}, err
	}
	p, err := publicKeyData(pub)
	if err != nil {
		return Record{}, err
	}
	return Record{
		Name:      RecordName(domain, selector),
		Value:     "v=DKIM1; k=" + string(alg) + "; p=" + p,
		Algorithm: alg,
	}, nil
}

// RecordName is the owner name of a DKIM key record: "SELECTOR._domainkey.DOMAIN" with the
// domain's trailing dot, if any, dropped.
func RecordName(domain, selector string) string {
	return selector + "._domainkey." + strings.TrimSuffix(domain, ".")
}

// Strings splits Value into the quoted character-strings of a zone file, each at most 255
// bytes: an RSA-2048 record does not fit in one.
func (r Record) Strings() []string {
	var out []string
	for v := r.Value; v != ""; {
		n := min(len(v), maxTXTString)
		out = append(out, `"`+v[:n]+`"`)
		v = v[n:]
	}
	return out
}

// ZoneLine is the record as one zone-file line, ready to paste:
//
//	s1._domainkey.example.org. 3600 IN TXT "v=DKIM1; k=rsa; p=…" "…"
func (r Record) ZoneLine() string {
	return r.Name + ". 3600 IN TXT " + strings.Join(r.Strings(), " ")
}

// Lookup returns a LookupTXT function (the shape go-msgauth's dkim.VerifyOptions takes) that
// answers this record's name with its value and every other name with an error. Tests and the
// dev SMTP sink use it to verify signatures without DNS.
func (r Record) Lookup() func(name string) ([]string, error) {
	return func(name string) ([]string, error) {
		if strings.EqualFold(strings.TrimSuffix(name, "."), r.Name) {
			return []string{r.Value}, nil
		}
		return nil, fmt.Errorf("dkimkey: no TXT record for %q", name)
	}
}

// ValidName checks that s is a DNS name usable as a DKIM domain or selector: dot-separated
// labels of 1 to 63 letters, digits, '-' and '_' (no leading or trailing '-'), at most 253
// bytes, an optional trailing dot on a domain. what names the flag in the error.
func ValidName(what, s string) error {
	name := s
	if what == "domain" {
		name = strings.TrimSuffix(s, ".")
	}
	if name == "" || len(name) > 253 {
		return fmt.Errorf("%s %q: must be a DNS name of 1 to 253 characters: %w", what, s, ErrInvalidInput)
	}
	for _, label := range strings.Split(name, ".") {
		if !validLabel(label) {
			return fmt.Errorf("%s %q: each label must be 1 to 63 letters, digits, '-' or '_', not starting or ending with '-': %w",
				what, s, ErrInvalidInput)
		}
	}
	return nil
}

func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
