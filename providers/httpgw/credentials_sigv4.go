package httpgw

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"switchboard/engine"
)

// CodeSigningFailed is the transient code of a send whose request could not be signed.
const CodeSigningFailed = "auth.signing-failed"

// requestSigner is a credential that signs the whole request (method, URL, headers and body)
// rather than adding a fixed header. exchange calls it after prepare's output became a request
// and before the request is sent.
type requestSigner interface {
	sign(r *http.Request, body []byte) error
}

// sigV4Credential signs every request with AWS Signature Version 4 using AWS's own signer
// (aws-sdk-go-v2's aws/signer/v4): the payload hash is the hex SHA-256 of the exact body sent,
// the signing time comes from the provider's clock, and X-Amz-Date (and X-Amz-Security-Token
// with a session token) are set on the request with Authorization.
//
// Signed headers are every header the request carries when it is signed (the ones prepare set,
// Content-Type, Host) except those the signer always leaves out (User-Agent, …) and
// Content-Length, which is not signed: AWS does not require it, and the published SigV4 test
// suite signs without it. The request is signed as a copy so that the signer's canonical
// rewriting of the query does not change what is sent; AWS canonicalises what it receives.
type sigV4Credential struct {
	creds           aws.Credentials
	service, region string
	signer          *v4.Signer
	clock           engine.Clock
}

func newSigV4Credential(auth Auth, clock engine.Clock) (*sigV4Credential, error) {
	if auth.Service == "" || auth.Region == "" {
		return nil, errors.New("aws-sigv4: service and region are required")
	}
	if auth.AccessKeyID == "" || auth.SecretAccessKey == "" {
		return nil, errors.New("aws-sigv4: access key id and secret access key are required")
	}
	for _, v := range []string{auth.AccessKeyID, auth.SessionToken} {
		if !validHeaderValue(v) {
			return nil, errors.New("aws-sigv4: access key id or session token is malformed")
		}
	}
	return &sigV4Credential{
		creds: aws.Credentials{AccessKeyID: auth.AccessKeyID, SecretAccessKey: auth.SecretAccessKey,
			SessionToken: auth.SessionToken, Source: "switchboard runtime file"},
		service: auth.Service, region: auth.Region, signer: v4.NewSigner(), clock: clock,
	}, nil
}

// apply sets nothing: sign does the work once the whole request exists.
func (c *sigV4Credential) apply(context.Context, http.Header) (string, error) { return "", nil }

func (c *sigV4Credential) rejected(string) {}

// ownedHeaders are the headers the signature sets; prepare may never set them.
func (c *sigV4Credential) ownedHeaders() []string {
	return []string{"authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"}
}

// sign signs a copy of r and copies the signature headers onto r.
func (c *sigV4Credential) sign(r *http.Request, body []byte) error {
	sum := sha256.Sum256(body)
	signed := r.Clone(r.Context())
	signed.ContentLength = 0 // not a signed header (see the type's comment)
	signed.Body = http.NoBody
	u := *r.URL
	signed.URL = &u
	if err := c.signer.SignHTTP(r.Context(), c.creds, signed, hex.EncodeToString(sum[:]), c.service, c.region, c.clock.Now().UTC()); err != nil {
		return fmt.Errorf("aws-sigv4: %w", err)
	}
	for _, name := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token"} {
		if v := signed.Header.Values(name); len(v) > 0 {
			r.Header[name] = v
		}
	}
	return nil
}
