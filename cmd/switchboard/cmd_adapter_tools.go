package main

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"switchboard/providers/httpgw/adapterkit"
	"switchboard/providers/httpgw/adaptertest"
)

// adapterInitCommand is `adapter init DIR --channel sms|email|chat|push`.
func (a *app) adapterInitCommand() *cobra.Command {
	var channel string
	cmd := &cobra.Command{
		Use:   "init DIR --channel sms|email|chat|push",
		Short: "Write a new adapter folder: adapter.js, provider.yaml, switchboard.d.ts, a runtime snippet and a golden case that passes",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if channel == "" {
				return usageError(fmt.Errorf("give --channel %s", strings.Join(adapterkit.Channels, "|")))
			}
			if err := adapterkit.Init(args[0], channel); err != nil {
				return refused("adapter.invalid", args[0], err.Error())
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "dir": args[0], "channel": channel, "files": adapterkit.Written})
			}
			fmt.Fprintf(a.stdout, "created %s (%s): %s\nnext: switchboard adapter test %s\n", args[0], channel,
				strings.Join(adapterkit.Written, ", "), args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&channel, "channel", "", "the channel the adapter carries: "+strings.Join(adapterkit.Channels, ", "))
	return cmd
}

// adapterRunCommand is `adapter run DIR --message FILE`: the request prepare builds, not sent.
func (a *app) adapterRunCommand() *cobra.Command {
	var message string
	cmd := &cobra.Command{
		Use:   "run DIR --message FILE",
		Short: "Print the HTTP request the adapter's prepare builds for a message (message.yaml form); nothing is sent",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if message == "" {
				return usageError(errors.New("give --message FILE (a message.yaml, as in a golden case)"))
			}
			res, err := adaptertest.Prepare(args[0], message, a.getenv)
			if err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) || errors.Is(err, fs.ErrNotExist) {
					return environment("adapter.unreadable", args[0], err)
				}
				return refused("adapter.invalid", args[0], err.Error())
			}
			if o := res.Refused; o != nil {
				return refused(o.Code, args[0], fmt.Sprintf("prepare's request is refused (%s): %s", o.Class, o.Reason))
			}
			r := res.Request
			names := make([]string, 0, len(r.Header))
			headers := map[string]string{}
			for name := range r.Header {
				lower := strings.ToLower(name)
				names = append(names, lower)
				headers[lower] = strings.Join(r.Header.Values(name), ", ")
			}
			sort.Strings(names)
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "method": r.Method, "url": r.URL, "headers": headers, "body": string(r.Body)})
			}
			fmt.Fprintf(a.stdout, "%s %s\n", r.Method, r.URL)
			for _, name := range names {
				fmt.Fprintf(a.stdout, "%s: %s\n", name, headers[name])
			}
			if len(r.Body) > 0 {
				fmt.Fprintf(a.stdout, "\n%s\n", adaptertest.RenderBody(r.Header.Get("Content-Type"), r.Body))
			}
			fmt.Fprintln(a.stderr, "(not sent; the runtime adds the credential)")
			return nil
		},
	}
	cmd.Flags().StringVar(&message, "message", "", "the message, as a golden case's message.yaml")
	return cmd
}
