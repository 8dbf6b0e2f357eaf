package auth

import (
	"context"
	"testing"
)

// BenchmarkAuthenticateCached measures the accept path's usual case: a token already verified.
func BenchmarkAuthenticateCached(b *testing.B) {
	f := newFixture(b)
	header := "Bearer " + testKey(b, "rs256-1").MustMint(b, f.claims(), nil)
	ctx := context.Background()
	if _, err := f.v.Authenticate(ctx, header); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := f.v.Authenticate(ctx, header); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAuthenticateUncached measures a full verification per call (parse, key lookup,
// signature, claims) for each algorithm, with the cache disabled.
func BenchmarkAuthenticateUncached(b *testing.B) {
	for _, kid := range []string{"rs256-1", "es256-1", "eddsa-1"} {
		b.Run(kid[:len(kid)-2], func(b *testing.B) {
			f := newFixture(b)
			f.v.cache = newTokenCache(0)
			header := "Bearer " + testKey(b, kid).MustMint(b, f.claims(), nil)
			ctx := context.Background()
			if _, err := f.v.Authenticate(ctx, header); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := f.v.Authenticate(ctx, header); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
