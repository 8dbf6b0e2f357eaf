package wiring

import (
	"fmt"
	"log/slog"
	"net/url"

	"switchboard/engine"
	"switchboard/engine/runtime"
	"switchboard/packages"
	"switchboard/providers/httpgw"
)

// Options are what a command adds to the runtime file's values: the clock, the log and the
// metrics hook. Zero members are allowed (the system clock, a discarding logger, no observer).
type Options struct {
	Clock    engine.Clock
	Logger   *slog.Logger
	Observer func(providerID, event, class string)
	// InboundChannel is the channel of the inbound messages the gateway posts (InboundChannel
	// derives it from the package); empty reads sms.
	InboundChannel engine.Channel
}

// InboundChannel is the channel of the inbound messages an http provider receives: the channel
// of the package's first sender profile that sends through it, sms when none does.
func InboundChannel(pkg *packages.Package, provider string) engine.Channel {
	for _, sp := range pkg.SenderProfiles {
		if sp.Provider == provider {
			return engine.Channel(sp.Channel)
		}
	}
	return engine.ChannelSMS
}

// HTTPConfig builds the httpgw.Config of the http provider decl from the package's adapter and
// the runtime file's connection of the same id: base URL, timeout, response cap, the lower of
// the two concurrency limits and rates, the credential, the callback verifier, the sandbox
// limits, the callback URL and the parameters an adapter may read. It fails when decl is not an
// http provider with an adapter, or the runtime file does not connect it as one (CheckPackage
// reports those first, with lines).
func HTTPConfig(rt *runtime.Runtime, decl *packages.Provider, o Options) (httpgw.Config, error) {
	if decl == nil || decl.Kind != runtime.KindHTTP || decl.Adapter == nil {
		return httpgw.Config{}, fmt.Errorf("wiring: provider is not an http provider with an adapter")
	}
	rc := rt.Providers[decl.ID]
	if rc == nil || rc.HTTP == nil {
		return httpgw.Config{}, fmt.Errorf("wiring: the runtime file connects no http provider %s", decl.ID)
	}
	h, a := rc.HTTP, decl.Adapter
	cfg := httpgw.Config{
		ID: decl.ID, ScriptName: a.ScriptPath, Source: a.Source, Method: a.Method,
		RequestHeaders: a.RequestHeaders, ResponseHeaders: a.ResponseHeaders,
		ReceiptsCallback: a.TakesCallbacks(), ConcurrencyLimit: a.ConcurrencyLimit,
		RatePerSecond: a.RatePerSecond, IdempotentSubmit: decl.IdempotentSubmit,
		BaseURL: h.BaseURL, Timeout: h.Timeout, MaximumResponseBytes: h.MaximumResponseBytes,
		Auth:           httpAuth(h.Authentication),
		Verifier:       verifierConfig(h.CallbackVerifier),
		Limits:         SandboxLimits(rt.Sandbox),
		CallbackURL:    rt.CallbackURL(decl.ID),
		Parameters:     h.Parameters,
		HTTP2:          h.HTTP2,
		TrustedCAFile:  h.TrustedCAFile,
		InboundChannel: o.InboundChannel,
		Clock:          o.Clock,
		Logger:         o.Logger,
	}
	if o.Observer != nil {
		id := decl.ID
		cfg.Observer = func(event, class string) { o.Observer(id, event, class) }
	}
	if h.ConcurrencyLimit > 0 && (cfg.ConcurrencyLimit == 0 || h.ConcurrencyLimit < cfg.ConcurrencyLimit) {
		cfg.ConcurrencyLimit = h.ConcurrencyLimit
	}
	if h.RatePerSecond > 0 && (cfg.RatePerSecond == 0 || h.RatePerSecond < cfg.RatePerSecond) {
		cfg.RatePerSecond = h.RatePerSecond
	}
	return cfg, nil
}

// NewHTTP builds the provider HTTPConfig describes.
func NewHTTP(rt *runtime.Runtime, decl *packages.Provider, o Options) (*httpgw.Provider, error) {
	cfg, err := HTTPConfig(rt, decl, o)
	if err != nil {
		return nil, err
	}
	return httpgw.New(cfg)
}

// httpAuth maps the runtime's authentication to httpgw's.
func httpAuth(a runtime.HTTPAuth) httpgw.Auth {
	return httpgw.Auth{
		Kind: a.Kind, Username: string(a.Username.Value()), Password: string(a.Password.Value()),
		Scheme: a.Scheme, Header: a.Header, Token: string(a.Token.Value()), Prefix: a.Prefix,
		TokenURL: urlString(a.TokenURL), ClientID: a.ClientID,
		ClientSecret: string(a.ClientSecret.Value()), Scopes: a.Scopes,
		Service: a.Service, Region: a.Region, AccessKeyID: string(a.AccessKeyID.Value()),
		SecretAccessKey: string(a.SecretAccessKey.Value()), SessionToken: string(a.SessionToken.Value()),
		ServiceAccount: a.ServiceAccount.Value(), Key: a.Key.Value(), KeyID: a.KeyID, TeamID: a.TeamID,
	}
}

// verifierConfig maps the runtime's callback verifier to httpgw's; nil stays nil.
func verifierConfig(v *runtime.Verifier) *httpgw.VerifierConfig {
	if v == nil {
		return nil
	}
	return &httpgw.VerifierConfig{
		Kind: v.Kind, Header: v.Header, Encoding: v.Encoding, URL: v.URL,
		Secret: v.Secret.Value(), Token: string(v.Token.Value()),
		SignatureMethod: v.SignatureMethod, PublicKey: v.PublicKey,
		SignatureHeader: v.SignatureHeader, TimestampHeader: v.TimestampHeader,
		Username: string(v.Username.Value()), Password: string(v.Password.Value()),
	}
}

func urlString(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.String()
}
