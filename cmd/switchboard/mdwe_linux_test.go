package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// deploy/switchboard.service sets MemoryDenyWriteExecute=yes. Linux's own form of it,
// prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN), refuses every mapping that is writable and
// executable and survives execve, so a test can run the binary under the same rule.
const (
	prSetMDWE             = 65
	prGetMDWE             = 66
	prMDWERefuseExecGain  = 1
	mdweLauncherEnv       = "SWITCHBOARD_TEST_MDWE_EXEC"
	mdweLauncherExitCode  = 125
	mdweLauncherErrPrefix = "mdwe launcher: "
)

// mdweSupported reports whether the kernel knows PR_SET_MDWE (Linux 6.3 and later).
func mdweSupported() bool {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetMDWE, 0, 0)
	return errno == 0
}

// launchUnderMDWE turns memory-deny-write-execute on for this process and executes program
// with args in its place (same pid, environment less mdweLauncherEnv). It returns only on
// failure, with the exit code to use.
func launchUnderMDWE(program string, args []string) int {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetMDWE, prMDWERefuseExecGain, 0); errno != 0 {
		fmt.Fprintln(os.Stderr, mdweLauncherErrPrefix+"prctl(PR_SET_MDWE):", errno)
		return mdweLauncherExitCode
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, mdweLauncherEnv+"=") {
			env = append(env, kv)
		}
	}
	err := syscall.Exec(program, append([]string{program}, args...), env)
	fmt.Fprintln(os.Stderr, mdweLauncherErrPrefix+"exec:", err)
	return mdweLauncherExitCode
}
