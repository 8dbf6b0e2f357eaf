package runtime

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const (
	refFilePrefix = "secret:file/"
	refEnvPrefix  = "secret:env/"
	// maxSecretBytes bounds one secret; the largest expected is a PEM private key of a few KiB.
	maxSecretBytes = 64 << 10
)

// secretSources is the runtime file's `secrets` member: which kinds of reference are enabled.
type secretSources struct {
	fileDeclared bool   // secrets.file is present
	fileRoot     string // absolute root; "" when absent or unusable (already reported)
	env          bool   // secrets.env is present
}

// secretProblem is why one secret could not be resolved. msg never holds the value.
type secretProblem struct {
	code string
	msg  string
}

// resolveSecret resolves ref for member, recording a diagnostic and returning the zero Secret
// when it cannot.
func (r *reader) resolveSecret(line int, member, ref string) Secret {
	value, p := r.lookupSecret(ref)
	if p != nil {
		if p.code != "" {
			r.diags.add(p.code, line, member, "%s", p.msg)
		}
		return Secret{}
	}
	return Secret{ref: ref, value: value}
}

// lookupSecret returns the secret's bytes, or a problem. A problem with an empty code is one
// already reported elsewhere (an unusable secrets.file.root).
func (r *reader) lookupSecret(ref string) ([]byte, *secretProblem) {
	switch {
	case strings.HasPrefix(ref, refFilePrefix):
		name := strings.TrimPrefix(ref, refFilePrefix)
		if !isSecretFileName(name) {
			return nil, &secretProblem{CodeInvalid, "secret:file/NAME needs NAME to be one path segment of letters, digits, '.', '_' or '-' (not . or ..)"}
		}
		if !r.secrets.fileDeclared {
			return nil, &secretProblem{CodeInvalid, "secret:file references need secrets.file.root"}
		}
		if r.secrets.fileRoot == "" {
			return nil, &secretProblem{}
		}
		return readSecretFile(r.secrets.fileRoot, name)
	case strings.HasPrefix(ref, refEnvPrefix):
		name := strings.TrimPrefix(ref, refEnvPrefix)
		if !isVarName(name) {
			return nil, &secretProblem{CodeInvalid, "secret:env/NAME needs NAME to be an environment variable name"}
		}
		if !r.secrets.env {
			return nil, &secretProblem{CodeInvalid, "secret:env references need secrets.env to be present (secrets: {env: {}})"}
		}
		v := r.getenv(name)
		if v == "" {
			return nil, &secretProblem{CodeSecretUnreadable, "environment variable " + name + " is unset or empty"}
		}
		if len(v) > maxSecretBytes {
			return nil, &secretProblem{CodeInvalid, fmt.Sprintf("environment variable %s is larger than %d bytes", name, maxSecretBytes)}
		}
		return []byte(v), nil
	}
	return nil, &secretProblem{CodeInvalid, "must be a secret reference: secret:file/NAME or secret:env/NAME"}
}

// readSecretFile reads root/name, refusing symbolic links, anything but a regular file, and
// modes other than 0600 and 0400 (and 0440 where only an ACL's mask makes it so). It checks the opened file is the one it inspected, so a
// file swapped for a link between the two steps is refused too.
func readSecretFile(root, name string) ([]byte, *secretProblem) {
	path := filepath.Join(root, name)
	info, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &secretProblem{CodeSecretUnreadable, "secret file " + name + " does not exist in secrets.file.root"}
		}
		return nil, &secretProblem{CodeSecretUnreadable, fmt.Sprintf("secret file %s cannot be inspected: %v", name, unwrapPathError(err))}
	}
	if p := checkSecretInfo(name, info); p != nil {
		return nil, p
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &secretProblem{CodeSecretUnreadable, fmt.Sprintf("secret file %s cannot be opened: %v", name, unwrapPathError(err))}
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, &secretProblem{CodeSecretUnreadable, fmt.Sprintf("secret file %s cannot be inspected: %v", name, unwrapPathError(err))}
	}
	if !os.SameFile(info, opened) {
		return nil, &secretProblem{CodeSecretInsecure, "secret file " + name + " changed while it was being opened"}
	}
	if unixMode(opened.Mode()) == credentialMode && !aclReadersOnlyOwnerAndSelf(f) {
		return nil, &secretProblem{CodeSecretInsecure, fmt.Sprintf("secret file %s has mode %04o and its group may read it; "+
			"it must be 0600 or 0400 (0440 only where an ACL lets no one but this process's user read, as in systemd's credentials)", name, credentialMode)}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSecretBytes+1))
	if err != nil {
		return nil, &secretProblem{CodeSecretUnreadable, fmt.Sprintf("secret file %s cannot be read: %v", name, unwrapPathError(err))}
	}
	if len(data) > maxSecretBytes {
		return nil, &secretProblem{CodeInvalid, fmt.Sprintf("secret file %s is larger than %d bytes", name, maxSecretBytes)}
	}
	if len(data) == 0 {
		return nil, &secretProblem{CodeSecretUnreadable, "secret file " + name + " is empty"}
	}
	return data, nil
}

// credentialMode is how stat shows a credential systemd handed the service: 0400 with an ACL
// whose mask, r--, takes the group bits. readSecretFile accepts it once the ACL lets no group
// and no other user read (aclReadersOnlyOwnerAndSelf).
const credentialMode = 0o440

// checkSecretInfo applies the file rules to what Lstat saw.
func checkSecretInfo(name string, info fs.FileInfo) *secretProblem {
	mode := info.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return &secretProblem{CodeSecretInsecure, "secret file " + name + " is a symbolic link; secrets must be regular files"}
	case !mode.IsRegular():
		return &secretProblem{CodeSecretInsecure, "secret file " + name + " is not a regular file"}
	}
	if perm := unixMode(mode); perm != 0o600 && perm != 0o400 && perm != credentialMode {
		return &secretProblem{CodeSecretInsecure, fmt.Sprintf("secret file %s has mode %04o; it must be 0600 or 0400", name, perm)}
	}
	return nil
}

// unixMode returns the permission bits as chmod writes them, special bits included.
func unixMode(mode fs.FileMode) uint32 {
	perm := uint32(mode.Perm())
	if mode&fs.ModeSetuid != 0 {
		perm |= 0o4000
	}
	if mode&fs.ModeSetgid != 0 {
		perm |= 0o2000
	}
	if mode&fs.ModeSticky != 0 {
		perm |= 0o1000
	}
	return perm
}

// unwrapPathError drops the path from an *fs.PathError: the message already names the file.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isSecretFileName reports whether name is one safe path segment.
func isSecretFileName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
