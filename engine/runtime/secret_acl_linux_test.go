package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// aclEntry is one entry of a POSIX access ACL.
type aclEntry struct {
	tag, perm uint16
	id        uint32
}

const (
	aclUserObj = 0x01
	aclMask    = 0x10
	noID       = 0xffffffff
)

// setACL gives path the access ACL made of the owner's r--, entries, and mask r--, as
// `setfacl` would; the kernel then shows the mask in the group bits of the mode.
func setACL(t *testing.T, path string, group, other uint16, named ...aclEntry) {
	t.Helper()
	entries := append([]aclEntry{{aclUserObj, aclRead, noID}}, named...)
	entries = append(entries, aclEntry{aclGroupObj, group, noID}, aclEntry{aclMask, aclRead | group, noID}, aclEntry{aclOther, other, noID})
	sort.Slice(entries, func(i, j int) bool { // the kernel wants them by tag, then id
		return entries[i].tag < entries[j].tag || entries[i].tag == entries[j].tag && entries[i].id < entries[j].id
	})
	var buf bytes.Buffer
	_ = binary.Write(&buf, binary.LittleEndian, uint32(aclVersion))
	for _, e := range entries {
		_ = binary.Write(&buf, binary.LittleEndian, e)
	}
	if err := syscall.Setxattr(path, aclXattr, buf.Bytes(), 0); err != nil {
		if errors.Is(err, syscall.ENOTSUP) {
			t.Skipf("the file system of %s has no ACLs", path)
		}
		t.Fatalf("set the ACL of %s: %v", path, err)
	}
}

// A secret handed over by systemd's LoadCredential to a service's own user reads as mode 0440:
// the file is 0400 and an ACL entry lets that user read, its mask showing in the group bits.
// Such a file is accepted when the ACL lets no one else read; a real 0440 is not.
func TestSecretFileCredentialACL(t *testing.T) {
	t.Parallel()
	self := uint32(os.Geteuid())
	tests := []struct {
		name         string
		group, other uint16
		named        []aclEntry
		ok           bool
	}{
		{name: "this process's user may read", named: []aclEntry{{aclUser, aclRead, self}}, ok: true},
		{name: "another user may read", named: []aclEntry{{aclUser, aclRead, self + 4242}}},
		{name: "the owning group may read", group: aclRead, named: []aclEntry{{aclUser, aclRead, self}}},
		{name: "a named group may read", named: []aclEntry{{aclUser, aclRead, self}, {aclGroup, aclRead, 4242}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			p := b.secret(t, "key", auditKeyValue, 0o400)
			setACL(t, p, tc.group, tc.other, tc.named...)
			info, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != credentialMode {
				t.Fatalf("mode with the ACL = %04o, want %04o (the mask in the group bits)", got, credentialMode)
			}
			rt, err := b.load(t, auditFrom("secret:file/key"))
			if tc.ok {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if !bytes.Equal(rt.Audit.Key.Value(), []byte(auditKeyValue)) {
					t.Errorf("audit key = %q", rt.Audit.Key.Value())
				}
				return
			}
			d := requireDiag(t, err, CodeSecretInsecure, "audit.keyRef")
			if !strings.Contains(d.Message, "mode 0440") {
				t.Errorf("diagnostic = %v, want it to name mode 0440", d)
			}
		})
	}
	t.Run("no ACL", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.secret(t, "key", auditKeyValue, credentialMode)
		_, err := b.load(t, auditFrom("secret:file/key"))
		requireDiag(t, err, CodeSecretInsecure, "audit.keyRef")
	})
}
