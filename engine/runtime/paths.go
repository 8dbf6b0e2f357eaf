package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

var (
	errFileTooLarge = errors.New("file too large")
	errNotRegular   = errors.New("not a regular file")
)

// abs resolves a path of the runtime file against its folder.
func (r *reader) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(r.dir, p)
}

// path reads key as a path and resolves it. shown is how diagnostics may name it: the
// absolute path, so the operator sees where Load looked, unless the path came from the
// environment (${…}), whose values diagnostics never show.
func (m *mapping) path(key string, required bool) (abs, shown string) {
	text, _, used, ok := m.scalar(key)
	switch {
	case !ok && required && !m.has(key):
		m.fail(key, "is required")
	case ok && text == "" && required:
		m.fail(key, "must not be empty")
	}
	if !ok || text == "" {
		return "", ""
	}
	abs = m.r.abs(text)
	shown = abs
	if used {
		shown = "(the path built from ${…})"
	}
	return abs, shown
}

// folder resolves key's required path and checks it is an existing folder. It returns ""
// after recording a problem.
func (r *reader) folder(m *mapping, key string) string {
	p, shown := m.path(key, true)
	if p == "" {
		return ""
	}
	mem, line := m.at(key)
	info, err := os.Stat(p)
	switch {
	case err != nil:
		r.diags.add(CodeUnreadable, line, mem, "folder %s cannot be read: %v", shown, unwrapPathError(err))
		return ""
	case !info.IsDir():
		r.diags.add(CodeInvalid, line, mem, "%s is not a folder", shown)
		return ""
	}
	return p
}

// readFile resolves key's optional path and reads the regular file there (at most limit
// bytes). It returns "" and nil when key is absent or after recording a problem.
func (r *reader) readFile(m *mapping, key string, limit int64) (string, []byte) {
	p, shown := m.path(key, false)
	if p == "" {
		return "", nil
	}
	mem, line := m.at(key)
	data, err := readLimited(p, limit)
	if err != nil {
		code := CodeUnreadable
		if errors.Is(err, errFileTooLarge) || errors.Is(err, errNotRegular) {
			code = CodeInvalid
		}
		r.diags.add(code, line, mem, "file %s cannot be used: %v", shown, err)
		return "", nil
	}
	return p, data
}

// readLimited reads a regular file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if !info.Mode().IsRegular() {
		return nil, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", errFileTooLarge, limit)
	}
	return data, nil
}
