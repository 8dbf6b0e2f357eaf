package main

import (
	"fmt"
	"log/slog"
	"testing"

	"switchboard/packages"
	"switchboard/providers/httpgw/mockgw"
)

// mockedQuickstart is the dev folder of a quickstart copy, the API address a serve on it is to
// listen on, and a mock gateway that posts its receipts to that address.
type mockedQuickstart struct {
	pkg    *packages.Package
	layout devPaths
	api    string // http://127.0.0.1:PORT, free a moment ago
	gw     *mockgw.Gateway
	gwURL  string
}

// newMockedQuickstart loads the package in dir, lays out its dev folder and starts the mock
// gateway with opts (its callback URL and secret filled in; no logs unless opts.Logger is
// set). The gateway stops when the test ends.
func newMockedQuickstart(t testing.TB, dir string, opts mockgw.Options) *mockedQuickstart {
	t.Helper()
	pkg, err := loadPackage(dir)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := prepareDevDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	q := &mockedQuickstart{pkg: pkg, layout: layout, api: fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}
	opts.CallbackURL, opts.CallbackSecret = q.api+"/v1/provider-callbacks/sms-gateway", layout.callbackSecret
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	q.gw = mockgw.New(opts)
	if q.gwURL, err = q.gw.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.gw.Close() })
	return q
}
