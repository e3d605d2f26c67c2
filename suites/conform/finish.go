package conform

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

// The report files a run writes into Config.Out.
const (
	FileJUnit    = "junit.xml"
	FileHTML     = "report.html"
	FileResults  = "results.json"
	FileEvidence = "evidence.json"
	// FileSignature is the signature of results.json a run writes with
	// Config.SignKey (--sign-key).
	FileSignature = certify.SignatureFile
)

// sealed are the files of a report folder whose SHA-256 results.json
// embeds (the ones present).
var sealed = []string{FileEvidence, FileJUnit, FileHTML}

// Finish is what happens to a judged report between judging and writing:
// certification, baseline, signature. Run finishes its run with its
// Config's; the command line's judge command with the recorded run's.
type Finish struct {
	// Certify marks the run a certification run (Config.Certify).
	Certify bool
	// Baseline are the expected failures (Config.Baseline).
	Baseline []report.BaselineEntry
	// SignKey, when set, signs results.json (Config.SignKey).
	SignKey ed25519.PrivateKey
	// Stop, when set, says why evidence.json must stop being written (the
	// run interrupted, or out of time): the calls left are named as
	// omitted in it, so the reports are written in time.
	Stop func() string
}

// WriteReports completes a judged run and writes its folder dir: it
// records the judge options sel holds, applies the results contract's
// redaction rules, the baseline and the certification marks, writes every
// report through the store's redaction (the others at once, then
// results.json), embeds the other files' hashes and the evidence's in
// results.json and signs it (or removes a signature left from before).
func WriteReports(dir string, run *report.Run, store *evidence.Store, sel runner.Selection, p Finish) error {
	p.settle(run, sel)
	written, hashes, err := writeReports(dir, run, store, p.Stop)
	if err != nil {
		return err
	}
	if left := len(store.Calls()) - len(written); left > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("%s holds the first %d recorded calls of %d: %s while writing it", FileEvidence, len(written), len(written)+left, p.Stop()))
	}
	in := &report.Integrity{Algorithm: certify.Algorithm, Files: []report.FileHash{}, Calls: []report.CallHash{}}
	for _, f := range sealed {
		in.Files = append(in.Files, hashes[f])
	}
	for i, c := range written {
		in.Calls = append(in.Calls, report.CallHash{Index: i, ProbeID: c.ProbeID, SHA256: c.SHA256})
	}
	run.Integrity = in
	b, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return err
	}
	b = store.Redactor().Bytes(append(b, '\n')) // as every report
	if err := os.WriteFile(filepath.Join(dir, FileResults), b, 0o644); err != nil {
		return err
	}
	sigPath := filepath.Join(dir, FileSignature)
	if p.SignKey == nil {
		if err := os.Remove(sigPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	sig, err := certify.Sign(p.SignKey, b)
	if err != nil {
		return err
	}
	return os.WriteFile(sigPath, sig, 0o644)
}

// settle records the judge options sel holds in run and settles its
// verdict: the contract's redaction rules, the baseline entries in the
// run's scope, the certification marks. A run with no folder is settled
// as one written.
func (p Finish) settle(run *report.Run, sel runner.Selection) {
	run.AllowedDomains = sel.Options.AllowedDomains
	if sel.Options.Schemas != nil {
		run.SchemasRelease = sel.Options.Schemas.Release()
	}
	run.Transports = nil
	for _, t := range sel.Options.Transports {
		run.Transports = append(run.Transports, string(t))
	}
	certify.Contract(run)
	run.Baseline = nil // the entries in the run's scope (release, --sandbox)
	for _, e := range p.Baseline {
		if e.AppliesTo(run.StoryboardsRelease, run.Sandbox) {
			run.Baseline = append(run.Baseline, e)
		}
	}
	run.Settle()
	certify.Mark(run, p.Certify)
}

// writeReports writes the report files but results.json into dir, whatever
// the verdict, through the store's redaction: evidence.json only as long
// as stop (nil: never) gives no reason. The files are written at once, one
// goroutine each: the seller idles while a run writes, and the largest
// (report.html, evidence.json) take about the same time. A results.json
// left from an earlier run is removed first, so a folder whose writing
// failed never holds one that names files it does not. It returns the
// calls evidence.json holds and the hash of each file, both taken as they
// were written: sealing the folder reads nothing back (evidence.json may
// be hundreds of megabytes).
func writeReports(dir string, run *report.Run, store *evidence.Store, stop func() string) ([]evidence.Written, map[string]report.FileHash, error) {
	if err := os.Remove(filepath.Join(dir, FileResults)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	red := store.Redactor()
	write := func(name string, fn func(io.Writer) error) (report.FileHash, error) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return report.FileHash{}, err
		}
		h := sha256.New()
		n := &counter{}
		// The hash is of the bytes the file holds: redacted.
		w := red.Writer(io.MultiWriter(f, h, n))
		if err := fn(w); err != nil {
			f.Close()
			return report.FileHash{}, fmt.Errorf("writing %s: %w", name, err)
		}
		if err := w.Close(); err != nil {
			f.Close()
			return report.FileHash{}, fmt.Errorf("writing %s: %w", name, err)
		}
		return report.FileHash{Name: name, Size: n.n, SHA256: hex.EncodeToString(h.Sum(nil))}, f.Close()
	}
	var written []evidence.Written
	files := []struct {
		name string
		fn   func(io.Writer) error
	}{
		{FileEvidence, func(w io.Writer) (err error) { // call by call: it may hold --max-total about three times
			written, err = store.WriteJSONUntil(w, stop)
			return err
		}},
		{FileHTML, func(w io.Writer) error { return report.WriteHTML(w, run) }},
		{FileJUnit, func(w io.Writer) error { return report.WriteJUnit(w, run) }},
	}
	got := make([]report.FileHash, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() { got[i], errs[i] = write(f.name, f.fn) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	hashes := map[string]report.FileHash{}
	for _, h := range got {
		hashes[h.Name] = h
	}
	return written, hashes, nil
}

// counter counts the bytes written through it.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
