package packages

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// starterFiles is the package `switchboard init` writes, with its runtime.yaml: an http SMS
// gateway with its adapter, an smtp relay, an sms and an email template (en), their sender
// profiles, and the access profiles case-notices (sender) and operations (operator).
//
//go:embed all:starter
var starterFiles embed.FS

// WriteStarter writes the starter package and its runtime file runtime.yaml into dir, which
// must not exist yet (its parent folders are created as needed). It refuses an existing dir
// with an *InitError whose Code is init.exists, and reports I/O failures as init.unwritable,
// removing what it created. The written package passes Load.
func WriteStarter(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return &InitError{code: CodeInitExists, Dir: dir}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return &InitError{code: CodeInitUnwritable, Dir: dir, Err: err}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return &InitError{code: CodeInitUnwritable, Dir: dir, Err: err}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &InitError{code: CodeInitExists, Dir: dir}
		}
		return &InitError{code: CodeInitUnwritable, Dir: dir, Err: err}
	}
	if err := writeStarterFiles(dir); err != nil {
		_ = os.RemoveAll(dir) // we created it a moment ago; leave nothing half-written
		return &InitError{code: CodeInitUnwritable, Dir: dir, Err: err}
	}
	return nil
}

func writeStarterFiles(dir string) error {
	root, err := fs.Sub(starterFiles, "starter")
	if err != nil {
		return fmt.Errorf("open embedded starter: %w", err)
	}
	return fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("walk embedded starter: %w", err)
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			if p == "." {
				return nil
			}
			if err := os.Mkdir(target, 0o755); err != nil {
				return fmt.Errorf("create %s: %w", p, err)
			}
			return nil
		}
		data, err := fs.ReadFile(root, p)
		if err != nil {
			return fmt.Errorf("read embedded %s: %w", p, err)
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		return nil
	})
}
