package conform

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/probes/release"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// ledgerPath is where the reference seller's ledger lives in the
// repository (it is embedded in the binary).
const ledgerPath = "fixtures/seller/ledger.yaml"

// ReferenceA2A03Dir is the folder, inside Config.Out, of the reports on the
// reference seller's A2A 0.3 face.
const ReferenceA2A03Dir = "a2a-0.3"

// referenceBurst is the rate-limit burst a run against the bundled
// reference seller makes (it is the harness's own seller; a burst against
// a real seller is opt-in).
const referenceBurst = 40

// The faces of the bundled reference seller, as its reports name them.
const (
	referenceFace   = "MCP + A2A 1.0"
	referenceFace03 = "A2A 0.3"
)

// Reference tests the bundled reference seller (fixtures/seller) on every
// face, the harness's proof of itself: one run over MCP and A2A 1.0 (its
// report in cfg.Out) and, beside it, one over A2A 0.3 (its report in
// cfg.Out/a2a-0.3), since a run takes one A2A target; cfg names no
// target. The seller is protected by cfg.BearerToken, or a token
// generated for the run, so the AUTH rules are judged, and the rate-limit
// burst is on. With no Baseline and no Certify both runs take the
// seller's ledger as their baseline (fixtures/seller/ledger.yaml: the
// storyboard steps it fails, each with why), so a run that fails exactly
// those passes and shows them as expected failures.
//
// It returns both faces, each with its run (nil when that pass ended in
// an error), and the more serious error of the two passes (a
// *ConfigError first). The first pass logs to cfg.Log as it goes, the
// second's lines follow.
func Reference(ctx context.Context, cfg Config) ([]report.Face, error) {
	// The configuration is checked before the seller starts, so a mistake
	// is one line and nothing else.
	check := cfg.withDefaults()
	check.MCP, check.BearerToken, check.LiveBearerToken = "http://127.0.0.1/mcp", "", ""
	if err := check.check(); err != nil {
		return nil, err
	}
	if cfg.MCP != "" || cfg.A2A != "" {
		return nil, configf("the reference run starts its own seller: give no target")
	}
	log := check.Log
	if cfg.Out != "" {
		if err := WritableOut(cfg.Out); err != nil {
			return nil, err
		}
	}
	if cfg.shared == nil && material.Remote(cfg.Storyboards) {
		p, err := material.LoadStoryboards(cfg.Storyboards)
		if err != nil {
			return nil, configErr(err)
		}
		cfg.shared = p
	}
	token, liveToken := cfg.BearerToken, cfg.LiveBearerToken
	if token == "" {
		token = referenceToken("ref-")
	}
	if liveToken == "" {
		// The seller's live-mode principal: the storyboard steps that
		// authenticate as a live-mode test kit run with its token.
		liveToken = referenceToken("ref-live-")
	}
	if liveToken == token {
		return nil, configf("the live-mode token (--live-bearer-env) is the run's own token (--bearer-env): give a live-mode principal's")
	}
	// Sandbox starts the seller as a sandbox deployment: its
	// comply_test_controller is wired (never otherwise: a production
	// deployment must not expose it).
	rel, from := referenceRelease(cfg)
	if rel != "" {
		fmt.Fprintf(log, "adcp-conform: the reference seller serves AdCP %s, the release of %s\n", rel, from)
	}
	opts := seller.Options{BearerToken: token, LiveBearerToken: liveToken, Sandbox: cfg.Sandbox, Release: rel}
	eps, stop, err := seller.StartAll(context.Background(), opts)
	if err != nil {
		return nil, fmt.Errorf("starting the reference seller: %w", err)
	}
	defer stop()
	// The A2A 0.3 pass gets a seller of its own: the passes run side by
	// side, and storyboards seed fixtures and create resources under fixed
	// ids (a creative synced twice is "unchanged" the second time).
	eps03, stop03, err := seller.StartAll(context.Background(), opts)
	if err != nil {
		return nil, fmt.Errorf("starting the reference seller: %w", err)
	}
	defer stop03()
	base := cfg
	base.BearerToken, base.LiveBearerToken = token, liveToken
	if base.RateBurst == 0 {
		base.RateBurst = referenceBurst
	}
	if cfg.Baseline == nil && !cfg.Certify {
		entries, err := certify.ParseBaseline(seller.Ledger(), nil)
		if err != nil {
			return nil, fmt.Errorf("the reference seller's ledger: %w", err) // a build defect: its test parses it
		}
		base.Baseline = entries
		base.ledgerNotice = fmt.Sprintf("adcp-conform: the reference seller's ledger is the baseline (%s): its known storyboard failures are expected; --baseline FILE replaces it\n", ledgerPath)
	}
	// The A2A 0.3 pass runs beside the first, against its own seller (each
	// waits on its own webhook receiver); its log lines follow the
	// first's.
	faces := []report.Face{{Name: referenceFace, Dir: cfg.Out}, {Name: referenceFace03, Dir: filepath.Join(cfg.Out, ReferenceA2A03Dir)}}
	if cfg.Out == "" {
		faces[1].Dir = ""
	}
	first, second := base, base
	first.MCP, first.A2A, first.face, first.Log = eps.MCP, eps.A2A10, &faces[0], log
	var log03 bytes.Buffer
	second.A2A, second.Out, second.face, second.Log, second.ledgerNotice = eps03.A2A03, faces[1].Dir, &faces[1], &log03, ""
	if cfg.shared != nil { // fetched once for both passes; the first says so
		first.shared, second.shared = cfg.shared.Shared(true), cfg.shared.Shared(false)
	}
	var err2 error
	var wg sync.WaitGroup
	wg.Go(func() { faces[1].Run, err2 = Run(ctx, second) })
	var err1 error
	faces[0].Run, err1 = Run(ctx, first)
	wg.Wait()
	_, _ = io.Copy(log, &log03)
	return faces, worse(err1, err2)
}

// worse is the more serious of two errors: a configuration refused, then
// any other.
func worse(a, b error) error {
	if _, ok := b.(*ConfigError); ok || a == nil {
		if _, ok := a.(*ConfigError); !ok {
			return b
		}
	}
	return a
}

// referenceRelease is the release the reference seller serves in a run
// against it, and the flag that chose it: the 3.2 beta (seller.Release32)
// when the run's Storyboards are that release's, or, with no Storyboards
// (or off), its Schemas are, or, with neither, Release names it (or 3.2,
// whose newest release it is), so that what the run grades is the release
// the seller speaks; otherwise "" (the seller's default, 3.1, which the
// run then chooses 3.1.19 for), so a run with no material named or with
// the 3.1.19 folders is what it always was.
func referenceRelease(c Config) (serves, from string) {
	var rel string
	switch sb := c.shared; {
	case c.Storyboards == "" || c.Storyboards == material.Off:
	case sb != nil && sb.Release != nil:
		rel, from = sb.Release.Version(), "--storyboards"
	case material.Remote(c.Storyboards):
		rel, _ = release.Storyboards.ReleaseOf(c.Storyboards)
		from = "--storyboards"
	default:
		rel, from = (&spec.Release{Dir: c.Storyboards}).Version(), "--storyboards"
	}
	if rel == "" && c.Schemas != "" && c.Schemas != material.Off {
		from = "--schemas"
		if strings.HasPrefix(c.Schemas, "http://") || strings.HasPrefix(c.Schemas, "https://") {
			rel, _ = release.Schemas.ReleaseOf(c.Schemas)
		} else {
			rel = filepath.Base(filepath.Clean(c.Schemas))
		}
	}
	if rel == "" && c.Release != "" {
		rel, from = c.Release, "--release"
		if w, ok := release.ParseWire(c.Release); ok && w.Pre == "" {
			// A version pin takes its newest release: 3.2's is the beta
			// the seller serves.
			if b, _ := release.ParseWire(seller.Release32); b.Major == w.Major && b.Minor == w.Minor {
				rel = seller.Release32
			}
		}
	}
	if seller.WireRelease(rel) == seller.Release32 {
		return seller.Release32, from
	}
	return "", ""
}

// referenceToken is a random bearer token for the reference seller.
func referenceToken(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails
	return prefix + hex.EncodeToString(b)
}
