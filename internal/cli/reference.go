package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/adcp-conform/adcp-conform/fixtures/seller"
	"github.com/adcp-conform/adcp-conform/internal/release"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/bundle"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// referenceTokenEnv is the variable through which a run against the bundled
// reference seller hands the seller's generated token to its own passes.
const referenceTokenEnv = "ADCP_CONFORM_REFERENCE_TOKEN"

// referenceLiveTokenEnv is the variable through which a run against the
// bundled reference seller hands the token of its live-mode principal to
// its own passes (--live-bearer-env).
const referenceLiveTokenEnv = "ADCP_CONFORM_REFERENCE_LIVE_TOKEN"

// ledgerPath is where the reference seller's ledger lives in the
// repository (it is embedded in the binary).
const ledgerPath = "fixtures/seller/ledger.yaml"

// ReferenceA2A03Dir is the folder, inside --out, of the reports on the
// reference seller's A2A 0.3 face.
const ReferenceA2A03Dir = "a2a-0.3"

// runReference tests the bundled reference seller on every face: one run
// over MCP and A2A 1.0 (one report in --out) and, beside it, one over A2A
// 0.3 (its report in --out/a2a-0.3), since a run takes one A2A target. The seller is
// protected by a bearer token generated for the run (or the one
// --bearer-env names) so the AUTH rules are judged, and the rate-limit
// burst is on. Without --baseline or --certify both runs take the seller's
// ledger as their baseline (fixtures/seller/ledger.yaml: the storyboard
// steps it fails, each with why), so a run that fails exactly those
// passes and shows them as expected failures. The exit code is the worse
// of the two runs'.
func runReference(args []string, c runConfig, post *postConfig, stdio Stdio) error {
	// The flags are checked before the seller starts, so a usage error
	// is one line and nothing else.
	check := c
	check.mcpURL, check.bearerEnv, check.liveBearerEnv = "http://127.0.0.1/mcp", "", ""
	if _, err := check.probeConfig(stdio); err != nil {
		return err
	}
	token := ""
	if c.bearerEnv != "" {
		tok, err := bearerFromEnv(c.bearerEnv, stdio)
		if err != nil {
			return err
		}
		token = tok
	}
	liveToken := ""
	if c.liveBearerEnv != "" {
		tok, err := tokenFromEnv("--live-bearer-env", c.liveBearerEnv, stdio)
		if err != nil {
			return err
		}
		liveToken = tok
	}
	if err := writableOut(c.out); err != nil {
		return err
	}
	var sb *storyboardPlan
	if remoteStoryboards(c.storyboards) && stdio.storyboards == nil {
		p, err := loadStoryboards(c.storyboards) // storyboards.go
		if err != nil {
			return err
		}
		sb = p
	}
	if token == "" {
		token = referenceToken("ref-")
	}
	if liveToken == "" {
		// The seller's live-mode principal: the storyboard steps that
		// authenticate as a live-mode test kit run with its token.
		liveToken = referenceToken("ref-live-")
	}
	if liveToken == token {
		return usagef("--live-bearer-env %s holds the run's own token (--bearer-env): give a live-mode principal's", c.liveBearerEnv)
	}
	// --sandbox starts the seller as a sandbox deployment: its
	// comply_test_controller is wired (never otherwise: a production
	// deployment must not expose it).
	release, from := referenceRelease(c, sb)
	if release != "" {
		fmt.Fprintf(stdio.Err, "adcp-conform: the reference seller serves AdCP %s, the release of %s\n", release, from)
	}
	eps, stop, err := seller.StartAll(context.Background(), seller.Options{BearerToken: token, LiveBearerToken: liveToken, Sandbox: c.sandbox, Release: release})
	if err != nil {
		return fmt.Errorf("starting the reference seller: %w", err)
	}
	defer stop()
	// The A2A 0.3 pass gets a seller of its own: the passes run side by
	// side, and storyboards seed fixtures and create resources under fixed
	// ids (a creative synced twice is "unchanged" the second time).
	eps03, stop03, err := seller.StartAll(context.Background(), seller.Options{BearerToken: token, LiveBearerToken: liveToken, Sandbox: c.sandbox, Release: release})
	if err != nil {
		return fmt.Errorf("starting the reference seller: %w", err)
	}
	defer stop03()
	sub := stdio
	sub.LookupEnv = nil // Getenv below is the passes' environment
	if post.baseline == "" && !post.certify {
		entries, err := certify.ParseBaseline(seller.Ledger(), nil)
		if err != nil {
			return fmt.Errorf("the reference seller's ledger: %w", err) // a build defect: its test parses it
		}
		sub.ledger = entries
		sub.ledgerNotice = fmt.Sprintf("adcp-conform: the reference seller's ledger is the baseline (%s): its known storyboard failures are expected; --baseline FILE replaces it\n", ledgerPath)
	}
	sub.Getenv = func(name string) string {
		switch name {
		case referenceTokenEnv:
			return token
		case referenceLiveTokenEnv:
			return liveToken
		}
		return stdio.getenv(name)
	}
	base := append(append([]string(nil), args...), "--bearer-env", referenceTokenEnv, "--live-bearer-env", referenceLiveTokenEnv)
	if c.rateBurst == 0 {
		base = append(base, "--rate-burst", strconv.Itoa(referenceBurst))
	}
	// The A2A 0.3 pass runs beside the first, against its own seller (each
	// waits on its own webhook receiver); its console lines are printed
	// after the first's. Neither pass prints its summary: one summary of
	// both faces follows.
	faces := []report.Face{{Name: referenceFace, Dir: c.out}, {Name: referenceFace03, Dir: filepath.Join(c.out, ReferenceA2A03Dir)}}
	var out03, err03 bytes.Buffer
	sub03 := sub
	sub03.Out, sub03.Err, sub03.ledgerNotice = &out03, &err03, ""
	sub.face, sub03.face = &faces[0], &faces[1]
	if sb != nil { // fetched once for both passes; the first says so
		sub.storyboards, sub03.storyboards = sb.shared(true), sb.shared(false)
	}
	var second error
	var wg sync.WaitGroup
	wg.Go(func() {
		second = runRun(append(append([]string(nil), base...), "--a2a", eps03.A2A03, "--out", faces[1].Dir), sub03)
	})
	first := runRun(append(append([]string(nil), base...), "--mcp", eps.MCP, "--a2a", eps.A2A10, "--out", faces[0].Dir), sub)
	wg.Wait()
	_, _ = io.Copy(stdio.Out, &out03)
	_, _ = io.Copy(stdio.Err, &err03)
	code := exitCodeOf(worse(first, second))
	if err := report.WriteFacesText(stdio.Out, faces, report.TextOptions{Verbose: c.verbose}, int(code)); err != nil {
		return err
	}
	var runs []*report.Run
	for _, f := range faces {
		if f.Run != nil {
			runs = append(runs, f.Run)
		}
	}
	if err := appendStepSummary(stdio.getenv("GITHUB_STEP_SUMMARY"), wire.NewRedactor([]string{token, liveToken}, nil), runs...); err != nil {
		fmt.Fprintf(stdio.Err, "adcp-conform: step summary: %s\n", wire.Sanitize(err.Error(), 200))
	}
	return worse(first, second)
}

// The faces of the bundled reference seller, as its reports name them.
const (
	referenceFace   = "MCP + A2A 1.0"
	referenceFace03 = "A2A 0.3"
)

// referenceRelease is the release the reference seller serves in a run
// against it, and the flag that chose it: the 3.2 beta (seller.Release32)
// when the run's --storyboards are that release's, or, with no
// --storyboards (or off), its --schemas are, or, with neither, --release
// names it (or 3.2, whose newest release it is), so that what the run
// grades is the release the seller speaks; otherwise "" (the seller's
// default, 3.1, which the run then chooses 3.1.19 for), so a run with no
// flags or with the 3.1.19 folders is what it always was.
func referenceRelease(c runConfig, sb *storyboardPlan) (serves, from string) {
	var rel string
	switch {
	case c.storyboards == "" || c.storyboards == storyboardsOff:
	case sb != nil && sb.release != nil:
		rel, from = sb.release.Version(), "--storyboards"
	case remoteStoryboards(c.storyboards):
		rel, _ = bundle.ReleaseOf(c.storyboards)
		from = "--storyboards"
	default:
		rel, from = (&spec.Release{Dir: c.storyboards}).Version(), "--storyboards"
	}
	if rel == "" && c.schemasDir != "" && c.schemasDir != schemasOff {
		from = "--schemas"
		if strings.HasPrefix(c.schemasDir, "http://") || strings.HasPrefix(c.schemasDir, "https://") {
			rel, _ = schemas.ReleaseOf(c.schemasDir)
		} else {
			rel = filepath.Base(filepath.Clean(c.schemasDir))
		}
	}
	if rel == "" && c.release != "" {
		rel, from = c.release, "--release"
		if w, ok := release.ParseWire(c.release); ok && w.Pre == "" {
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

// worse returns the error with the more serious exit code: a signal, then
// usage, then harness, then non-conformant, then success.
func worse(a, b error) error {
	rank := map[ExitCode]int{ExitTerminated: 6, ExitInterrupted: 5, ExitUsage: 4, ExitHarness: 3, ExitNonConformant: 2, ExitOK: 1}
	if rank[exitCodeOf(b)] > rank[exitCodeOf(a)] {
		return b
	}
	return a
}

// referenceToken is a random bearer token for the reference seller.
func referenceToken(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails
	return prefix + hex.EncodeToString(b)
}
