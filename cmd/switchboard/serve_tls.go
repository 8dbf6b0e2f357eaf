package main

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"switchboard/engine"
	"switchboard/engine/api"
	"switchboard/engine/runtime"
)

// notifyHangups turns SIGHUP, which would end the process, into a request to reload: serve's
// service unit reloads with `kill -HUP` (docs/operations.md, "TLS"). stop ends it.
func notifyHangups() (hangups <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// apiCertificates is the reloader of the API listener's certificate, or nil when the runtime
// serves plain HTTP.
func apiCertificates(rt *runtime.Runtime, log *slog.Logger) (*api.CertReloader, error) {
	if rt.Listen.TLS == nil {
		return nil, nil
	}
	certs, err := api.NewCertReloader(rt.Listen.TLS.CertFile, rt.Listen.TLS.KeyFile, engine.SystemClock{}, log.With("component", "tls"))
	if err != nil {
		return nil, environment("listener.failed", "listen.tls", err)
	}
	log.Info("the API listener serves TLS", "certFile", rt.Listen.TLS.CertFile, "notAfter", api.NotAfter(certs.Current()))
	return certs, nil
}

// withTLS is ln serving TLS with certs, or ln itself when certs is nil.
func withTLS(ln net.Listener, certs *api.CertReloader) net.Listener {
	if certs == nil {
		return ln
	}
	return tls.NewListener(ln, certs.Config())
}

// reloadOnHangup reloads the certificate on every signal from hangups until ctx ends. Without
// TLS there is nothing to reload, which it says.
func reloadOnHangup(ctx context.Context, hangups <-chan os.Signal, certs *api.CertReloader, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hangups:
			if certs == nil {
				log.Info("SIGHUP: nothing to reload (listen.tls is not set)")
				continue
			}
			_ = certs.Reload() // logs its outcome
		}
	}
}
