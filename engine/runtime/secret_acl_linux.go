package runtime

import (
	"encoding/binary"
	"os"
	"syscall"
	"unsafe"
)

// The POSIX access ACL as Linux stores it in the system.posix_acl_access attribute: a little-
// endian version 2 header, then 8-byte entries of tag, permissions and id.
const (
	aclXattr      = "system.posix_acl_access"
	aclVersion    = 2
	aclUser       = 0x02 // a named user
	aclGroupObj   = 0x04 // the owning group
	aclGroup      = 0x08 // a named group
	aclOther      = 0x20
	aclRead       = 0x04
	aclHeaderSize = 4
	aclEntrySize  = 8
)

// aclReadersOnlyOwnerAndSelf reports whether the opened file's access ACL lets nobody read it
// but its owner and this process's user. That is how systemd hands a service its credentials
// ($CREDENTIALS_DIRECTORY): the file is 0400 and an ACL entry gives the service's user read
// access, so stat shows the ACL's mask, r--, in the group bits (0440) although no group may
// read. A file without an ACL whose mode is 0440 lets its group read, and is refused.
func aclReadersOnlyOwnerAndSelf(f *os.File) bool {
	buf := make([]byte, 1024)
	n, err := fgetxattr(f, aclXattr, buf)
	if err != nil || n < aclHeaderSize || (n-aclHeaderSize)%aclEntrySize != 0 {
		return false
	}
	if binary.LittleEndian.Uint32(buf) != aclVersion {
		return false
	}
	self := uint32(os.Geteuid())
	for e := buf[aclHeaderSize:n]; len(e) > 0; e = e[aclEntrySize:] {
		tag, perm, id := binary.LittleEndian.Uint16(e), binary.LittleEndian.Uint16(e[2:]), binary.LittleEndian.Uint32(e[4:])
		switch {
		case tag == aclUser && perm&aclRead != 0 && id != self,
			(tag == aclGroupObj || tag == aclGroup || tag == aclOther) && perm != 0:
			return false
		}
	}
	return true
}

// fgetxattr reads the extended attribute name of the opened file (the standard library has
// only the form that takes a path, which could name another file by now).
func fgetxattr(f *os.File, name string, dest []byte) (int, error) {
	attr, err := syscall.BytePtrFromString(name)
	if err != nil {
		return 0, err
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n uintptr
	var errno syscall.Errno
	cerr := raw.Control(func(fd uintptr) {
		n, _, errno = syscall.Syscall6(syscall.SYS_FGETXATTR, fd, uintptr(unsafe.Pointer(attr)),
			uintptr(unsafe.Pointer(&dest[0])), uintptr(len(dest)), 0, 0)
	})
	if cerr != nil {
		return 0, cerr
	}
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
