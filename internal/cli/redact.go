package cli

import (
	"bytes"
	"io"
	"slices"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// Every byte a run writes passes the redaction its evidence store applies
// to every call it records (evidence.Store.Redactor, a wire.Redactor over
// the run's credentials): the report files, evidence.json and results.json
// (conform.WriteReports), the step summary, the index of several targets
// (conform.Targets, conform.Merge), and the terminal (terminalGuard, from Main). The redaction cuts a credential in
// any ASCII letter case and in any form a JSON, HTML or URL decoder, or
// several in turn, turns back into it, and keeps valid JSON valid.

// terminalGuard redacts what a command prints, line by line, once the
// command has said which secrets it holds (Stdio.redact); before that,
// lines pass as they are. Main installs one for every command.
type terminalGuard struct {
	mu      sync.Mutex
	secrets []string
	live    *wire.SecretSet
	red     *wire.Redactor
	writers []*guardedWriter
}

// guardedWriter is one stream of a terminalGuard: complete lines are
// written redacted, a partial line waits for its end or for flush.
type guardedWriter struct {
	g   *terminalGuard
	w   io.Writer
	buf []byte
}

func (w *guardedWriter) Write(p []byte) (int, error) {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	w.buf = append(w.buf, p...)
	if i := bytes.LastIndexByte(w.buf, '\n'); i >= 0 {
		line := w.buf[:i+1]
		_, err := w.w.Write(w.g.red.Bytes(line))
		w.buf = append(w.buf[:0], w.buf[i+1:]...)
		if err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// flush writes what waits, redacted; the caller holds g.mu.
func (w *guardedWriter) flush() {
	if len(w.buf) > 0 {
		_, _ = w.w.Write(w.g.red.Bytes(w.buf))
		w.buf = w.buf[:0]
	}
}

// guarded returns s writing through a terminalGuard (s itself when it has
// one), and the function that flushes it at the end.
func (s Stdio) guarded() (Stdio, func()) {
	if s.guard != nil {
		return s, func() {}
	}
	g := &terminalGuard{}
	out, errw := &guardedWriter{g: g, w: s.Out}, &guardedWriter{g: g, w: s.Err}
	g.writers = []*guardedWriter{out, errw}
	s.Out, s.Err, s.guard = out, errw, g
	return s, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, w := range g.writers {
			w.flush()
		}
	}
}

// redact adds secrets to what the terminal never shows, and the secrets
// live learns as the run goes (an OAuth client's tokens; nil: none).
func (s Stdio) redact(secrets []string, live *wire.SecretSet) {
	g := s.guard
	if g == nil || (len(secrets) == 0 && live == nil) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.secrets = slices.Concat(g.secrets, secrets)
	if live != nil {
		g.live = live
	}
	g.red = wire.NewLiveRedactor(g.secrets, g.live, nil)
}
