package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"switchboard/engine"
	"switchboard/engine/admission"
	"switchboard/engine/api"
	"switchboard/engine/auth"
	"switchboard/engine/runtime"
	"switchboard/engine/webhooks"
	"switchboard/packages"
	"switchboard/store"
)

// stack is everything serve runs, wired from one runtime file.
type stack struct {
	rt         *runtime.Runtime
	pkg        *packages.Package
	log        *slog.Logger
	clock      engine.Clock
	store      *store.Store
	providers  map[string]engine.Provider
	dispatcher *engine.Dispatcher
	api        *api.Server
	metrics    *metrics
	operations *engine.Operations
	// webhooks delivers the outbox's events (nil without endpoints).
	webhooks *webhooks.Worker
}

// loadRuntime loads the runtime file and its package, exactly as serve and check do.
func loadRuntime(path string, getenv func(string) string) (*runtime.Runtime, *packages.Package, error) {
	if path == "" {
		return nil, nil, usageError(errors.New("give the runtime file with --config or SWITCHBOARD_CONFIG"))
	}
	rt, err := runtime.Load(path, getenv)
	if err != nil {
		return nil, nil, err
	}
	pkg, err := loadPackage(rt.Package.Root)
	if err != nil {
		return nil, nil, err
	}
	if err := rt.CheckPackage(pkg); err != nil {
		return nil, nil, err
	}
	return rt, pkg, nil
}

// openStore opens the runtime's database; migrate is true only for serve (and dev), which also
// owns an SQLite database alone: a second one is refused with database.in-use.
// pkg gives the webhook subscriptions the store writes events for (nil: none); eventsWritten,
// when set, is told after each commit that wrote some.
func openStore(ctx context.Context, rt *runtime.Runtime, pkg *packages.Package, clock engine.Clock, log *slog.Logger, migrate bool,
	eventsWritten func()) (*store.Store, []byte, error) {
	chainKey, pseudoKey, err := auditKeys(rt.Audit.Key.Value())
	if err != nil {
		return nil, nil, refused("runtime.invalid", rt.Path, err.Error())
	}
	st, err := store.Open(ctx, store.Config{
		Driver: rt.Database.Driver, Path: rt.Database.Path, URL: string(rt.Database.URL.Value()),
		Synchronous: rt.Database.Synchronous,
		AuditKey:    chainKey, Clock: clock, Migrate: migrate, Owner: migrate, Logger: log,
		MaxPayloadBytes: rt.Dispatch.MaxPayloadBytes,
		Subscriptions:   subscriptions(rt, pkg), EventsWritten: eventsWritten,
	})
	if err != nil {
		where := rt.Database.Path
		if errors.Is(err, store.ErrInUse) {
			return nil, nil, databaseInUse(where, err)
		}
		if rt.Database.Driver == "postgres" {
			where = rt.Database.URL.Ref() // the reference, never the URL: it may hold a password
		}
		return nil, nil, environment("database.unreachable", where, err)
	}
	return st, pseudoKey, nil
}

// databaseInUse is serve's refusal of an SQLite database another process owns (store.ErrInUse).
func databaseInUse(path string, err error) error {
	return environment("database.in-use", path, fmt.Errorf("%w; one process owns an SQLite database: "+
		"stop the other serve or dev first, or run several instances on PostgreSQL (docs/operations.md, \"Scale-out on PostgreSQL\")", err))
}

// buildStack wires store, providers, dispatcher and API from a loaded runtime; giveWay runs the
// dispatcher with the give-way admission policy (false only for `bench --admission off`).
func buildStack(ctx context.Context, rt *runtime.Runtime, pkg *packages.Package, log *slog.Logger, clock engine.Clock, giveWay bool) (*stack, error) {
	s := &stack{rt: rt, pkg: pkg, log: log, clock: clock, metrics: newMetrics()}
	st, pseudoKey, err := openStore(ctx, rt, pkg, s.clock, log, true, func() {
		if s.webhooks != nil {
			s.webhooks.Wake()
		}
	})
	if err != nil {
		return nil, err
	}
	s.store = st
	verifier, err := auth.NewVerifier(auth.Config{
		Issuer: rt.Authentication.OIDC.Issuer, Audience: rt.Authentication.OIDC.Audience,
		JWKSURI: rt.Authentication.OIDC.JWKSURI, JWKSFile: rt.Authentication.OIDC.JWKSFile,
		AllowedClients: rt.Authentication.OIDC.AllowedClients, TokenTypes: rt.Authentication.OIDC.TokenTypes,
		ScopeClaim: rt.Authentication.ScopeClaim, ClientClaim: rt.Authentication.ClientClaim,
	}, s.clock)
	if err != nil {
		s.close()
		return nil, refused("runtime.invalid", rt.Path, "authentication: "+err.Error())
	}
	hooks := peerHooks{inbox: st, connected: func(peerID string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if n, err := st.MakeRecipientDue(ctx, peerID, s.clock.Now()); err != nil {
			log.Warn("making a connected peer's messages due", "err", err)
		} else if n > 0 && s.dispatcher != nil {
			s.dispatcher.Wake()
		}
	}}
	s.providers, err = buildProviders(rt, pkg, s.clock, log, s.metrics, hooks)
	if err != nil {
		s.close()
		return nil, err
	}
	if len(rt.Webhooks) > 0 {
		s.webhooks = webhooks.New(webhooks.Config{Store: st, Endpoints: webhookEndpoints(rt), Clock: s.clock,
			Logger: log.With("component", "webhooks"), Observe: s.metrics.observeEvent,
			PollInterval: rt.Dispatch.PollInterval()})
	}
	intake := &engine.Intake{}
	var admit engine.Admission // none: the dispatcher is never held back
	if giveWay {
		// Acceptance goes first in a burst: docs/operations.md, "Bursts and admission control".
		admit = admission.NewGiveWay(admission.DefaultConfig(), intake.Started)
	}
	figures := engine.NewFigures(s.clock, 10*time.Second, 90)
	s.dispatcher = engine.NewDispatcher(engine.DispatcherConfig{
		Package: pkg, Store: st, Providers: s.providers, Clock: s.clock, Logger: log,
		Concurrency: rt.Dispatch.Concurrency, BatchSize: rt.Dispatch.BatchSize,
		MaxPayloadBytes: rt.Dispatch.MaxPayloadBytes,
		PollInterval:    time.Duration(rt.Dispatch.PollIntervalMilliseconds) * time.Millisecond,
		LeaseFor:        time.Duration(rt.Dispatch.LeaseSeconds) * time.Second,
		Observe: func(provider string, class engine.OutcomeClass, d time.Duration) {
			s.metrics.observeAttempt(provider, class, d)
			figures.Attempt(provider, class, d)
		},
		Reconciler: st.ReceiptReconciler(),
		Admission:  admit,
	})
	submitter := engine.NewSubmitter(engine.SubmitterConfig{
		Package: pkg, Store: st, Clock: s.clock,
		PayloadRetention: time.Duration(rt.Retention.PayloadDays) * 24 * time.Hour,
		ReceiptWindow:    time.Duration(rt.Retention.SubmissionReceiptDays) * 24 * time.Hour,
		OnAccepted:       func() { s.dispatcher.Wake(); figures.Accepted(); s.metrics.accepted.Inc() },
		Intake:           intake,
	})
	if s.operations, err = newOperations(st, pkg, s.clock, log); err != nil {
		s.close()
		return nil, err
	}
	receipts := map[string]engine.ReceiptHandler{}
	for id, p := range s.providers {
		if h, ok := p.(engine.ReceiptHandler); ok {
			receipts[id] = h
		}
	}
	s.api = api.New(api.Config{
		Package: pkg, Store: st, Submitter: submitter, Auth: verifier,
		Limiter: auth.NewLimiter(s.clock), PseudonymKey: pseudoKey, Receipts: receipts,
		Clock: s.clock, Logger: log, Ready: st.Ready, Observe: s.metrics.observeRequest,
		Inbox: st, GatewayInbox: st, Journal: st, Operations: s.operations, Figures: figures,
		VerifyJournal: observedJournalCheck(verifyJournal(st), s.metrics, s.clock),
		Console:       consoleConfig(rt, pkg), PublicURL: rt.PublicURL, TrustedProxies: rt.Listen.TrustedProxies,
		SLO: api.SLOSource{Figures: s.dispatcher.Figures, BatchSize: rt.Dispatch.BatchSize,
			MaxPayloadBytes: rt.Dispatch.MaxPayloadBytes, Concurrency: rt.Dispatch.Concurrency},
	})
	return s, nil
}

// run serves until ctx ends, then stops gracefully: stop accepting, stop claiming, finish
// in-flight sends, close providers and the store.
func (s *stack) run(ctx context.Context, apiLn, metricsLn net.Listener) error {
	defer s.close()
	defer s.startRetention(ctx)() // the hourly sweep; stopped before the store closes
	srv := api.NewHTTPServer(s.api.Handler(), api.DefaultLimits())
	errs := make(chan error, 3)
	go func() { errs <- srv.Serve(apiLn) }()
	var msrv *api.HTTPServer
	if metricsLn != nil {
		msrv = api.NewHTTPServer(s.metrics.handler(s), api.DefaultLimits())
		go func() { errs <- msrv.Serve(metricsLn) }()
	}
	for _, p := range s.providers {
		if st, ok := p.(engine.Starter); ok {
			if err := st.Start(ctx); err != nil {
				return environment("provider.unavailable", s.rt.Path, err)
			}
		}
	}
	dispatchDone := make(chan error, 1)
	go func() { dispatchDone <- s.dispatcher.Run(ctx) }()
	go func() { _ = s.operations.Run(ctx) }()
	go s.checkJournalOn(ctx, journalSchedule(ctx))
	webhooksCtx, stopWebhooks := context.WithCancel(ctx)
	webhooksDone := make(chan struct{})
	go func() {
		defer close(webhooksDone)
		if s.webhooks != nil {
			s.webhooks.Run(webhooksCtx)
		}
	}()
	// Deliveries in flight end before the store closes, whichever way run returns.
	defer func() { stopWebhooks(); <-webhooksDone }()
	s.log.Info("serving", "api", apiLn.Addr().String(), "package", s.pkg.Digest)
	notifyService(s.log, daemon.SdNotifyReady) // migrated, every listener bound
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
	}
	notifyService(s.log, daemon.SdNotifyStopping)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	if msrv != nil {
		_ = msrv.Shutdown(shutdownCtx)
	}
	if runErr != nil {
		return environment("listener.failed", apiLn.Addr().String(), runErr)
	}
	if err := <-dispatchDone; err != nil {
		return fmt.Errorf("dispatcher: %w", err)
	}
	s.log.Info("stopped")
	return nil
}

// close releases providers and the store.
func (s *stack) close() {
	if s.operations != nil {
		s.operations.Close() // after their current batch: the store must still be open
	}
	for id, p := range s.providers {
		if err := p.Close(); err != nil {
			s.log.Warn("closing provider", "provider", id, "err", err)
		}
	}
	if s.store != nil {
		if err := s.store.Close(); err != nil {
			s.log.Warn("closing store", "err", err)
		}
	}
}
