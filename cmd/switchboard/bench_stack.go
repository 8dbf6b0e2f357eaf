package main

import (
	"context"
	"fmt"
	"net"
	"strings"

	"switchboard/cmd/switchboard/internal/bench"
	"switchboard/engine"
	"switchboard/engine/auth"
	"switchboard/providers/httpgw/mockgw"
	"switchboard/providers/peer"
)

// startBenchStack wires the system under test for `switchboard bench` as dev wires its own:
// the dev folder of the package copy, a mock gateway per http provider posting signed receipts,
// the SMTP sink, the companion peer, the runtime file, and the stack served on a loopback
// listener. On failure it stops what it started.
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
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, environment("listener.failed", "127.0.0.1:0", err)
	}
	var standIns []func() // stops the stand-ins started so far, in order
	stopStandIns := func() {
		for _, stop := range standIns {
			stop()
		}
	}
	defer func() {
		if err != nil {
			_ = apiLn.Close()
			stopStandIns()
		}
	}()
	s := &bench.Stack{APIURL: "http://" + apiLn.Addr().String(), Package: pkg, Issuer: issuer}
	session := devSession{API: s.APIURL, Clients: clientsOf(pkg), Gateways: map[string]string{}}
	for _, p := range pkg.Providers {
		switch p.Kind {
		case "http":
			gw := mockgw.New(mockgw.Options{
				Latency: spec.GatewayLatency, ReceiptDelay: spec.ReceiptDelay, ReceiptWorkers: spec.ReceiptWorkers,
				CallbackURL: s.APIURL + "/v1/provider-callbacks/" + p.ID, CallbackSecret: layout.callbackSecret,
				Logger: spec.StandInLog.With("component", "mock-gateway", "provider", p.ID),
			})
			s.Gateways = append(s.Gateways, gw)
			standIns = append(standIns, func() { _ = gw.Close() })
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
			standIns = append(standIns, func() { _ = sink.sink.Close() })
			session.SMTP, session.dkimDomain = sink.addr, sink.domain
		case "peer":
			if s.CompanionInbox != nil {
				continue
			}
			comp, err := startCompanion(ctx, layout, peer.DefaultProtocol, spec.Log.With("component", "companion-peer"))
			if err != nil {
				return nil, err
			}
			s.CompanionID, s.CompanionInbox = comp.id, comp.store
			standIns = append(standIns, comp.close)
			session.Companion = &devPeer{PeerID: comp.id, Addrs: comp.addrs, Database: comp.db}
		}
	}
	if spec.Webhooks {
		rc, err := startBenchReceiver(layout, &session)
		if err != nil {
			return nil, err
		}
		s.Events, s.EventEndpoint = rc, devWebhookEndpoint
		standIns = append(standIns, func() { _ = rc.Close() })
	}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		return nil, err
	}
	if spec.Tune != nil {
		if err := spec.Tune(layout.runtimePath); err != nil {
			return nil, environment("bench.unwritable", layout.runtimePath, err)
		}
	}
	rt, pkg, err := loadRuntime(layout.runtimePath, func(string) string { return "" })
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	st, err := buildStack(runCtx, rt, pkg, spec.Log, engine.SystemClock{})
	if err != nil {
		cancel()
		return nil, err
	}
	s.Package, s.Store, s.Dispatcher = pkg, st.store, st.dispatcher
	stopped := make(chan error, 1)
	go func() {
		stopped <- st.run(runCtx, apiLn, nil)
		close(stopped)
	}()
	s.Stopped = stopped
	s.Close = func() {
		cancel()
		for range stopped { // the run's end, if nobody read it yet
		}
		stopStandIns()
	}
	return s, nil
}
