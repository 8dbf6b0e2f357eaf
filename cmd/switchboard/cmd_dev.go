package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"switchboard/engine/auth"
	"switchboard/packages"
	"switchboard/providers/peer"
	"switchboard/store"
)

// Dev token issuer settings: the dev stack trusts only its own signing key, through jwksFile.
const (
	devIssuer   = "https://dev-issuer.switchboard.invalid"
	devAudience = "switchboard"
)

func (a *app) devCommand() *cobra.Command {
	var opts devOptions
	cmd := &cobra.Command{
		Use:   "dev [DIR] [--port N] [--real PROVIDER]…",
		Short: "Run a local stack on a package with stand-in providers (golden cases or a mock gateway, SMTP sink, …)",
		Long: `dev writes DIR/.switchboard/dev/ (a runtime file, keys, a SQLite database, a dev token
issuer), starts local stand-ins, lists their addresses in DIR/.switchboard/dev/session.json and
serves the package on 127.0.0.1. Ctrl-C stops it all.

Each http provider is answered one way, named at start and in session.json (providers.ID.mode):

    cases  its adapter has golden cases (providers/ID/testdata/*.txtar): a stand-in answers each
           request as the first case whose first send has the request's method and path (else the
           first case with a send), then posts the callbacks that follow that send in the case,
           signed for the dev runtime's verifier
    mock   no golden cases: the mock gateway, which speaks the quickstart's protocol only (another
           adapter's requests get 404 from it, and fail with http.404)
    real   --real ID: the provider's entry of providers/ID/runtime-snippet.yaml, with its real
           baseUrl and credentials; each secret:file/NAME of it is read from the environment
           variable NAME in upper case with every other character than a letter or digit as _
           (twilio-auth-token: TWILIO_AUTH_TOKEN), secret:env/NAME and ${NAME} from the environment

An smtp provider relays to an SMTP sink that keeps each mail as an .eml file (DKIM signed and
checked); a peer provider sends to a companion peer with its own inbox; a local receiver takes
every event. docs/adapters.md ("In switchboard dev") says more of the golden cases' stand-in.`,
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
			return a.dev(cmd.Context(), dir, opts)
		},
	}
	cmd.Flags().IntVar(&opts.port, "port", 8107, "API port on 127.0.0.1 (0 picks a free one)")
	cmd.Flags().StringArrayVar(&opts.real, "real", nil, "send this http provider to its real gateway "+
		"(providers/PROVIDER/runtime-snippet.yaml, secrets from the environment); repeatable")
	cmd.AddCommand(a.devTokenCommand())
	return cmd
}

// devOptions are dev's flags.
type devOptions struct {
	port int
	// real names the http providers sent to their real gateway (--real).
	real []string
}

// dev writes DIR/.switchboard/dev/, starts the stand-ins, writes session.json and serves.
func (a *app) dev(ctx context.Context, dir string, opts devOptions) error {
	pkg, err := loadPackage(dir)
	if err != nil {
		return err
	}
	layout, err := prepareDevDir(dir)
	if err != nil {
		return err
	}
	// One dev per folder: a second would rewrite the runtime file and session of the first
	// before serve refused it the database.
	if err := store.CheckOwner(layout.dbPath); errors.Is(err, store.ErrInUse) {
		return databaseInUse(layout.dbPath, err)
	} else if err != nil {
		return environment("database.unreachable", layout.dbPath, err)
	}
	apiLn, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.port)))
	if err != nil {
		return environment("listener.failed", "--port", err)
	}
	metricsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = apiLn.Close()
		return environment("listener.failed", "metrics", err)
	}
	served := false
	defer func() {
		if !served { // serve owns the listeners once called
			_ = apiLn.Close()
			_ = metricsLn.Close()
		}
	}()
	apiURL := "http://" + apiLn.Addr().String()
	log := newLogger(a.stderr, a.getenv)
	session := devSession{
		API: apiURL, Metrics: "http://" + metricsLn.Addr().String() + "/metrics", metricsAddr: metricsLn.Addr().String(),
		Runtime: layout.runtimePath, Database: layout.dbPath,
		Issuer: devIssuer, Audience: devAudience, Clients: clientsOf(pkg), Gateways: map[string]string{},
	}
	issuerURL, stopIssuer, err := startDevSignIn(layout, pkg, apiURL)
	if err != nil {
		return err
	}
	defer stopIssuer()
	session.Issuer = issuerURL
	if consoleClient(pkg) != "" {
		session.Console = apiURL + "/console/"
	}
	gateways, err := startDevHTTP(pkg, layout, apiURL, opts.real, a.getenv, log)
	if err != nil {
		return err
	}
	defer gateways.close()
	session.Providers, session.httpEntries, session.secretsEnv = gateways.providers, gateways.entries, gateways.env
	for _, p := range pkg.Providers {
		if dp, ok := gateways.providers[p.ID]; ok && dp.Mode == devModeMock {
			session.Gateways[p.ID] = strings.TrimSuffix(dp.URL, "/")
			if session.Gateway == "" {
				session.Gateway = session.Gateways[p.ID]
			}
		}
	}
	if hasKind(pkg, "smtp") {
		sink, err := startSMTPSink(layout, pkg, log.With("component", "smtp-sink"))
		if err != nil {
			return err
		}
		defer sink.sink.Close()
		session.SMTP, session.MailDir, session.dkimDomain = sink.addr, sink.sink.Dir(), sink.domain
	}
	if hasKind(pkg, "peer") {
		comp, err := startCompanion(ctx, layout, peer.DefaultProtocol, companionTransport{}, log.With("component", "companion-peer"))
		if err != nil {
			return err
		}
		defer comp.close()
		session.Companion = &devPeer{PeerID: comp.id, Addrs: comp.addrs, Database: comp.db}
	}
	rcv, err := startDevReceiver(layout, log.With("component", "webhook-receiver"))
	if err != nil {
		return err
	}
	defer rcv.Close()
	session.WebhookReceiver = &devReceiver{URL: rcv.url, Events: rcv.url + "events", Endpoint: devWebhookEndpoint}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(layout.root, "session.json"), session); err != nil {
		return environment("dev.unwritable", layout.root, err)
	}
	writeDevBanner(a.stderr, invokedAs(), dir, pkg, session, gateways.lines)
	served = true
	return a.serve(ctx, layout.runtimePath, apiLn, metricsLn)
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
