package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"switchboard/providers/smtp/dkimkey"
)

func (a *app) dkimCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "dkim", Short: "DKIM signing keys"}
	var domain, selector, algorithm string
	keygen := &cobra.Command{
		Use:   "keygen --domain D --selector S FILE",
		Short: "Write a DKIM private key (mode 0600) and print the DNS TXT record to publish",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if domain == "" || selector == "" {
				return usageError(fmt.Errorf("--domain and --selector are required"))
			}
			alg, err := dkimkey.ParseAlgorithm(algorithm)
			if err != nil {
				return usageError(err)
			}
			rec, err := dkimkey.Keygen(args[0], domain, selector, alg)
			switch {
			case errors.Is(err, dkimkey.ErrInvalidInput):
				return refused("dkim.invalid", args[0], err.Error())
			case errors.Is(err, fs.ErrExist):
				return refused("dkim.exists", args[0], "the key file exists already; it is never overwritten")
			case err != nil:
				return environment("dkim.unwritable", args[0], err)
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "file": args[0], "algorithm": rec.Algorithm,
					"record": map[string]any{"name": rec.Name, "type": "TXT", "value": rec.Value, "strings": rec.Strings()}})
			}
			fmt.Fprintf(a.stdout, "wrote %s (%s)\npublish this TXT record:\n%s\n", args[0], rec.Algorithm, rec.ZoneLine())
			return nil
		},
	}
	keygen.Flags().StringVar(&domain, "domain", "", "signing domain (d=)")
	keygen.Flags().StringVar(&selector, "selector", "", "selector (s=)")
	keygen.Flags().StringVar(&algorithm, "algorithm", "rsa", "rsa (RSA-2048) or ed25519")
	cmd.AddCommand(keygen)
	return cmd
}
