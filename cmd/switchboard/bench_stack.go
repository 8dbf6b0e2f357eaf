package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"switchboard/cmd/switchboard/internal/bench"
	"switchboard/engine"
	"switchboard/engine/auth"
	"switchboard/providers/httpgw/mockgw"
	"switchboard/providers/peer"
	"switchboard/store"
)

// benchPooledProtocol is the pooled protocol's id of a bench run with --peer-protocol pooled.
const benchPooledProtocol = "/switchboard/2.0.0/message"

// startBenchStack wires the system under test for `switchboard bench` as dev wires its own:
// the dev folder of the package copy, a mock gateway per http provider posting signed receipts
// (to the one instance, or through a round-robin balancer over several), the SMTP sink, the companion peer, the
// runtime file; then it runs the stack in spec.Instances serve processes of this binary, on
// SQLite in the folder or on a fresh schema of the PostgreSQL database spec.Database names.
// On failure it stops what it started.
func startBenchStack(ctx context.Context, spec bench.StackSpec) (_ *bench.Stack, err error) {
	pkg, err := loadPackage(spec.Dir)
	if err != nil {
		return nil, err
	}
	layout, err := prepareDevDir(spec.Dir)
	if err != nil {
		return nil, err
	}
	issuer, err := auth.LoadDevIssuer(layout.issuerKeyPath, devIssuer, devAudience)
	if err != nil {
		return nil, fmt.Errorf("load the bench issuer: %w", err)
	}
	var stops []func() // stops what was started so far, last first
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stopAll()
		}
	}()
	var db *benchDatabase
	if spec.Database != "" {
		if db, err = openBenchDatabase(ctx, spec.Database); err != nil {
			return nil, err
		}
		stops = append(stops, db.close)
	}
	apis := make([]string, max(spec.Instances, 1))
	for i := range apis {
		if apis[i], err = freeLoopbackAddr(); err != nil {
			return nil, err
		}
	}
	// The gateways post their receipts to the one instance, or through a round-robin balancer
	// over several: a balancer in front of one instance would only add a hop whose CPU the
	// machine's other processes pay for.
	callbackBase := "http://" + apis[0]
	if len(apis) > 1 {
		callbacks, err := startRoundRobin(apis)
		if err != nil {
			return nil, environment("listener.failed", "127.0.0.1:0", err)
		}
		stops = append(stops, callbacks.close)
		callbackBase = callbacks.url
	}
	s := &bench.Stack{Package: pkg, Issuer: issuer}
	session := devSession{API: callbackBase, Clients: clientsOf(pkg), Gateways: map[string]string{}}
	for _, p := range pkg.Providers {
		switch p.Kind {
		case "http":
			gw := mockgw.New(mockgw.Options{
				Latency: spec.GatewayLatency, ReceiptDelay: spec.ReceiptDelay, ReceiptWorkers: spec.ReceiptWorkers,
				CallbackURL: callbackBase + "/v1/provider-callbacks/" + p.ID, CallbackSecret: layout.callbackSecret,
				Logger: spec.StandInLog.With("component", "mock-gateway", "provider", p.ID),
			})
			s.Gateways = append(s.Gateways, gw)
			stops = append(stops, func() { _ = gw.Close() })
			gwURL, err := gw.Start("127.0.0.1:0")
			if err != nil {
				return nil, environment("listener.failed", "mock gateway", err)
			}
			session.Gateways[p.ID] = strings.TrimSuffix(gwURL, "/")
		case "smtp":
			if s.Sink != nil {
				continue
			}
			sink, err := startSMTPSink(layout, pkg, spec.Log.With("component", "smtp-sink"))
			if err != nil {
				return nil, err
			}
			s.Sink = sink.sink
			stops = append(stops, func() { _ = sink.sink.Close() })
			session.SMTP, session.dkimDomain = sink.addr, sink.domain
		case "peer":
			if s.CompanionInbox != nil {
				continue
			}
			var via companionTransport
			if spec.PeerPooled {
				via.Pooled, session.peerPooled = benchPooledProtocol, benchPooledProtocol
			}
			if spec.PeerRelay {
				relay, addr, err := startRelay(ctx, layout, spec.StandInLog.With("component", "relay-peer"))
				if err != nil {
					return nil, err
				}
				stops = append(stops, func() { _ = relay.Close() })
				via.Relay = addr
			}
			comp, err := startCompanion(ctx, layout, peer.DefaultProtocol, via, spec.Log.With("component", "companion-peer"))
			if err != nil {
				return nil, err
			}
			s.CompanionID, s.CompanionInbox = comp.id, comp.store
			stops = append(stops, comp.close)
			session.Companion = &devPeer{PeerID: comp.id, Addrs: comp.addrs, Database: comp.db}
		}
	}
	if spec.Webhooks {
		rc, err := startBenchReceiver(layout, &session)
		if err != nil {
			return nil, err
		}
		s.Events, s.EventEndpoint = rc, devWebhookEndpoint
		stops = append(stops, func() { _ = rc.Close() })
	}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		return nil, err
	}
	if spec.Tune != nil {
		if err := spec.Tune(layout.runtimePath); err != nil {
			return nil, environment("bench.unwritable", layout.runtimePath, err)
		}
	}
	dbURL := ""
	if db != nil {
		dbURL = db.serveURL
	}
	serve, err := startServe(ctx, layout.runtimePath, apis, dbURL, spec.CPUProfile, spec.Admission)
	if err != nil {
		return nil, err
	}
	stops = append(stops, serve.stop)
	s.APIs, s.Processes, s.Stopped = serve.apis(), serve.pids(), serve.stopped
	s.APIURL = "http://" + s.APIs[0]
	s.Metric, s.Histogram = serve.metric, serve.histogram
	if s.Store, err = openBenchReader(ctx, serve.runtimes[0], db, spec.StandInLog); err != nil {
		return nil, err
	}
	reader := s.Store
	stops = append(stops, func() { _ = reader.Close() })
	if db != nil {
		s.Database = &bench.DatabaseServer{AnyBackend: db.backend, Foreign: db.foreign}
	}
	s.Close = stopAll
	return s, nil
}

// openBenchReader opens the bench's own handle on the run's database (as the operator tools do
// while serve runs), for the queue figures it polls, under the bench's own application name on
// PostgreSQL.
func openBenchReader(ctx context.Context, runtimePath string, db *benchDatabase, log *slog.Logger) (*store.Store, error) {
	getenv := func(k string) string {
		if k == "DATABASE_URL" && db != nil {
			return db.readerURL
		}
		return ""
	}
	rt, pkg, err := loadRuntime(runtimePath, getenv)
	if err != nil {
		return nil, err
	}
	st, _, err := openStore(ctx, rt, pkg, engine.SystemClock{}, log, false, nil)
	return st, err
}
