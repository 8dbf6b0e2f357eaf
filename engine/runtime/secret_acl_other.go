//go:build !linux

package runtime

import "os"

// aclReadersOnlyOwnerAndSelf is false where the ACL is not read: a 0440 secret file is refused.
func aclReadersOnlyOwnerAndSelf(*os.File) bool { return false }
