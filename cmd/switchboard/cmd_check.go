package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"switchboard/engine/runtime"
	"switchboard/packages"
)

func (a *app) initCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "init DIR",
		Short: "Write a starter package and runtime file into a new folder",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := packages.WriteStarter(args[0]); err != nil {
				return err
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "dir": args[0]})
			}
			fmt.Fprintf(a.stdout, "created %s\nnext: switchboard check --package %s\n", args[0], args[0])
			return nil
		},
	}
}

// templateReport is one template in check's output.
type templateReport struct {
	ID      string         `json:"id"`
	Version string         `json:"version"`
	Channel string         `json:"channel"`
	Samples []sampleReport `json:"samples"`
}

type sampleReport struct {
	Locale  string            `json:"locale"`
	Renders bool              `json:"renders"`
	SMS     *packages.SMSInfo `json:"sms,omitempty"`
}

type profileReport struct {
	ID   string `json:"id"`
	Role string `json:"role"`
}

func (a *app) checkCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "check [--package DIR]",
		Short: "Load a package (and the runtime file with --config) exactly as serve would, compiling every adapter",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var rt *runtime.Runtime
			if a.config != "" {
				var err error
				if rt, err = runtime.Load(a.config, a.getenv); err != nil {
					return err
				}
				if dir == "" {
					dir = rt.Package.Root
				}
			}
			if dir == "" {
				return usageError(fmt.Errorf("give --package DIR or --config FILE"))
			}
			pkg, err := loadPackage(dir)
			if err != nil {
				return err
			}
			if rt != nil {
				if err := rt.CheckPackage(pkg); err != nil {
					return err
				}
			}
			if err := checkAdapters(rt, pkg); err != nil {
				return err
			}
			return a.printCheck(dir, pkg)
		},
	}
	cmd.Flags().StringVar(&dir, "package", "", "package folder")
	return cmd
}

// loadPackage loads a package, turning a missing folder into an environment error.
func loadPackage(dir string) (*packages.Package, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, environment("package.unreadable", dir, fmt.Errorf("cannot read the package folder: %w", err))
	}
	return packages.Load(dir)
}

func (a *app) printCheck(dir string, pkg *packages.Package) error {
	var templates []templateReport
	for _, t := range pkg.Templates {
		tr := templateReport{ID: t.ID, Version: t.Version, Channel: t.Channel}
		if t.Sample != nil {
			for _, loc := range t.Locales {
				out, err := t.Render(loc, t.Sample)
				if err != nil {
					return refused("template.render-refused", filepath.Join("templates", t.ID, t.Version, "sample.json"), err.Error())
				}
				tr.Samples = append(tr.Samples, sampleReport{Locale: loc, Renders: true, SMS: out.SMS})
			}
		}
		templates = append(templates, tr)
	}
	var profiles []profileReport
	for _, p := range pkg.AccessProfiles {
		profiles = append(profiles, profileReport{ID: p.ID, Role: p.Role})
	}
	providers, senders := providersAndSenders(pkg)
	if a.json() {
		return a.printJSON(map[string]any{"ok": true, "package": dir, "digest": pkg.Digest,
			"templates": templates, "accessProfiles": profiles, "providers": providers, "senderProfiles": senders})
	}
	fmt.Fprintf(a.stdout, "ok: %s\ndigest: %s\n", dir, pkg.Digest)
	for _, p := range providers {
		fmt.Fprintf(a.stdout, "provider %s %s\n", p.ID, p.Kind)
	}
	for _, sp := range senders {
		line := fmt.Sprintf("sender profile %s %s → %s", sp.ID, sp.Channel, sp.Provider)
		if len(sp.FallbackProviders) > 0 {
			line += " [" + strings.Join(sp.FallbackProviders, ", ") + "]"
		}
		fmt.Fprintln(a.stdout, line)
	}
	for _, t := range templates {
		fmt.Fprintf(a.stdout, "template %s %s (%s)\n", t.ID, t.Version, t.Channel)
		for _, s := range t.Samples {
			if s.SMS != nil {
				fmt.Fprintf(a.stdout, "  sample %s: %d segment(s), %s %d units\n", s.Locale, s.SMS.Segments, s.SMS.Encoding, s.SMS.Units)
			} else {
				fmt.Fprintf(a.stdout, "  sample %s: renders\n", s.Locale)
			}
		}
	}
	for _, p := range profiles {
		fmt.Fprintf(a.stdout, "access profile %s (%s)\n", p.ID, p.Role)
	}
	return nil
}

// exactArgs is cobra.ExactArgs with a usage exit code.
func exactArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.ExactArgs(n)) }
