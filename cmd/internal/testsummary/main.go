package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run summarizes the events of the command args (stdin when there is none) on stdout and
// returns the exit status: the command's own, or 1 when the events report a failure.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := newSummary(stdout) // unbuffered: each package's lines appear when it ends, as go test's do
	if len(args) == 0 {
		if err := s.read(stdin); err != nil {
			fmt.Fprintf(stderr, "testsummary: read the events: %v\n", err)
			return 2
		}
		s.finish()
		if s.failed {
			return 1
		}
		return 0
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = stdin, stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testsummary: %v\n", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testsummary: start %s: %v\n", args[0], err)
		return 2
	}
	// An interrupt or a termination is the command's to handle: it stops its tests and says
	// which were running, and the summary prints what it said before exiting with its status.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer func() {
		signal.Stop(signals)
		close(signals)
	}()
	go func() {
		for sig := range signals {
			_ = cmd.Process.Signal(sig)
		}
	}()
	readErr := s.read(out)
	waitErr := cmd.Wait()
	s.finish()
	if readErr != nil {
		fmt.Fprintf(stderr, "testsummary: read the events of %s: %v\n", args[0], readErr)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	case waitErr != nil:
		fmt.Fprintf(stderr, "testsummary: %s: %v\n", args[0], waitErr)
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()) // as a shell reports a command a signal ended
		}
		return 2
	case readErr != nil:
		return 2
	}
	return 0
}
