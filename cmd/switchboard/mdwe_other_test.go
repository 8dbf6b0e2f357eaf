//go:build !linux

package main

import "os"

const mdweLauncherEnv = "SWITCHBOARD_TEST_MDWE_EXEC"

// mdweSupported is false where PR_SET_MDWE does not exist.
func mdweSupported() bool { return false }

// launchUnderMDWE is never reached where mdweSupported is false.
func launchUnderMDWE(string, []string) int { os.Exit(125); return 125 }
