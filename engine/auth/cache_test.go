package auth

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestCachedTokenIsNotVerifiedAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok := testKey(t, "rs256-1").MustMint(t, f.claims(), nil)
	first, err := f.auth(tok)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.v.verifications.Load(); n != 1 {
		t.Fatalf("verifications after the first call = %d, want 1", n)
	}
	f.clock.Advance(time.Minute)
	second, err := f.auth(tok)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.v.verifications.Load(); n != 1 {
		t.Fatalf("verifications after the cached call = %d, want 1", n)
	}
	if second.Subject != testClient || second.ClientID != testClient {
		t.Fatalf("cached principal = %+v", *second)
	}
	if second == first {
		t.Fatal("the cache handed out the same *Principal twice")
	}
}

func TestCachedTokenExpires(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok := testKey(t, "eddsa-1").MustMint(t, f.claims(), nil)
	if _, err := f.auth(tok); err != nil {
		t.Fatal(err)
	}
	// Still accepted inside the leeway, from the cache.
	f.clock.Advance(testTTL + DefaultLeeway - time.Second)
	if _, err := f.auth(tok); err != nil {
		t.Fatalf("inside the leeway: %v", err)
	}
	if n := f.v.verifications.Load(); n != 1 {
		t.Fatalf("verifications = %d, want 1", n)
	}
	f.clock.Advance(time.Second)
	_, err := f.auth(tok)
	requireRefused(t, err, detailExpired, tok)
	if f.v.cache.size() != 0 {
		t.Fatalf("the expired entry is still cached")
	}
}

func TestRefusedTokensAreNotCached(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.claims()
	c["aud"] = "other"
	tok := testKey(t, "eddsa-1").MustMint(t, c, nil)
	for i := 0; i < 2; i++ {
		_, err := f.auth(tok)
		requireRefused(t, err, detailAudience, tok)
	}
	if n := f.v.verifications.Load(); n != 2 {
		t.Fatalf("verifications = %d, want 2 (refusals must not be cached)", n)
	}
}

func TestTokenCacheIsBounded(t *testing.T) {
	t.Parallel()
	now := testStart
	c := newTokenCache(100)
	p := &Principal{Subject: "s"}
	key := func(i int) [32]byte {
		var k [32]byte
		copy(k[:], fmt.Sprintf("%031d", i))
		return k
	}
	// 50 entries that die in a minute, then enough live ones to overflow.
	for i := 0; i < 50; i++ {
		c.put(key(i), p, now.Add(time.Minute), now)
	}
	later := now.Add(2 * time.Minute)
	for i := 50; i < 150; i++ {
		c.put(key(i), p, later.Add(time.Hour), later)
		if c.size() > 100 {
			t.Fatalf("cache holds %d entries, bound 100", c.size())
		}
	}
	for i := 0; i < 50; i++ {
		if _, ok := c.get(key(i), later); ok {
			t.Fatalf("dead entry %d still served", i)
		}
	}
	// The newest entry always survives its own insertion.
	if _, ok := c.get(key(149), later); !ok {
		t.Fatal("newest entry missing")
	}
	// Dead entries were evicted before any live one: entries 50..139 filled the room the dead
	// ones left, so they are all still there.
	for i := 50; i < 140; i++ {
		if _, ok := c.get(key(i), later); !ok {
			t.Fatalf("live entry %d evicted while dead entries could go first", i)
		}
	}
}

func TestAuthenticateConcurrently(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var toks []string
	for _, kid := range []string{"rs256-1", "es256-1", "eddsa-1"} {
		toks = append(toks, testKey(t, kid).MustMint(t, f.claims(), nil))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*30)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				if _, err := f.v.Authenticate(context.Background(), "Bearer "+toks[(g+i)%len(toks)]); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if hits := f.jwks.Hits(); hits != 1 {
		t.Fatalf("JWKS fetched %d times, want 1", hits)
	}
}
