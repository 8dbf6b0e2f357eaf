package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/spf13/cobra"

	"switchboard/providers/httpgw/adaptertest"
)

func (a *app) adapterCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "adapter", Short: "Work on HTTP provider adapters"}
	var update bool
	test := &cobra.Command{
		Use:   "test DIR",
		Short: "Run an adapter's golden cases (testdata/*.txtar); DIR may hold several adapters",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var out io.Writer = a.stdout
			if a.json() {
				out = a.stderr
			}
			passed, failed, err := adaptertest.RunDir(args[0], update, out)
			if err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) || errors.Is(err, fs.ErrNotExist) {
					return environment("adapter.unreadable", args[0], err)
				}
				return refused("adapter.invalid", args[0], err.Error())
			}
			if a.json() {
				if err := a.printJSON(map[string]any{"ok": failed == 0, "passed": passed, "failed": failed}); err != nil {
					return err
				}
			}
			if failed > 0 {
				return &cliError{exit: exitRefused, diags: []diagnostic{{Code: "adapter.cases-failed", Path: args[0],
					Message: fmt.Sprintf("%d of %d golden cases failed", failed, passed+failed)}}}
			}
			return nil
		},
	}
	test.Flags().BoolVar(&update, "update", false, "rewrite the expectations from what the adapter does now")
	cmd.AddCommand(test)
	return cmd
}
