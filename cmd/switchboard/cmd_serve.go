package main

import (
	"context"
	"errors"
	"net"

	"github.com/spf13/cobra"

	"switchboard/cmd/switchboard/internal/bench"
	"switchboard/engine"
)

func (a *app) serveCommand() *cobra.Command {
	var cpuProfile, admissionPolicy string
	cmd := &cobra.Command{
		Use:   "serve [--cpuprofile FILE]",
		Short: "Run the API, dispatcher, callback receiver and sweeps from the runtime file",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch admissionPolicy {
			case bench.AdmissionGiveWay:
			case bench.AdmissionOff:
				a.noAdmission = true
			default:
				return usageError(errors.New("--admission must be give-way or off"))
			}
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return environment("serve.unwritable", cpuProfile, err)
				}
				defer stop()
			}
			hangups, stop := notifyHangups()
			defer stop()
			a.hangups = hangups
			return a.serve(cmd.Context(), a.config, nil, nil)
		},
	}
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file when serve stops, for go tool pprof")
	// Only `switchboard bench --admission off` sets it, to compare a burst without the give-way
	// (docs/benchmarks.md): hidden, since no deployment should run without it.
	cmd.Flags().StringVar(&admissionPolicy, "admission", bench.AdmissionGiveWay, "the dispatcher's admission policy: give-way or off (for switchboard bench)")
	_ = cmd.Flags().MarkHidden("admission")
	return cmd
}

// serve loads the runtime file and runs the stack until ctx ends. When apiLn (metricsLn) is
// given it is used instead of binding listen.api (listen.metrics): dev binds first to learn
// the ports. Each signal from a.hangups (serve's SIGHUPs; none under dev) reloads the TLS
// certificate.
func (a *app) serve(ctx context.Context, path string, apiLn, metricsLn net.Listener) error {
	log := newLogger(a.stderr, a.getenv)
	rt, pkg, err := loadRuntime(path, a.getenv)
	if err != nil {
		return err
	}
	certs, err := apiCertificates(rt, log)
	if err != nil {
		return err
	}
	reloadCtx, stopReloads := context.WithCancel(ctx)
	defer stopReloads()
	go reloadOnHangup(reloadCtx, a.hangups, certs, log)
	st, err := buildStack(ctx, rt, pkg, log, engine.SystemClock{}, !a.noAdmission)
	if err != nil {
		return err
	}
	if apiLn == nil {
		if apiLn, err = net.Listen("tcp", rt.Listen.API); err != nil {
			st.close()
			return environment("listener.failed", "listen.api", err)
		}
	}
	if metricsLn == nil && rt.Listen.Metrics != "" {
		if metricsLn, err = net.Listen("tcp", rt.Listen.Metrics); err != nil {
			st.close()
			_ = apiLn.Close()
			return environment("listener.failed", "listen.metrics", err)
		}
	}
	return st.run(ctx, withTLS(apiLn, certs), metricsLn)
}
