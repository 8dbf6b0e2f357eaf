// Package admission holds the policies that decide how much the dispatcher may compete with
// acceptance for the machine (engine.Admission). GiveWay, the one serve runs, holds the
// dispatcher to a floor of claims while a burst of submissions has the CPU; docs/operations.md
// ("Bursts and admission control") says what it does, why, and every knob with its default.
//
// The engine depends only on the interface; cmd/switchboard picks the policy and wires it.
// This package must not import a store, a provider or cmd.
package admission
