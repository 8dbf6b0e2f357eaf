package packages

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// maxFileBytes caps every package file but adapter scripts (which have their own 64 KiB cap).
const maxFileBytes = 1 << 20

// layout is the package folder on disk. It refuses symbolic links, reads the files of the
// layout (docs/package.md, "Layout") and remembers each one it read for the digest; files it never reads are
// outside the layout and so left out of the digest.
type layout struct {
	root     string // absolute, symbolic links of the path itself resolved
	diags    *diagnostics
	files    map[string]fileSum
	symlinks map[string]bool
}

type fileSum struct {
	sum  [sha256.Size]byte
	size int
}

// openLayout resolves the package root and walks the whole folder, refusing every symbolic
// link inside it. It returns nil when the root itself is unusable.
func openLayout(dir string, diags *diagnostics) *layout {
	abs, err := filepath.Abs(dir)
	if err == nil {
		// The path that names the package may go through links (a "current" link to a
		// release folder is common); links inside the package may not.
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			diags.add(CodePackageUnreadable, ".", 0, "", "the package folder does not exist")
		} else {
			diags.add(CodePackageUnreadable, ".", 0, "", "cannot open the package folder: %v", err)
		}
		return nil
	}
	info, err := os.Stat(abs)
	if err != nil {
		diags.add(CodePackageUnreadable, ".", 0, "", "cannot open the package folder: %v", err)
		return nil
	}
	if !info.IsDir() {
		diags.add(CodePackageInvalid, ".", 0, "", "the package path is not a folder")
		return nil
	}
	l := &layout{root: abs, diags: diags, files: map[string]fileSum{}, symlinks: map[string]bool{}}
	walkErr := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		rel := l.rel(p)
		if err != nil {
			diags.add(CodePackageUnreadable, rel, 0, "", "cannot read: %v", unwrapPath(err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			l.symlinks[rel] = true
			diags.add(CodePackageInvalid, rel, 0, "", "symbolic links are not allowed in a package")
		}
		return nil
	})
	if walkErr != nil {
		diags.add(CodePackageUnreadable, ".", 0, "", "cannot walk the package folder: %v", walkErr)
	}
	return l
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// rel turns an absolute path into a slash-separated path relative to the root.
func (l *layout) rel(p string) string {
	r, err := filepath.Rel(l.root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}

func (l *layout) abs(rel string) string { return filepath.Join(l.root, filepath.FromSlash(rel)) }

// linked reports whether rel is, or lies under, a symbolic link (already reported).
func (l *layout) linked(rel string) bool {
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if l.symlinks[p] {
			return true
		}
	}
	return false
}

// entry describes what is at rel: kind is "missing", "dir", "file", "link" or "other".
func (l *layout) entry(rel string) string {
	if l.linked(rel) {
		return "link"
	}
	info, err := os.Lstat(l.abs(rel))
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return "missing" // ENOTDIR: a parent is a file, so nothing is there
	case err != nil:
		l.diags.add(CodePackageUnreadable, rel, 0, "", "cannot read: %v", unwrapPath(err))
		return "other"
	case info.IsDir():
		return "dir"
	case info.Mode().IsRegular():
		return "file"
	}
	return "other"
}

// readDir lists a folder, sorted by name, leaving out symbolic links (already reported).
func (l *layout) readDir(rel string) []fs.DirEntry {
	list, err := os.ReadDir(l.abs(rel))
	if err != nil {
		l.diags.add(CodePackageUnreadable, rel, 0, "", "cannot read the folder: %v", unwrapPath(err))
		return nil
	}
	out := list[:0]
	for _, e := range list {
		if e.Type()&fs.ModeSymlink == 0 {
			out = append(out, e)
		}
	}
	return out
}

// read returns the bytes of a layout file and records it for the digest. A missing file,
// a file over max bytes (reported with code) or an unreadable one gives ok false.
func (l *layout) read(rel string, max int, code string) ([]byte, bool) {
	switch l.entry(rel) {
	case "file":
	case "link":
		return nil, false
	case "missing":
		l.diags.add(code, rel, 0, "", "the file is missing")
		return nil, false
	default:
		l.diags.add(code, rel, 0, "", "must be a regular file")
		return nil, false
	}
	f, err := os.Open(l.abs(rel))
	if err != nil {
		l.diags.add(CodePackageUnreadable, rel, 0, "", "cannot read: %v", unwrapPath(err))
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		l.diags.add(CodePackageUnreadable, rel, 0, "", "cannot read: %v", unwrapPath(err))
		return nil, false
	}
	if len(data) > max {
		l.diags.add(code, rel, 0, "", "the file is larger than %d bytes", max)
		return nil, false
	}
	l.files[rel] = fileSum{sum: sha256.Sum256(data), size: len(data)}
	return data, true
}

// digest returns the package digest: "sha256:" and the lowercase hex SHA-256 of the
// canonical listing of the package files. The listing has one line per file read as part of
// the layout, sorted by path (byte order, slash-separated, relative to the root):
//
//	<path> TAB <lowercase hex SHA-256 of the file> TAB <size in bytes, decimal> LF
//
// Files outside the layout (a README, runtime.yaml, testdata, .switchboard/) are never read
// by Load and so never listed.
func (l *layout) digest() string {
	paths := make([]string, 0, len(l.files))
	for p := range l.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		f := l.files[p]
		fmt.Fprintf(h, "%s\t%s\t%s\n", p, hex.EncodeToString(f.sum[:]), strconv.Itoa(f.size))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// isTemplateFile reports whether a name is a part file (<part>.tmpl).
func isTemplateFile(name string) (string, bool) {
	return strings.CutSuffix(name, ".tmpl")
}
