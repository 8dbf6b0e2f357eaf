package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"switchboard/packages"
)

func (a *app) previewCommand() *cobra.Command {
	var dir, locale, dataFile string
	cmd := &cobra.Command{
		Use:   "preview --package DIR TEMPLATE VERSION --locale L --data FILE",
		Short: "Render one template version with data from a file",
		Args:  exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" || locale == "" || dataFile == "" {
				return usageError(fmt.Errorf("--package, --locale and --data are required"))
			}
			pkg, err := loadPackage(dir)
			if err != nil {
				return err
			}
			t := pkg.Template(args[0], args[1])
			if t == nil {
				return refused("template.not-found", args[0]+"/"+args[1], "no such template version in the package")
			}
			raw, err := os.ReadFile(dataFile)
			if err != nil {
				return environment("data.unreadable", dataFile, fmt.Errorf("cannot read the data file: %w", err))
			}
			data, err := packages.DecodeData(raw)
			if err != nil {
				return refused("request.invalid", dataFile, "the data file: "+err.Error())
			}
			if err := t.ValidateData(data); err != nil {
				return err
			}
			out, err := t.Render(locale, data)
			if err != nil {
				return err
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "template": args[0], "version": args[1],
					"locale": locale, "channel": t.Channel, "parts": out.Parts, "sms": out.SMS})
			}
			names := make([]string, 0, len(out.Parts))
			for _, p := range t.Parts {
				if _, ok := out.Parts[p]; ok {
					names = append(names, p)
				}
			}
			if len(names) == 0 {
				for p := range out.Parts {
					names = append(names, p)
				}
				sort.Strings(names)
			}
			for _, p := range names {
				fmt.Fprintf(a.stdout, "--- %s ---\n%s\n", p, out.Parts[p])
			}
			if out.SMS != nil {
				fmt.Fprintf(a.stdout, "--- sms ---\n%d segment(s), %s %d units\n", out.SMS.Segments, out.SMS.Encoding, out.SMS.Units)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "package", "", "package folder")
	cmd.Flags().StringVar(&locale, "locale", "", "locale to render")
	cmd.Flags().StringVar(&dataFile, "data", "", "JSON data file")
	return cmd
}
