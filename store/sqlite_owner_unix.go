//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockOwner takes, without waiting, the exclusive flock(2) of the lock file beside the database
// at path (path + ".lock", created 0600), and writes this process's id into it. The lock holds
// until the returned file is closed, or the process ends however it ends. Another process
// holding it (or another open of it in this process) gives ErrInUse, naming that process.
func lockOwner(path string) (*os.File, error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, privateFile)
	if err != nil {
		return nil, fmt.Errorf("store: open the lock file %s: %w", name, err)
	}
	if err := makePrivate(name); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("store: make %s private: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := lockHolder(f)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s holds %s", ErrInUse, holder, name)
		}
		return nil, fmt.Errorf("store: lock %s: %w", name, err)
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("store: write the lock file %s: %w", name, err)
	}
	return f, nil
}

// lockHolder names the process whose id the lock file holds, for the error.
func lockHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
		return "process " + strconv.Itoa(pid)
	}
	return "another process"
}
