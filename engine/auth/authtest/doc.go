// Package authtest helps tests anywhere in Switchboard make real signed access tokens, good and
// bad: keys of every algorithm the verifier accepts (RS256, ES256, EdDSA), tokens whose header and
// claims can be bent at will (wrong audience, expired, alg none, HS256 signed with the public key
// bytes, unknown kid, wrong typ), and an httptest JWKS server whose keys can be rotated.
//
// It is test support: nothing in a running server imports it. It imports the standard library and
// go-jose only; it must never import engine/auth (whose own tests import this package), store,
// providers or scripting.
package authtest
