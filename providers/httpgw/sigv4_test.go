package httpgw

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// sigv4Vectors is testdata/sigv4/vectors.json (AWS's SigV4 test suite; origin in its README).
type sigv4Vectors struct {
	AccessKeyID     string    `json:"accessKeyId"`
	SecretAccessKey string    `json:"secretAccessKey"`
	Region          string    `json:"region"`
	Service         string    `json:"service"`
	SigningTime     time.Time `json:"signingTime"`
	Host            string    `json:"host"`
	Cases           []struct {
		Name          string            `json:"name"`
		Method        string            `json:"method"`
		Target        string            `json:"target"`
		Headers       map[string]string `json:"headers"`
		BodyFormat    string            `json:"bodyFormat"`
		Body          json.RawMessage   `json:"body"`
		SessionToken  string            `json:"sessionToken"`
		Authorization string            `json:"authorization"`
	} `json:"cases"`
}

// TestSigV4MatchesAWSTestSuite sends each suite request through a provider with aws-sigv4 and a
// clock at the suite's signing time, to a real local server reached under the suite's host
// name, and checks what that server received against the suite's expected Authorization.
func TestSigV4MatchesAWSTestSuite(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("testdata", "sigv4", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var suite sigv4Vectors
	if err := json.Unmarshal(raw, &suite); err != nil {
		t.Fatal(err)
	}
	if len(suite.Cases) < 10 {
		t.Fatalf("only %d vectors", len(suite.Cases))
	}
	gw := newGateway(t, answerJSON(http.StatusOK, `{}`))
	// Every connection goes to the local server, whatever host the URL names, so that the
	// request carries Host: example.amazonaws.com as the suite's does.
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, gw.Listener.Addr().String())
	}}}
	for i, tc := range suite.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			base, _ := url.Parse("http://" + suite.Host + "/")
			headers := []string{"content-type"}
			for name := range tc.Headers {
				headers = append(headers, name)
			}
			cfg := Config{ID: "aws", Source: specAdapter, Method: tc.Method, RequestHeaders: headers, BaseURL: base,
				Timeout: 5 * time.Second, HTTPClient: client, Clock: &fakeClock{now: suite.SigningTime},
				Auth: Auth{Kind: AuthAWSSigV4, Service: suite.Service, Region: suite.Region, AccessKeyID: suite.AccessKeyID,
					SecretAccessKey: suite.SecretAccessKey, SessionToken: tc.SessionToken}}
			p := newTestProvider(t, cfg)
			spec := map[string]any{"target": tc.Target}
			if len(tc.Headers) > 0 {
				spec["headers"] = tc.Headers
			}
			if tc.BodyFormat != "" {
				spec["bodyFormat"], spec["body"] = tc.BodyFormat, tc.Body
			}
			if o := p.Send(context.Background(), specOutbound(t, spec)); o.Class != engine.OutcomeAccepted {
				t.Fatalf("send: %+v", o)
			}
			got := gw.requests()[i]
			if a := got.Header.Get("Authorization"); a != tc.Authorization {
				t.Errorf("Authorization\n got %s\nwant %s", a, tc.Authorization)
			}
			if d := got.Header.Get("X-Amz-Date"); d != "20150830T123600Z" {
				t.Errorf("X-Amz-Date = %q", d)
			}
			if tok := got.Header.Get("X-Amz-Security-Token"); tok != tc.SessionToken {
				t.Errorf("X-Amz-Security-Token = %q, want %q", tok, tc.SessionToken)
			}
			if tc.BodyFormat == "" && len(got.Body) != 0 {
				t.Errorf("a body was sent: %q", got.Body)
			}
		})
	}
}

// TestSigV4SignsTheExactBody: the payload hash is of the bytes sent, so a body the server
// receives changed in transit would not match; two bodies give two signatures, and the headers
// the signature owns cannot be declared.
func TestSigV4SignsTheExactBody(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, answerJSON(http.StatusOK, `{}`))
	base, _ := url.Parse(gw.URL + "/")
	cfg := Config{ID: "aws", Source: specAdapter, RequestHeaders: []string{"content-type"}, BaseURL: base,
		Clock: &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
		Auth:  Auth{Kind: AuthAWSSigV4, Service: "sns", Region: "eu-west-1", AccessKeyID: "AKID", SecretAccessKey: "secret"}}
	p := newTestProvider(t, cfg)
	for _, body := range []string{"Action=Publish&Message=a", "Action=Publish&Message=b"} {
		spec := map[string]any{"target": "./", "bodyFormat": "text", "body": body}
		if o := p.Send(context.Background(), specOutbound(t, spec)); o.Class != engine.OutcomeAccepted {
			t.Fatalf("send: %+v", o)
		}
	}
	reqs := gw.requests()
	a, b := reqs[0].Header.Get("Authorization"), reqs[1].Header.Get("Authorization")
	if a == b || !strings.Contains(a, "/20260301/eu-west-1/sns/aws4_request") || string(reqs[0].Body) != "Action=Publish&Message=a" {
		t.Fatalf("signatures %q and %q, body %q", a, b, reqs[0].Body)
	}
	for _, owned := range []string{"x-amz-date", "x-amz-security-token", "authorization"} {
		bad := cfg
		bad.RequestHeaders = []string{owned}
		if p, err := New(bad); err == nil {
			_ = p.Close()
			t.Errorf("declared header %s accepted", owned)
		}
	}
	for _, auth := range []Auth{{Kind: AuthAWSSigV4, Region: "r", AccessKeyID: "a", SecretAccessKey: "s"},
		{Kind: AuthAWSSigV4, Service: "s", Region: "r", SecretAccessKey: "s"}} {
		bad := cfg
		bad.Auth = auth
		if p, err := New(bad); err == nil {
			_ = p.Close()
			t.Errorf("%+v accepted", auth)
		}
	}
}
