package cli

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// runSignals watches for SIGINT and SIGTERM during a run: the first one
// cancels the probes at once, makes every rule not yet judged a harness
// error, and lets the run write the reports it can before it exits with
// the conventional code. The harness's own handler is installed before
// Ginkgo's, so a signal is never swallowed by the judging phase.
type runSignals struct {
	got  atomic.Value // os.Signal
	at   atomic.Int64 // when it arrived (Unix nanoseconds)
	ch   chan os.Signal
	done chan struct{}
}

func onSignal(cancel func()) *runSignals {
	s := &runSignals{ch: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-s.ch:
			s.at.Store(time.Now().UnixNano())
			s.got.Store(sig)
			cancel()
			// A second Ctrl-C ends the process at once.
			signal.Reset(os.Interrupt, syscall.SIGTERM)
		case <-s.done:
		}
	}()
	return s
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

// since is how long ago the signal arrived; false before one did.
func (s *runSignals) since() (time.Duration, bool) {
	if s.name() == "" {
		return 0, false
	}
	return time.Since(time.Unix(0, s.at.Load())), true
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
