package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is the release this binary was built as, stamped by the linker
// (`-ldflags "-X main.version=…"`; `make build` gives `git describe --tags --always --dirty`).
// It is written once, at link time, and only read. Empty, the module version Go recorded in the
// build information stands in: a tag or pseudo-version for `go install switchboard/…@v…`,
// `(devel)` for a plain `go build`.
var version string

// buildVersion says which build this is: the JSON document of `switchboard version -o json`, and
// the labels of switchboard_build_info (docs/operations.md, "Metrics").
type buildVersion struct {
	Version string `json:"version"`
	// Revision, Time and Modified come from the VCS information Go records at build time; a
	// build without it (`-buildvcs=false`, a source tree outside git) leaves them empty and false.
	Revision string `json:"revision"`
	Time     string `json:"time"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// currentVersion reads this binary's build information.
func currentVersion() buildVersion {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(version, bi)
}

// versionOf combines the linker-stamped version with the build information (nil when the binary
// carries none).
func versionOf(stamped string, bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: stamped, Go: runtime.Version()}
	if bi != nil {
		if v.Version == "" {
			v.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			v.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	return v
}

// versionCommand is `switchboard version`, also reached as `switchboard --version`.
func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and time, and Go version this binary was built with",
		Args:  exactArgs(0),
		RunE:  func(*cobra.Command, []string) error { return a.printVersion() },
	}
}

// printVersion writes the build's identity, one member a line or as one JSON object.
func (a *app) printVersion() error {
	v := currentVersion()
	if a.json() {
		return a.printJSON(struct {
			OK bool `json:"ok"`
			buildVersion
		}{true, v})
	}
	revision, when, modified := v.Revision, v.Time, fmt.Sprint(v.Modified)
	if revision == "" {
		revision, when, modified = "unknown (built without VCS information)", "unknown", "unknown"
	}
	_, err := fmt.Fprintf(a.stdout, "switchboard %s\nrevision: %s\ntime:     %s\nmodified: %s\ngo:       %s\n",
		v.Version, revision, when, modified, v.Go)
	return err
}
