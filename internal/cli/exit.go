package cli

import (
	"errors"
	"fmt"

	"github.com/adcp-conform/adcp-conform/internal/material"
)

// ExitCode is the process exit status. Its values are a contract that CI
// scripts rely on.
type ExitCode int

const (
	// ExitOK means every applicable MUST rule passed (or the command
	// succeeded).
	ExitOK ExitCode = 0
	// ExitNonConformant means a MUST rule failed (or a SHOULD rule with
	// --strict).
	ExitNonConformant ExitCode = 1
	// ExitUsage means a usage or configuration error: bad flags, bad input.
	ExitUsage ExitCode = 2
	// ExitHarness means the harness or the network failed: target
	// unreachable, run deadline hit. It is never counted against the seller.
	ExitHarness ExitCode = 3
	// ExitInterrupted and ExitTerminated are the shell's conventional
	// codes (128 + the signal) for a run ended by SIGINT (Ctrl-C) or
	// SIGTERM; the reports it could write are written, verdict
	// harness_error.
	ExitInterrupted ExitCode = 130
	ExitTerminated  ExitCode = 143
)

// UsageError is a usage or configuration problem. It maps to ExitUsage, and
// when ShowUsage is set the command's usage is printed after the message.
type UsageError struct {
	Msg       string
	ShowUsage bool
}

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// exitCodeOf maps an error returned by a command to its exit code.
func exitCodeOf(err error) ExitCode {
	if err == nil {
		return ExitOK
	}
	var ue *UsageError
	var me *material.UsageError
	if errors.As(err, &ue) || errors.As(err, &me) {
		return ExitUsage
	}
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	return ExitHarness
}

// codeError carries an explicit exit code with an optional message.
type codeError struct {
	code ExitCode
	msg  string
}

func (e *codeError) Error() string { return e.msg }
