package adapterkit

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"switchboard/providers/httpgw/adaptertest"
)

//go:embed template
var files embed.FS

// Channels are the channels Init writes an adapter for.
var Channels = []string{"sms", "email", "chat", "push"}

// DeclarationsFile is the name of the TypeScript declarations Init writes.
const DeclarationsFile = "switchboard.d.ts"

// Declarations returns switchboard.d.ts.
func Declarations() []byte {
	b, _ := files.ReadFile("template/" + DeclarationsFile)
	return b
}

// identifier is a Switchboard identifier: the provider id the folder's name gives.
var identifier = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// Written lists the files Init wrote, relative to its folder.
var Written = []string{"adapter.js", "provider.yaml", DeclarationsFile, "runtime-snippet.yaml", "testdata/accepted.txtar"}

// Init writes a new adapter folder dir for channel: adapter.js, provider.yaml,
// switchboard.d.ts, runtime-snippet.yaml (the provider's runtime entry, with the folder's name
// as provider id) and testdata/accepted.txtar, one golden case whose expected sections the real
// runner writes, so that `switchboard adapter test DIR` passes at once. dir must not exist or
// be an empty folder, and its name must be an identifier (lower-case kebab case).
func Init(dir, channel string) error {
	known := false
	for _, c := range Channels {
		known = known || c == channel
	}
	if !known {
		return fmt.Errorf("channel %q is not one of %s", channel, strings.Join(Channels, ", "))
	}
	id := filepath.Base(filepath.Clean(dir))
	if !identifier.MatchString(id) {
		return fmt.Errorf("the folder name %q is the provider id: 1 to 64 characters of a-z, 0-9 and -, not starting or ending with -", id)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s exists and is not empty", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	data := struct {
		ID        string
		Callbacks bool
	}{ID: id, Callbacks: channel != "chat" && channel != "push"}
	out := map[string][]byte{DeclarationsFile: Declarations()}
	for name, src := range map[string]string{
		"adapter.js": channel + "/adapter.js", "provider.yaml": channel + "/provider.yaml",
		"runtime-snippet.yaml": "snippet.yaml.tmpl", "testdata/accepted.txtar": channel + "/case.txtar",
	} {
		raw, err := files.ReadFile("template/" + src)
		if err != nil {
			return err
		}
		if strings.HasSuffix(src, ".tmpl") || strings.HasSuffix(src, ".txtar") {
			var b bytes.Buffer
			if err := template.Must(template.New(src).Parse(string(raw))).Execute(&b, data); err != nil {
				return err
			}
			raw = b.Bytes()
		}
		out[name] = raw
	}
	for _, name := range Written {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, out[name], 0o644); err != nil {
			return err
		}
	}
	rep, err := adaptertest.Check(dir, true)
	if err != nil {
		return fmt.Errorf("writing the golden case: %w", err)
	}
	if rep.Failed != 0 {
		return fmt.Errorf("writing the golden case: %s", rep.Cases[0].Cause)
	}
	return nil
}
