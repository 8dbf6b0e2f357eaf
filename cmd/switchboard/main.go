package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes (docs/operations.md, "Exit codes and errors").
const (
	exitOK          = 0
	exitRefused     = 1
	exitUsage       = 2
	exitEnvironment = 3
)

// app holds the global flags and output streams of one invocation.
type app struct {
	config string
	output string
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string

	// outputRead says the root's flags were parsed and checked (PersistentPreRunE ran): output is
	// the caller's choice; before that, run reads it from the command line itself.
	outputRead bool
	// hangups are serve's SIGHUPs (reload the TLS certificate); nil in every other command.
	hangups <-chan os.Signal
	// noAdmission runs serve's dispatcher without the give-way (serve --admission off, which
	// only switchboard bench sets).
	noAdmission bool
}

func main() {
	setGCPercent(os.LookupEnv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// defaultGCPercent is the garbage collector's target when GOGC is not set: a gateway under load
// allocates per request and keeps little, so collecting at 400% rather than Go's 100% cuts the
// collections to a fraction for some tens of MiB more heap. Measured with switchboard bench
// (scenario a, SQLite, serve in its own process): at 200, 415–472 µs of serve CPU a message and
// 129 MiB peak RSS; at 400, 419 µs and 149 MiB; at 800, 390 µs but 200 MiB. GOGC, and GOMEMLIMIT,
// still decide when set.
const defaultGCPercent = 400

// setGCPercent applies defaultGCPercent unless the environment sets GOGC.
func setGCPercent(lookup func(string) (string, bool)) {
	if _, set := lookup("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// run executes one command line and returns its exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	a := &app{stdout: stdout, stderr: stderr, getenv: getenv}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := refuseUnknownWords(root, args)
	if err == nil {
		err = root.ExecuteContext(ctx)
	}
	if err == nil {
		return exitOK
	}
	if !a.outputRead {
		a.output = outputFromArgs(args)
	}
	return a.report(err)
}

func (a *app) rootCommand() *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:           "switchboard",
		Short:         "A scriptable provider gateway: templates, providers, durable delivery",
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				return a.printVersion()
			}
			return cmd.Help()
		},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.output != "human" && a.output != "json" {
				return usageError(fmt.Errorf("--output must be human or json"))
			}
			a.outputRead = true
			if a.config == "" {
				a.config = a.getenv("SWITCHBOARD_CONFIG")
			}
			return nil
		},
	}
	root.PersistentFlags().StringVar(&a.config, "config", "", "runtime file (also SWITCHBOARD_CONFIG)")
	root.PersistentFlags().StringVarP(&a.output, "output", "o", "human", "output format: human or json")
	root.Flags().BoolVar(&showVersion, "version", false, "print the version (as switchboard version does)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.AddCommand(
		a.initCommand(),
		a.checkCommand(),
		a.previewCommand(),
		a.serveCommand(),
		a.devCommand(),
		a.dkimCommand(),
		a.adapterCommand(),
		a.messagesCommand(), a.auditCommand(), a.retentionCommand(),
		a.backupCommand(),
		a.peerCommand(), a.inboxCommand(), a.webhooksCommand(),
		a.benchCommand(),
		a.versionCommand(),
	)
	strictTree(root)
	return root
}

// json reports whether the caller asked for JSON output.
func (a *app) json() bool { return a.output == "json" }
