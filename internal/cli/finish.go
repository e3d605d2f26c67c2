package cli

import (
	"crypto/ed25519"
	"flag"

	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

// The report files a run writes into --out.
const (
	FileJUnit     = conform.FileJUnit
	FileHTML      = conform.FileHTML
	FileResults   = conform.FileResults
	FileEvidence  = conform.FileEvidence
	FileSignature = conform.FileSignature
)

// postConfig are the flags of what happens to a report between judging
// and writing (conform.Finish): certification, baseline, signature. run
// and judge share them.
type postConfig struct {
	signKey  string
	certify  bool
	baseline string

	priv     ed25519.PrivateKey
	expected []report.BaselineEntry
}

// addPostFlags registers --sign-key, --certify and --baseline on fs.
func addPostFlags(fs *flag.FlagSet, withRunFlags bool) *postConfig {
	p := &postConfig{}
	fs.StringVar(&p.signKey, "sign-key", "", "the Ed25519 private key `FILE` (PEM, from 'adcp-conform keygen') to sign results.json with; writes "+FileSignature)
	if withRunFlags {
		fs.BoolVar(&p.certify, "certify", false, "certification run: every rule, no --label-filter, no --baseline; an HTTPS target is required to publish")
		fs.StringVar(&p.baseline, "baseline", "", "YAML or JSON `FILE` of expected failures: {expected_failures: [{rule: CTX-01, reason: …}]}")
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

// finish is how the run's report is finished and written.
func (p *postConfig) finish() conform.Finish {
	return conform.Finish{Certify: p.certify, Baseline: p.expected, SignKey: p.priv}
}
