package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// runSignals watches for SIGINT and SIGTERM during a run: the first one
// cancels the run's context, its cause "interrupted by SIGINT" (or
// SIGTERM): conform.Run stops probing at once, makes every rule not yet
// judged a harness error, and writes the reports it can before the
// command exits with the conventional code. The harness's own handler is
// installed before Ginkgo's, so a signal is never swallowed by the
// judging phase.
type runSignals struct {
	got  atomic.Value // os.Signal
	ch   chan os.Signal
	done chan struct{}
}

// onSignal returns the context of a run the first signal cancels.
func onSignal() (context.Context, *runSignals) {
	ctx, cancel := context.WithCancelCause(context.Background())
	s := &runSignals{ch: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-s.ch:
			s.got.Store(sig)
			cancel(errors.New("interrupted by " + s.name()))
			// A second Ctrl-C ends the process at once.
			signal.Reset(os.Interrupt, syscall.SIGTERM)
		case <-s.done:
			cancel(nil)
		}
	}()
	return ctx, s
}

// name is "SIGINT" or "SIGTERM" once one arrived, else "".
func (s *runSignals) name() string {
	switch s.got.Load() {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return ""
}

// exitCode is 128 + the signal that ended the run, or ExitOK.
func (s *runSignals) exitCode() ExitCode {
	switch s.got.Load() {
	case os.Interrupt:
		return ExitInterrupted
	case syscall.SIGTERM:
		return ExitTerminated
	}
	return ExitOK
}

func (s *runSignals) stop() {
	signal.Stop(s.ch)
	close(s.done)
}
