package runtime

import (
	"slices"
	"testing"
)

func TestLoadTokenTypes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		list string // "" leaves tokenTypes out
		want []string
	}{
		{name: "absent: the verifier's default"},
		{name: "canonical forms", list: "[Application/AT+JWT, jwt]", want: []string{"at+jwt", "JWT"}},
		{name: "untyped", list: "[JWT, Untyped]", want: []string{"JWT", "untyped"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			auth := `authentication: {oidc: {issuer: "https://id.example", audience: sb, jwksUri: "https://id.example/jwks", allowedClients: [c]}}`
			if tc.list != "" {
				auth = withTokenTypes(tc.list)
			}
			rt := b.mustLoad(t, doc(map[string]string{"authentication": auth}))
			if got := rt.Authentication.OIDC.TokenTypes; !slices.Equal(got, tc.want) {
				t.Fatalf("TokenTypes = %q, want %q", got, tc.want)
			}
		})
	}
}
