package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command line's grammar (docs/operations.md, "Exit codes and errors"): whatever the command
// tree does not know is a usage error, exit 2, reported as every other error is (one JSON document
// with -o json). Cobra on its own runs a group command (one with subcommands and nothing to run
// of its own) on words it does not know by printing its help and exiting 0, and its own
// refusals (an unknown command under the root, a built-in argument check) are plain errors.

// strictTree makes every command of the tree check its arguments as usage errors, and a command
// that declares no arguments take none. It adds the completion and help commands first, so that
// they follow the same rules.
func strictTree(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	root.SetHelpCommand(helpCommand())
	root.InitDefaultHelpCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Args == nil {
			c.Args = cobra.NoArgs
		}
		c.Args = usageArgs(c.Args)
		for _, child := range c.Commands() {
			walk(child)
		}
	}
	walk(root)
}

// refuseUnknownWords checks a command line before cobra runs it, since cobra shows help for a
// group command instead of running anything: a word after a group command (or the root) that
// names none of its subcommands is an unknown command, and a group command called bare is told
// which subcommands it has. The root called bare runs (its help, or --version). A command line
// whose flags do not parse is left to cobra, which refuses it (an unknown flag) or shows help
// (--help).
func refuseUnknownWords(root *cobra.Command, args []string) error {
	// Shell completion calls the hidden command cobra adds when it runs.
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return nil
	}
	cmd, rest, err := root.Find(args)
	if err != nil {
		return usageError(err)
	}
	// A command that has subcommands and runs itself (dev DIR) takes its own words.
	if !cmd.HasSubCommands() || (cmd.HasParent() && cmd.Runnable()) {
		return nil
	}
	if cmd.ParseFlags(rest) != nil {
		return nil
	}
	if help, _ := cmd.Flags().GetBool("help"); help {
		return nil
	}
	if words := cmd.Flags().Args(); len(words) > 0 {
		return unknownCommand(cmd, words[0])
	}
	if !cmd.HasParent() {
		return nil
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	list := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	return usageError(fmt.Errorf("give a subcommand: %s (%s --help describes them)", list, cmd.CommandPath()))
}

// unknownCommand is the usage error for a word that names no subcommand of cmd, with the
// subcommands it may have been meant for.
func unknownCommand(cmd *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, set where it reports an unknown command
	}
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return usageError(errors.New(msg))
}

// usageArgs makes an argument check's refusal a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		var ce *cliError
		if err == nil || errors.As(err, &ce) {
			return err
		}
		return usageError(err)
	}
}

// helpCommand is `switchboard help [command]`: cobra's prints the root's help for a topic it
// does not know, and exits 0.
func helpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil {
				return usageError(err)
			}
			if len(rest) > 0 {
				return unknownCommand(cmd, rest[0])
			}
			return cmd.Help()
		},
	}
}

// outputFromArgs reads the --output (-o) value from a command line the way the flag parser
// would (the last one counts; nothing after "--"), for a failure that stops before the flags are
// parsed or part-way through them: an unknown command, an unknown flag before -o.
func outputFromArgs(args []string) string {
	fs := pflag.NewFlagSet("output", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	output := fs.StringP("output", "o", "human", "")
	fs.BoolP("help", "h", false, "")
	_ = fs.Parse(args) // a malformed line is the command's own failure; -o as far as it was read
	return *output
}
