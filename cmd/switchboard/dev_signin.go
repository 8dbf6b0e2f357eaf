package main

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"switchboard/engine/auth"
	"switchboard/packages"
)

// startDevSignIn serves the dev issuer's sign-in endpoints (discovery, sign-in page, token,
// JWK Set) on a listener of its own, as a real issuer is another origin than the console. The
// issuer's identifier is that listener's URL, so tokens of `dev token` and of the console
// carry the same iss. The sign-in page offers every client of the package.
//
// The address is kept in the dev folder and taken again at the next start: the issuer is part
// of every caller's identity (its pseudonym), so a sender still sees the messages it submitted
// before a restart. Only when that port is taken does the issuer, and with it every caller,
// change.
func startDevSignIn(l devPaths, pkg *packages.Package, apiURL string) (string, func(), error) {
	keep := filepath.Join(l.root, "issuer-address")
	var ln net.Listener
	if prev, err := os.ReadFile(keep); err == nil {
		ln, _ = net.Listen("tcp", strings.TrimSpace(string(prev)))
	}
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return "", nil, environment("listener.failed", "dev issuer", err)
		}
	}
	if err := os.WriteFile(keep, []byte(ln.Addr().String()+"\n"), 0o600); err != nil {
		_ = ln.Close()
		return "", nil, environment("dev.unwritable", keep, err)
	}
	issuerURL := "http://" + ln.Addr().String()
	iss, err := auth.LoadDevIssuer(l.issuerKeyPath, issuerURL, devAudience)
	if err != nil {
		_ = ln.Close()
		return "", nil, environment("dev.uninitialised", l.issuerKeyPath, err)
	}
	var clients []auth.DevClient
	for _, role := range []string{"operator", "sender", "receiver"} {
		for _, p := range pkg.AccessProfiles {
			if p.Role != role {
				continue
			}
			for _, c := range p.Clients {
				clients = append(clients, auth.DevClient{ID: c, Role: p.Role, Scopes: p.RequiredScopes})
			}
		}
	}
	srv := &http.Server{Handler: iss.SignIn(auth.DevSignInOptions{Clients: clients,
		RedirectURIs: []string{apiURL + "/console/callback"}}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return issuerURL, func() { _ = srv.Close() }, nil
}

// consoleClient is the client the dev console signs in as: the package's first operator
// client, or "" when it has none (then dev serves no console).
func consoleClient(pkg *packages.Package) string {
	for _, p := range pkg.AccessProfiles {
		if p.Role == "operator" && len(p.Clients) > 0 {
			return p.Clients[0]
		}
	}
	return ""
}

// devIssuerOf is the issuer the dev stack of dir last ran with (session.json), so that
// `dev token` mints what that stack accepts; devIssuer before any run wrote one.
func devIssuerOf(dir string) string {
	b, err := os.ReadFile(filepath.Join(devLayout(dir).root, "session.json"))
	var s devSession
	if errors.Join(err, json.Unmarshal(b, &s)) != nil || s.Issuer == "" {
		return devIssuer
	}
	return s.Issuer
}
