package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/conform"
)

// MaxTargets bounds the targets of one --targets file.
const MaxTargets = 10000

// The files of a multi-target run: the index across targets, and each
// target's own console output in its folder.
const (
	FileIndexHTML = "index.html"
	FileIndexJSON = "index.json"
	FileRunLog    = "run.log"
)

// Target is one seller of a --targets file.
type Target struct {
	// Name labels the target in the index; default: its folder name.
	Name string `json:"name,omitempty"`
	// MCP and A2A are the seller's endpoints, as --mcp and --a2a; at least
	// one is required.
	MCP string `json:"mcp,omitempty"`
	A2A string `json:"a2a,omitempty"`
	// BearerEnv names the environment variable holding this target's
	// bearer token, as --bearer-env.
	BearerEnv string `json:"bearer_env,omitempty"`
	// OAuthKeys are its OAuth client credentials, as the --oauth-* flags
	// (oauth_token_url, oauth_client_id, …; oauthcc.go).
	OAuthKeys
	// Out is the target's folder under --out; default: from Name, else the
	// endpoint's host, made unique.
	Out string `json:"out,omitempty"`
}

// LoadTargets reads a targets file, YAML or JSON: a list of targets, or an
// object {"targets": [...]}. Each target gets a unique, safe Out.
func LoadTargets(path string) ([]Target, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ts []Target
	if err := yaml.UnmarshalStrict(b, &ts); err != nil {
		var wrapped struct {
			Targets []Target `json:"targets"`
		}
		if err2 := yaml.UnmarshalStrict(b, &wrapped); err2 != nil {
			return nil, fmt.Errorf("%s: want a list of targets or {targets: [...]}: %v", path, err)
		}
		ts = wrapped.Targets
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("%s: no targets", path)
	}
	if len(ts) > MaxTargets {
		return nil, fmt.Errorf("%s: %d targets, at most %d", path, len(ts), MaxTargets)
	}
	used := map[string]bool{}
	for i := range ts {
		t := &ts[i]
		for _, f := range [][2]string{{"mcp", t.MCP}, {"a2a", t.A2A}} {
			if f[1] != "" && strings.TrimSpace(f[1]) == "" { // an unexpanded template variable, say
				return nil, fmt.Errorf("%s: target %d: %s is blank: give the seller's URL, or leave %s out", path, i+1, f[0], f[0])
			}
		}
		if t.MCP == "" && t.A2A == "" {
			return nil, fmt.Errorf("%s: target %d has neither mcp nor a2a", path, i+1)
		}
		if t.Out != "" && safeName(t.Out) != t.Out {
			return nil, fmt.Errorf("%s: target %d: out %q must be a plain folder name ([A-Za-z0-9._-], not . or ..)", path, i+1, wire.Sanitize(t.Out, 80))
		}
		if t.BearerEnv != "" && (!envNameRE.MatchString(t.BearerEnv) || looksLikeSecret(t.BearerEnv)) {
			return nil, fmt.Errorf("%s: target %d: bearer_env wants the name of an environment variable holding the token, not the token itself (the value is not repeated here)", path, i+1)
		}
		if err := t.OAuthKeys.check(t.BearerEnv); err != nil {
			return nil, fmt.Errorf("%s: target %d: %v", path, i+1, err)
		}
		base := t.Out
		if base == "" {
			base = safeName(t.Name)
		}
		if base == "" {
			base = safeName(hostOf(t.MCP, t.A2A))
		}
		if base == "" {
			base = "target"
		}
		name := base
		for n := 2; used[name]; n++ {
			if t.Out != "" {
				return nil, fmt.Errorf("%s: target %d: out %q is used twice", path, i+1, t.Out)
			}
			name = fmt.Sprintf("%s-%d", base, n)
		}
		used[name] = true
		t.Out = name
		if t.Name == "" {
			t.Name = name
		}
	}
	return ts, nil
}

var (
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	unsafeChar = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
)

// safeName turns s into a folder name: [A-Za-z0-9._-], at most 64 bytes,
// never "." or "..".
func safeName(s string) string {
	s = strings.Trim(unsafeChar.ReplaceAllString(s, "-"), "-.")
	if len(s) > 64 {
		s = strings.Trim(s[:64], "-.")
	}
	return s
}

func hostOf(urls ...string) string {
	for _, u := range urls {
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			return p.Host
		}
	}
	return ""
}

// runTargets runs one target of --targets after another, at most
// --parallel-targets at a time, each with the rest of the command line
// into its own folder under --out, then writes the index across them. Its
// exit code is the worst of the targets' (see Index.exit).
func runTargets(c *runConfig, stdio Stdio) error {
	if c.mcpURL != "" || c.a2aURL != "" || c.bearerEnv != "" {
		return usagef("--targets names each target's --mcp, --a2a and --bearer-env; do not give them too")
	}
	if c.liveBearerEnv != "" {
		return usagef("--live-bearer-env is the live-mode credential of one seller: run that target on its own (--mcp or --a2a), not with --targets")
	}
	if c.tune.parallelTargets < 1 || c.tune.parallelTargets > MaxParallel {
		return usagef("--parallel-targets must be between 1 and %d", MaxParallel)
	}
	targets, err := LoadTargets(c.tune.targets)
	if err != nil {
		return usagef("--targets: %v", err)
	}
	if err := conform.WritableOut(c.out); err != nil {
		return runError(err)
	}
	base, err := c.config(stdio)
	if err != nil {
		return err
	}
	// A published bundle is fetched once for every target.
	if base, err = base.Prefetch(); err != nil {
		return runError(err)
	}
	// The index and the terminal never show a target's token nor a
	// credential header, whatever a target's seller put in its results.
	var secrets []string
	for _, t := range targets {
		if t.BearerEnv != "" {
			secrets = append(secrets, wire.Secrets(stdio.getenv(t.BearerEnv), nil)...)
		}
		if t.OAuthClientSecretEnv != "" {
			secrets = append(secrets, wire.Secrets(stdio.getenv(t.OAuthClientSecretEnv), nil)...)
		}
	}
	secrets = append(secrets, wire.Secrets("", base.Header)...)
	stdio.redact(secrets, nil)
	ctx, sig := onSignal() // signal.go
	defer sig.stop()
	started := time.Now()
	codes := make([]ExitCode, len(targets))
	sem := make(chan struct{}, c.tune.parallelTargets)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	for i, t := range targets {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			codes[i] = runOneTarget(ctx, sig, c, base, t, filepath.Join(c.out, t.Out), stdio)
			mu.Lock()
			done++
			fmt.Fprintf(stdio.Err, "adcp-conform: [%d/%d] %s: exit %d\n", done, len(targets), wire.Sanitize(t.Name, 80), codes[i])
			mu.Unlock()
		})
	}
	wg.Wait()
	entries := make([]indexSource, len(targets))
	for i, t := range targets {
		entries[i] = indexSource{name: t.Name, dir: filepath.Join(c.out, t.Out), code: codes[i]}
	}
	idx := buildIndex(c.out, entries)
	idx.DurationMS = float64(time.Since(started).Microseconds()) / 1000
	if err := writeIndex(c.out, idx, wire.NewRedactor(secrets, nil)); err != nil {
		return err
	}
	writeIndexText(stdio.Out, idx)
	fmt.Fprintf(stdio.Out, "index: %s\n", wire.Sanitize(filepath.Join(c.out, FileIndexHTML)+" "+filepath.Join(c.out, FileIndexJSON), 1000))
	if code := idx.exit(); code != ExitOK {
		return &codeError{code: code}
	}
	return nil
}

// runOneTarget runs one target in process, base with the target's own
// endpoints, credential and folder dir; its console output goes to
// run.log in its folder. A panic is caught and becomes a harness error.
// parent is the command's environment and network.
func runOneTarget(ctx context.Context, sig *runSignals, c *runConfig, base conform.Config, t Target, dir string, parent Stdio) (code ExitCode) {
	var log bytes.Buffer
	// The run redacts its own terminal, here run.log (redact.go).
	stdio, flush := Stdio{In: strings.NewReader(""), Out: &log, Err: &log, Getenv: parent.getenv, network: parent.network}.guarded()
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stdio.Err, "adcp-conform: internal error: %v\n%s", p, debug.Stack())
			code = ExitHarness
		}
		flush()
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(filepath.Join(dir, FileRunLog), log.Bytes(), 0o644)
	}()
	err := func() error {
		cfg, err := c.target(base, t, dir, stdio)
		if err != nil {
			return err
		}
		return runOne(ctx, sig, cfg, c, stdio, false)
	}()
	if err != nil && err.Error() != "" {
		fmt.Fprintf(stdio.Err, "adcp-conform run: %s\n", oneLine(err.Error()))
	}
	return exitCodeOf(err)
}

// target is base for the target t, into the folder dir: its endpoints,
// and its credential, read from the variable its bearer_env (or its
// oauth_client_secret_env) names.
func (c *runConfig) target(base conform.Config, t Target, dir string, stdio Stdio) (conform.Config, error) {
	tc, tune := *c, *c.tune
	tune.targets, tc.tune = "", &tune
	tc.mcpURL, tc.a2aURL, tc.bearerEnv, tc.oauth = t.MCP, t.A2A, t.BearerEnv, t.OAuthKeys.flags()
	if err := tc.check(stdio); err != nil {
		return base, err
	}
	cfg := base
	cfg.MCP, cfg.A2A, cfg.Out, cfg.Log = t.MCP, t.A2A, dir, stdio.Err
	if t.BearerEnv != "" {
		tok, err := bearerFromEnv(t.BearerEnv, stdio)
		if err != nil {
			return cfg, err
		}
		cfg.BearerToken = tok
	}
	cfg.OAuth = tc.oauth.config()
	return cfg, nil
}

// Index is index.json: one entry per target's report folder.
type Index struct {
	Tool        string         `json:"tool"`
	Version     string         `json:"version"`
	GeneratedAt time.Time      `json:"generated_at"`
	DurationMS  float64        `json:"duration_ms,omitempty"`
	Counts      map[string]int `json:"counts"` // targets per verdict
	Targets     []IndexEntry   `json:"targets"`
}

// IndexEntry is one target in the index.
type IndexEntry struct {
	Name string `json:"name"`
	// Dir is the report folder, relative to the index when possible.
	Dir    string `json:"dir"`
	Target string `json:"target,omitempty"`
	// TargetKind is the folder's results.json target_kind: "seller", or
	// "bundled_reference" for a run against the bundled reference seller.
	TargetKind string        `json:"target_kind,omitempty"`
	Verdict    string        `json:"verdict"`
	ExitCode   int           `json:"exit_code"`
	Counts     report.Counts `json:"counts,omitempty"`
	Failed     []string      `json:"failed_rules,omitempty"`
	Harness    string        `json:"harness_error,omitempty"`
	StartedAt  time.Time     `json:"started_at"`
	DurationMS float64       `json:"duration_ms"`
	Error      string        `json:"error,omitempty"` // no readable results.json
}

// indexSource is one report folder to index; code is the exit code of its
// run when known (-1: unknown, from the verdict).
type indexSource struct {
	name string
	dir  string
	code ExitCode
}

// The verdict of a folder without a readable results.json.
const verdictMissing = "missing"

// buildIndex reads each folder's results.json; a folder without one is
// listed with its error (verdict "missing").
func buildIndex(indexDir string, sources []indexSource) Index {
	idx := Index{Tool: "adcp-conform", Version: currentVersion().Version, GeneratedAt: time.Now().UTC(), Counts: map[string]int{}}
	for _, s := range sources {
		e := IndexEntry{Name: s.name, Dir: relDir(indexDir, s.dir)}
		r, err := readIndexRun(filepath.Join(s.dir, FileResults))
		if err != nil {
			e.Verdict, e.Error, e.ExitCode = verdictMissing, wire.Sanitize(err.Error(), 300), int(ExitHarness)
			if s.code == ExitUsage {
				e.ExitCode = int(ExitUsage)
			}
		} else {
			e.Target, e.Verdict, e.Counts = wire.Sanitize(r.Target, 500), string(r.Verdict), r.Counts
			e.TargetKind = wire.Sanitize(string(r.TargetKind), 40)
			e.Harness, e.StartedAt, e.DurationMS = wire.Sanitize(r.HarnessError, 500), r.StartedAt, r.DurationMS
			e.ExitCode = r.ExitCode()
			for _, rule := range r.Rules {
				if rule.Failing() {
					e.Failed = append(e.Failed, wire.Sanitize(rule.ID, 40))
				}
			}
		}
		idx.Counts[e.Verdict]++
		idx.Targets = append(idx.Targets, e)
	}
	return idx
}

// readIndexRun reads a results.json (at most 1 GiB).
func readIndexRun(path string) (*report.Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r report.Run
	if err := json.NewDecoder(io.LimitReader(f, 1<<30)).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

func relDir(base, dir string) string {
	ab, err1 := filepath.Abs(base)
	ad, err2 := filepath.Abs(dir)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(ab, ad); err == nil {
			return filepath.ToSlash(rel)
		}
		return filepath.ToSlash(ad)
	}
	return filepath.ToSlash(dir)
}

// exit is the index's exit code: 2 when a target's configuration was
// refused, else 1 when a target is non-conformant, else 3 when a target
// ended in a harness error (or has no results), else 0.
func (idx Index) exit() ExitCode {
	worst := ExitOK
	rank := map[ExitCode]int{ExitOK: 0, ExitHarness: 1, ExitNonConformant: 2, ExitUsage: 3}
	for _, e := range idx.Targets {
		c := ExitCode(e.ExitCode)
		if _, ok := rank[c]; !ok {
			c = ExitHarness
		}
		if rank[c] > rank[worst] {
			worst = c
		}
	}
	return worst
}

// writeIndex writes index.json and index.html into dir, redacted by red.
func writeIndex(dir string, idx Index, red *wire.Redactor) error {
	err := writeRedacted(red, filepath.Join(dir, FileIndexJSON), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(idx)
	})
	if err != nil {
		return err
	}
	if err := writeRedacted(red, filepath.Join(dir, FileIndexHTML), func(w io.Writer) error { return indexPage.Execute(w, idx) }); err != nil {
		return fmt.Errorf("writing %s: %w", FileIndexHTML, err)
	}
	return nil
}

// writeIndexText prints one terminal-safe line per target.
func writeIndexText(w io.Writer, idx Index) {
	for _, e := range idx.Targets {
		detail := strings.Join(e.Failed, " ")
		if e.Harness != "" {
			detail = e.Harness
		}
		if e.Error != "" {
			detail = e.Error
		}
		if e.TargetKind == string(report.TargetBundledReference) {
			detail = strings.TrimSpace("[" + report.ReferenceLabel + "] " + detail)
		}
		fmt.Fprintf(w, "  %-16s %-32s %s\n", wire.Sanitize(e.Verdict, 16), wire.Sanitize(e.Name, 32), wire.Sanitize(detail, 220))
	}
	var parts []string
	for _, v := range []string{string(report.Conformant), string(report.NonConformant), string(report.StaleBaseline), string(report.HarnessError), string(report.Incomplete), verdictMissing} {
		if n := idx.Counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	fmt.Fprintf(w, "targets: %d (%s)\n", len(idx.Targets), strings.Join(parts, ", "))
}
