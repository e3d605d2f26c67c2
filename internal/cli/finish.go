package cli

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
	"github.com/adcp-conform/adcp-conform/suites/runner"
)

// FileSignature is the signature of results.json a run writes with
// --sign-key.
const FileSignature = certify.SignatureFile

// sealed are the files of a report folder whose SHA-256 results.json
// embeds (the ones present).
var sealed = []string{FileEvidence, FileJUnit, FileHTML}

// postConfig is what happens to a report between judging and writing:
// certification, baseline, signature. run and judge share it.
type postConfig struct {
	signKey  string
	certify  bool
	baseline string

	priv     ed25519.PrivateKey
	expected []report.BaselineEntry
	// stop, when set, says why the evidence must stop being written (the
	// run interrupted, or out of time): the calls left are named as
	// omitted in evidence.json, so the reports are written in time.
	stop func() string
}

// addPostFlags registers --sign-key, --certify and --baseline on fs.
func addPostFlags(fs *flag.FlagSet, withRunFlags bool) *postConfig {
	p := &postConfig{}
	fs.StringVar(&p.signKey, "sign-key", "", "Ed25519 private key (PEM, from 'adcp-conform keygen') to sign results.json with; writes "+FileSignature)
	if withRunFlags {
		fs.BoolVar(&p.certify, "certify", false, "certification run: every rule, no --label-filter, no --baseline; an HTTPS target is required to publish")
		fs.StringVar(&p.baseline, "baseline", "", "YAML or JSON file of expected failures: {expected_failures: [{rule: CTX-01, reason: …}]}")
	}
	return p
}

// prepare checks the flags against the label filter and loads the key and
// the baseline, before anything is probed.
func (p *postConfig) prepare(labelFilter string) error {
	if p.certify && labelFilter != "" {
		return usagef("--certify judges every rule: it cannot be combined with --label-filter")
	}
	if p.certify && p.baseline != "" {
		return usagef("--certify judges every rule as it is: it cannot be combined with --baseline")
	}
	if p.signKey != "" {
		k, err := certify.ReadPrivateKey(p.signKey)
		if err != nil {
			return usagef("--sign-key: %v", err)
		}
		p.priv = k
	}
	if p.baseline != "" {
		entries, err := certify.LoadBaseline(p.baseline, func(id string) bool {
			_, ok := catalogue.Lookup(id)
			return ok
		})
		if err != nil {
			return usagef("--baseline: %v", err)
		}
		p.expected = entries
	}
	return nil
}

// finish completes a judged run and writes its folder: it records the judge
// options, applies the contract's redaction rules, the baseline and the
// certification marks, writes every report, embeds the evidence hashes in
// results.json and signs it (or removes a signature left from before).
func (p *postConfig) finish(dir string, run *report.Run, store *evidence.Store, sel runner.Selection) error {
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
	for _, e := range p.expected {
		if e.AppliesTo(run.StoryboardsRelease, run.Sandbox) {
			run.Baseline = append(run.Baseline, e)
		}
	}
	run.Settle()
	certify.Mark(run, p.certify)
	written, hashes, err := writeReports(dir, run, store, p.stop)
	if err != nil {
		return err
	}
	if left := len(store.Calls()) - len(written); left > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("%s holds the first %d recorded calls of %d: %s while writing it", FileEvidence, len(written), len(written)+left, p.stop()))
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
	b = store.Redactor().Bytes(append(b, '\n')) // as every report (redact.go)
	if err := os.WriteFile(filepath.Join(dir, FileResults), b, 0o644); err != nil {
		return err
	}
	sigPath := filepath.Join(dir, FileSignature)
	if p.priv == nil {
		if err := os.Remove(sigPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	sig, err := certify.Sign(p.priv, b)
	if err != nil {
		return err
	}
	return os.WriteFile(sigPath, sig, 0o644)
}
