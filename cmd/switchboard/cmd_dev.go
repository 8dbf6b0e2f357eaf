package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"switchboard/engine/auth"
	"switchboard/packages"
	"switchboard/providers/httpgw/mockgw"
	"switchboard/providers/peer"
)

// Dev token issuer settings: the dev stack trusts only its own signing key, through jwksFile.
const (
	devIssuer   = "https://dev-issuer.switchboard.invalid"
	devAudience = "switchboard"
)

func (a *app) devCommand() *cobra.Command {
	var port int
	cmd := &cobra.Command{
		Use:   "dev [DIR] [--port N]",
		Short: "Run a local stack on a package with stand-in providers (mock SMS gateway, …)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError(fmt.Errorf("dev takes at most one folder"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return a.dev(cmd.Context(), dir, port)
		},
	}
	cmd.Flags().IntVar(&port, "port", 8107, "API port on 127.0.0.1 (0 picks a free one)")
	cmd.AddCommand(a.devTokenCommand())
	return cmd
}

// dev writes DIR/.switchboard/dev/, starts the stand-ins, writes session.json and serves.
func (a *app) dev(ctx context.Context, dir string, port int) error {
	pkg, err := loadPackage(dir)
	if err != nil {
		return err
	}
	layout, err := prepareDevDir(dir)
	if err != nil {
		return err
	}
	apiLn, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return environment("listener.failed", "--port", err)
	}
	apiURL := "http://" + apiLn.Addr().String()
	log := newLogger(a.stderr, a.getenv)
	session := devSession{
		API: apiURL, Runtime: layout.runtimePath, Database: layout.dbPath,
		Issuer: devIssuer, Audience: devAudience, Clients: clientsOf(pkg), Gateways: map[string]string{},
	}
	issuerURL, stopIssuer, err := startDevSignIn(layout, pkg, apiURL)
	if err != nil {
		_ = apiLn.Close()
		return err
	}
	defer stopIssuer()
	session.Issuer = issuerURL
	if consoleClient(pkg) != "" {
		session.Console = apiURL + "/console/"
	}
	for _, p := range pkg.Providers {
		if p.Kind != "http" {
			continue
		}
		opts := mockgw.Options{Latency: 0, ReceiptDelay: 200 * time.Millisecond,
			Logger: log.With("component", "mock-gateway", "provider", p.ID)}
		if p.Adapter.TakesCallbacks() { // without callbacks the gateway posts no reports
			opts.CallbackURL, opts.CallbackSecret = apiURL+"/v1/provider-callbacks/"+p.ID, layout.callbackSecret
		}
		gw := mockgw.New(opts)
		gwURL, err := gw.Start("127.0.0.1:0")
		if err != nil {
			_ = apiLn.Close()
			return environment("listener.failed", "mock gateway", err)
		}
		defer gw.Close()
		session.Gateways[p.ID] = strings.TrimSuffix(gwURL, "/")
		if session.Gateway == "" {
			session.Gateway = session.Gateways[p.ID]
		}
	}
	if hasKind(pkg, "smtp") {
		sink, err := startSMTPSink(layout, pkg, log.With("component", "smtp-sink"))
		if err != nil {
			_ = apiLn.Close()
			return err
		}
		defer sink.sink.Close()
		session.SMTP, session.MailDir, session.dkimDomain = sink.addr, sink.sink.Dir(), sink.domain
	}
	if hasKind(pkg, "peer") {
		comp, err := startCompanion(ctx, layout, peer.DefaultProtocol, log.With("component", "companion-peer"))
		if err != nil {
			_ = apiLn.Close()
			return err
		}
		defer comp.close()
		session.Companion = &devPeer{PeerID: comp.id, Addrs: comp.addrs, Database: comp.db}
	}
	rcv, err := startDevReceiver(layout, log.With("component", "webhook-receiver"))
	if err != nil {
		_ = apiLn.Close()
		return err
	}
	defer rcv.Close()
	session.WebhookReceiver = &devReceiver{URL: rcv.url, Events: rcv.url + "events", Endpoint: devWebhookEndpoint}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		_ = apiLn.Close()
		return err
	}
	if err := writeJSONFile(filepath.Join(layout.root, "session.json"), session); err != nil {
		_ = apiLn.Close()
		return environment("dev.unwritable", layout.root, err)
	}
	fmt.Fprintf(a.stderr, "switchboard dev: API %s, mock gateway %s, events to %s\nget a token: switchboard dev token %s %s\n",
		apiURL, session.Gateway, session.WebhookReceiver.URL, firstSenderClient(pkg), dir)
	if session.Console != "" {
		fmt.Fprintf(a.stderr, "operator console: %s\n", session.Console)
	}
	return a.serve(ctx, layout.runtimePath, apiLn)
}

// devTokenCommand is `dev token CLIENT [DIR]`.
func (a *app) devTokenCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "token CLIENT [DIR]",
		Short: "Print a one-hour access token for a client named by an access profile",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageError(fmt.Errorf("dev token takes CLIENT and an optional DIR"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 2 {
				dir = args[1]
			}
			pkg, err := loadPackage(dir)
			if err != nil {
				return err
			}
			profile := pkg.ProfileForClient(args[0])
			if profile == nil {
				return refused("client.unknown", args[0], "no access profile names this client")
			}
			issuer, err := auth.LoadDevIssuer(devLayout(dir).issuerKeyPath, devIssuerOf(dir), devAudience)
			if err != nil {
				return environment("dev.uninitialised", devLayout(dir).root, fmt.Errorf("run `switchboard dev %s` once first: %w", dir, err))
			}
			token, err := issuer.Mint(args[0], profile.RequiredScopes, time.Hour, time.Now())
			if err != nil {
				return fmt.Errorf("mint token: %w", err)
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "client": args[0], "token": token, "expiresIn": 3600})
			}
			fmt.Fprintln(a.stdout, token)
			return nil
		},
	}
}

// hasKind reports whether the package declares a provider of a kind.
func hasKind(pkg *packages.Package, kind string) bool {
	for _, p := range pkg.Providers {
		if p.Kind == kind {
			return true
		}
	}
	return false
}
