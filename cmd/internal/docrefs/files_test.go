package docrefs

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo is the repository as the tests read it: its root and its tracked text files.
type repo struct {
	root  string
	files []string // slash-separated paths relative to root
}

// openRepo finds the module root above the test's folder and lists the tracked files (git
// ls-files), or every file outside .git, node_modules and build output when the tree is not a
// git checkout.
func openRepo(t *testing.T) *repo {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
	r := &repo{root: dir}
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = dir
	if out, err := cmd.Output(); err == nil {
		for _, p := range strings.Split(string(out), "\x00") {
			if p != "" {
				r.files = append(r.files, p)
			}
		}
		return r
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", ".switchboard", "bin", "artifacts":
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		r.files = append(r.files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// text returns the content of a tracked file, or false for a binary file (one holding a NUL
// byte) and a file that is gone from the work tree.
func (r *repo) text(t *testing.T, rel string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err != nil {
		if os.IsNotExist(err) {
			return "", false
		}
		t.Fatal(err)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", false
	}
	return string(b), true
}

// pages are the markdown pages that README.md and docs/ consist of.
func (r *repo) pages() []string {
	var out []string
	for _, f := range r.files {
		if f == "README.md" || (strings.HasPrefix(f, "docs/") && strings.HasSuffix(f, ".md")) {
			out = append(out, f)
		}
	}
	return out
}
