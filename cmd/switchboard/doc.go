// Command switchboard is the one binary: flag parsing and wiring only. Each subcommand loads
// what it needs (package, runtime file, store), builds the engine's parts and runs them.
package main
