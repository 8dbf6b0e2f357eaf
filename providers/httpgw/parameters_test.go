package httpgw

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"switchboard/engine"
)

// profileEcho sends the profile argument as the request body.
const profileEcho = `function prepare(message, profile) { return {target: "p", body: profile}; }
function receipt(r) { return null; }`

func TestProfileCarriesCallbackURLAndParameters(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, answerJSON(201, `{}`))
	cfg := baseConfig(t, gw.URL+"/", profileEcho)
	cfg.CallbackURL = "https://sb.example/v1/provider-callbacks/sms-gateway"
	cfg.Parameters = map[string]string{"accountId": "AC123", "region": "eu-west-1"}
	p := newTestProvider(t, cfg)
	if o := p.Send(context.Background(), smsOutbound()); o.Class != engine.OutcomeAccepted {
		t.Fatalf("send: %+v", o)
	}
	var got map[string]any
	if err := json.Unmarshal(gw.requests()[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	params, _ := got["parameters"].(map[string]any)
	if got["callbackUrl"] != cfg.CallbackURL || len(params) != 2 || params["accountId"] != "AC123" || params["region"] != "eu-west-1" {
		t.Fatalf("profile = %v", got)
	}

	bare := newTestProvider(t, baseConfig(t, gw.URL+"/", profileEcho))
	bare.Send(context.Background(), smsOutbound())
	got = nil
	if err := json.Unmarshal(gw.requests()[1].Body, &got); err != nil {
		t.Fatal(err)
	}
	if v, ok := got["callbackUrl"]; !ok || v != nil {
		t.Errorf("callbackUrl without one = %v (present %t), want null", v, ok)
	}
	if params, ok := got["parameters"].(map[string]any); !ok || len(params) != 0 {
		t.Errorf("parameters without any = %v, want {}", got["parameters"])
	}
}

func TestParametersRefused(t *testing.T) {
	t.Parallel()
	many := map[string]string{}
	for i := range MaxParameters + 1 {
		many["p"+strings.Repeat("x", i)] = "v"
	}
	for name, params := range map[string]map[string]string{
		"too many":       many,
		"bad name":       {"account-id": "x"},
		"leading digit":  {"1a": "x"},
		"value too long": {"a": strings.Repeat("é", MaxParameterChars+1)},
	} {
		cfg := baseConfig(t, "http://127.0.0.1:1/", profileEcho)
		cfg.Parameters = params
		if p, err := New(cfg); err == nil {
			_ = p.Close()
			t.Errorf("%s: accepted", name)
		}
	}
	cfg := baseConfig(t, "http://127.0.0.1:1/", profileEcho)
	cfg.Parameters = map[string]string{"a": strings.Repeat("é", MaxParameterChars)}
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("256 characters refused: %v", err)
	}
	_ = p.Close()
}
