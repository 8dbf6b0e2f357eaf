package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"switchboard/engine"
)

// Bounds of the JWK Set handling.
const (
	// refetchInterval is the least time between two fetches of the JWK Set triggered by tokens,
	// so that tokens with random kids cannot make us hammer the issuer.
	refetchInterval = 30 * time.Second
	// emptyRetryInterval replaces refetchInterval while no key set has ever been fetched, so a
	// blip at start-up does not refuse every token for long.
	emptyRetryInterval = 2 * time.Second
	// maxKeySetAge is the age after which a fetched key set is refreshed when a token next needs
	// it, so that a key the issuer withdrew stops being accepted. A failed refresh keeps the old
	// set.
	maxKeySetAge = time.Hour
	// maxJWKSBytes caps a JWK Set document.
	maxJWKSBytes = 1 << 20
	// maxKeys caps the keys taken from one document; maxCandidates the keys one token is tried
	// against (several keys may share a kid, or the token may carry none).
	maxKeys       = 100
	maxCandidates = 4
	// minRSABits refuses weak RSA keys.
	minRSABits = 2048
)

// verificationKey is one usable public key of the set.
type verificationKey struct {
	kid string
	alg string // the JWK's alg, or "" when it names none
	pub crypto.PublicKey
}

// fits reports whether the key can check a signature made with alg.
func (k verificationKey) fits(alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch pub := k.pub.(type) {
	case *rsa.PublicKey:
		return alg == string(jose.RS256)
	case *ecdsa.PublicKey:
		return alg == string(jose.ES256) && pub.Curve == elliptic.P256()
	case ed25519.PublicKey:
		return alg == string(jose.EdDSA)
	}
	return false
}

// keySource holds the issuer's public keys, from a URL (fetched lazily, cached, refetched on an
// unknown kid at most every refetchInterval) or from a file read once.
type keySource struct {
	uri    string // empty for a file source
	client *http.Client

	fetchMu sync.Mutex // serialises fetches; held while one runs
	fetches atomic.Int64

	mu          sync.RWMutex
	keys        []verificationKey
	fetchedAt   time.Time // last successful fetch
	attemptedAt time.Time // last fetch attempt
	lastErr     error     // error of the last attempt, nil when it succeeded
}

// newFileKeySource reads a JWK Set document from disk once.
func newFileKeySource(path string) (*keySource, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read jwksFile: %w", err)
	}
	keys, err := parseJWKS(doc)
	if err != nil {
		return nil, fmt.Errorf("auth: jwksFile %s: %w", path, err)
	}
	return &keySource{keys: keys}, nil
}

func newURLKeySource(uri string, client *http.Client) *keySource {
	return &keySource{uri: uri, client: client}
}

// lookup returns the keys that may have signed a token with kid and alg. It returns an
// authentication.refused problem when no key fits, and service.unavailable when the set had to
// be fetched, the fetch failed, and no cached key fits.
func (s *keySource) lookup(ctx context.Context, kid, alg string, now time.Time) ([]verificationKey, error) {
	cands, stale := s.match(kid, alg, now)
	if len(cands) > 0 && !stale {
		return cands, nil
	}
	if s.uri == "" {
		return nil, refused(detailUnknownKey, nil)
	}
	s.refetch(ctx, now)
	cands, _ = s.match(kid, alg, now)
	if len(cands) > 0 {
		return cands, nil
	}
	s.mu.RLock()
	lastErr := s.lastErr
	s.mu.RUnlock()
	if lastErr != nil {
		return nil, &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: detailKeysDown, Err: lastErr}
	}
	return nil, refused(detailUnknownKey, nil)
}

// match returns the fitting keys and whether a URL source's set is missing or too old.
func (s *keySource) match(kid, alg string, now time.Time) ([]verificationKey, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []verificationKey
	for _, k := range s.keys {
		if (kid == "" || k.kid == kid) && k.fits(alg) {
			out = append(out, k)
			if len(out) == maxCandidates {
				break
			}
		}
	}
	stale := s.uri != "" && (s.fetchedAt.IsZero() || now.Sub(s.fetchedAt) >= maxKeySetAge)
	return out, stale
}

// refetch fetches the set unless another fetch was attempted too recently. Concurrent callers
// wait for the one fetch in flight and then use its result.
func (s *keySource) refetch(ctx context.Context, now time.Time) {
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	s.mu.RLock()
	interval := refetchInterval
	if len(s.keys) == 0 {
		interval = emptyRetryInterval
	}
	recent := !s.attemptedAt.IsZero() && now.Sub(s.attemptedAt) < interval && now.Sub(s.attemptedAt) >= 0
	s.mu.RUnlock()
	if recent {
		return
	}
	_ = s.fetchLocked(ctx, now)
}

// refresh fetches the set now, whatever the interval; a file source does nothing.
func (s *keySource) refresh(ctx context.Context, now time.Time) error {
	if s.uri == "" {
		return nil
	}
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	return s.fetchLocked(ctx, now)
}

// fetchLocked fetches and installs the set; fetchMu must be held. On failure the previous keys
// stay in use.
func (s *keySource) fetchLocked(ctx context.Context, now time.Time) error {
	s.fetches.Add(1)
	keys, err := s.download(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attemptedAt = now
	s.lastErr = err
	if err != nil {
		return err
	}
	s.keys, s.fetchedAt = keys, now
	return nil
}

// download GETs and parses the set. The request outlives the caller's cancellation (a caller
// that gives up must not mark the set as failed for everyone) but not jwksHTTPTimeout.
func (s *keySource) download(ctx context.Context) ([]verificationKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksHTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.uri, nil)
	if err != nil {
		return nil, fmt.Errorf("auth: JWKS request: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxJWKSBytes))
		return nil, fmt.Errorf("auth: fetch JWKS: status %d", resp.StatusCode)
	}
	doc, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("auth: read JWKS: %w", err)
	}
	if len(doc) > maxJWKSBytes {
		return nil, fmt.Errorf("auth: JWKS larger than %d bytes", maxJWKSBytes)
	}
	keys, err := parseJWKS(doc)
	if err != nil {
		return nil, fmt.Errorf("auth: JWKS from %s: %w", s.uri, err)
	}
	return keys, nil
}

// parseJWKS keeps the set's usable signature keys: RSA of at least 2048 bits, EC P-256 and
// Ed25519 public keys whose use is "sig" or unset and whose alg, when set, is one we accept.
// Other keys (encryption keys, symmetric keys, unknown types) are skipped; a set with no usable
// key is an error.
func parseJWKS(doc []byte) ([]verificationKey, error) {
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, fmt.Errorf("not a JWK Set: %w", err)
	}
	var keys []verificationKey
	for _, r := range raw.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(r); err != nil {
			continue // a key type we do not know; other keys may still serve
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if k.Algorithm != "" && !acceptedAlg(k.Algorithm) {
			continue
		}
		if !k.IsPublic() {
			k = k.Public()
		}
		switch pub := k.Key.(type) {
		case *rsa.PublicKey:
			if pub.N.BitLen() < minRSABits {
				continue
			}
		case *ecdsa.PublicKey:
			if pub.Curve != elliptic.P256() {
				continue // ES256 is the only EC algorithm we accept
			}
		case ed25519.PublicKey:
		default:
			continue
		}
		keys = append(keys, verificationKey{kid: k.KeyID, alg: k.Algorithm, pub: k.Key})
		if len(keys) == maxKeys {
			break
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no usable signature key (RS256, ES256 or EdDSA)")
	}
	return keys, nil
}
