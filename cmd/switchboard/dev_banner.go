package main

import (
	"fmt"
	"io"
	"os"

	"switchboard/packages"
)

// invokedAs is the binary's name as the user typed it (./bin/switchboard, switchboard), for
// the commands the banner suggests.
func invokedAs() string {
	if len(os.Args) > 0 && os.Args[0] != "" {
		return os.Args[0]
	}
	return "switchboard"
}

// writeDevBanner prints where the dev stack listens, how each http provider is answered (one
// line each) and how to get a token.
func writeDevBanner(w io.Writer, name, dir string, pkg *packages.Package, s devSession, providers []string) {
	fmt.Fprintf(w, "%s dev: API %s, metrics %s, events to %s\n", name, s.API, s.Metrics, s.WebhookReceiver.URL)
	for _, line := range providers {
		fmt.Fprintf(w, "  provider %s\n", line)
	}
	fmt.Fprintf(w, "get a token: %s dev token %s %s\n", name, firstSenderClient(pkg), dir)
	if s.Console != "" {
		fmt.Fprintf(w, "operator console: %s\n", s.Console)
	}
}
