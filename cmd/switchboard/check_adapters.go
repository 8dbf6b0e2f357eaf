package main

import (
	"path/filepath"

	"switchboard/cmd/wiring"
	"switchboard/engine/runtime"
	"switchboard/packages"
	"switchboard/providers/httpgw"
	"switchboard/providers/peer"
	"switchboard/scripting"
)

// checkAdapters compiles every adapter of the package as serve would and returns one
// provider.invalid diagnostic per refused script (exit 1). With a runtime file, each http
// provider is built in full from it (credential, verifier, limits, callback URL, parameters)
// and closed again; without one, each adapter is compiled under the sandbox's default limits.
func checkAdapters(rt *runtime.Runtime, pkg *packages.Package) error {
	limits := scripting.Limits{}
	if rt != nil {
		limits = wiring.SandboxLimits(rt.Sandbox)
	}
	var diags []diagnostic
	for _, decl := range pkg.Providers {
		a := decl.Adapter
		if a == nil {
			continue
		}
		var err error
		switch {
		case decl.Kind == "http" && rt != nil:
			var p *httpgw.Provider
			if p, err = wiring.NewHTTP(rt, decl, wiring.Options{}); err == nil {
				_ = p.Close()
			}
		case decl.Kind == "http":
			err = httpgw.CompileAdapter(a.ScriptPath, a.Source, a.Receipts == "callback", limits)
		case decl.Kind == "peer":
			err = peer.CompileAdapter(a.ScriptPath, a.Source, limits)
		}
		if err != nil {
			diags = append(diags, diagnostic{Code: "provider.invalid", Path: filepath.ToSlash(a.ScriptPath), Message: err.Error()})
		}
	}
	if len(diags) > 0 {
		return &cliError{exit: exitRefused, diags: diags}
	}
	return nil
}

// providerReport is one provider in check's output.
type providerReport struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Adapter string `json:"adapter,omitempty"`
}

// senderReport is one sender profile in check's output.
type senderReport struct {
	ID                string   `json:"id"`
	Channel           string   `json:"channel"`
	Provider          string   `json:"provider"`
	FallbackProviders []string `json:"fallbackProviders"`
}

// providersAndSenders lists the package's providers and sender profiles for check.
func providersAndSenders(pkg *packages.Package) ([]providerReport, []senderReport) {
	providers := make([]providerReport, 0, len(pkg.Providers))
	for _, p := range pkg.Providers {
		r := providerReport{ID: p.ID, Kind: p.Kind}
		if p.Adapter != nil {
			r.Adapter = filepath.ToSlash(p.Adapter.ScriptPath)
		}
		providers = append(providers, r)
	}
	senders := make([]senderReport, 0, len(pkg.SenderProfiles))
	for _, sp := range pkg.SenderProfiles {
		senders = append(senders, senderReport{ID: sp.ID, Channel: sp.Channel, Provider: sp.Provider,
			FallbackProviders: append([]string{}, sp.FallbackProviders...)})
	}
	return providers, senders
}
