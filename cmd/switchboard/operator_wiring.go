package main

import (
	"context"
	"log/slog"

	"switchboard/engine"
	"switchboard/engine/api"
	"switchboard/engine/runtime"
	"switchboard/packages"
	"switchboard/store"
)

// newOperations wires the API's bulk operations to the same operator as the command line's.
func newOperations(st *store.Store, pkg *packages.Package, clock engine.Clock, log *slog.Logger) (*engine.Operations, error) {
	op, err := engine.NewOperator(engine.OperatorConfig{Store: st, Package: pkg, Clock: clock})
	if err != nil {
		return nil, err
	}
	return engine.NewOperations(engine.OperationsConfig{Operator: op, Store: st, Clock: clock,
		Logger: log.With("component", "operations")})
}

// verifyJournal verifies the store's journal for GET /v1/audit/verification.
func verifyJournal(st *store.Store) api.JournalCheck {
	return func(ctx context.Context) (engine.JournalReport, error) {
		rep, err := st.VerifyAudit(ctx)
		out := engine.JournalReport{Writers: rep.Writers, Records: rep.Records}
		for _, b := range rep.Breaks {
			out.Breaks = append(out.Breaks, engine.JournalBreak{Writer: b.Writer, Seq: b.Seq, Kind: string(b.Kind), Detail: b.Detail})
		}
		return out, err
	}
}

// consoleConfig is the console of the runtime file, signing in with the runtime's issuer and
// asking for the scopes of its client's access profile.
func consoleConfig(rt *runtime.Runtime, pkg *packages.Package) api.ConsoleConfig {
	c := api.ConsoleConfig{Enabled: rt.Console.Enabled, ClientID: rt.Console.ClientID, Issuer: rt.Authentication.OIDC.Issuer}
	if p := pkg.ProfileForClient(c.ClientID); p != nil {
		c.Scopes = p.RequiredScopes
	}
	return c
}
