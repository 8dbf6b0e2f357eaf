package main

import (
	"errors"
	"fmt"
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
			rep, err := adaptertest.Check(args[0], update)
			if err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) || errors.Is(err, fs.ErrNotExist) {
					return environment("adapter.unreadable", args[0], err)
				}
				return refused("adapter.invalid", args[0], err.Error())
			}
			if a.json() {
				if rep.Skipped == nil {
					rep.Skipped = []string{}
				}
				if rep.Cases == nil {
					rep.Cases = []adaptertest.CaseResult{}
				}
				if err := a.printJSON(map[string]any{"ok": rep.Failed == 0, "passed": rep.Passed, "failed": rep.Failed,
					"skipped": rep.Skipped, "cases": rep.Cases}); err != nil {
					return err
				}
			} else {
				rep.WriteText(a.stdout)
			}
			if rep.Failed > 0 {
				return &cliError{exit: exitRefused, reported: true, diags: []diagnostic{{Code: "adapter.cases-failed", Path: args[0],
					Message: fmt.Sprintf("%d of %d golden cases failed", rep.Failed, rep.Passed+rep.Failed)}}}
			}
			return nil
		},
	}
	test.Flags().BoolVar(&update, "update", false, "rewrite the expectations from what the adapter does now")
	cmd.AddCommand(test, a.adapterInitCommand(), a.adapterRunCommand())
	return cmd
}
