package conform

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
)

// FileTarget is the completion record Targets writes into a target's
// folder once its run has ended uninterrupted: the settings the run had
// (a hash) and the hash of the results.json it wrote. A later Targets
// call over the same folder keeps that result instead of running the
// target again when it is complete and verified (see Targets).
const FileTarget = "target.json"

// Rerun says which targets a Targets call runs again although their
// folder holds a complete, verified result of a run with the same
// settings.
type Rerun int

const (
	// RerunErrored runs again the targets whose result is a harness
	// error (the seller unreachable, the run's deadline hit, the harness
	// failing): the default, since such a result says nothing of the
	// seller.
	RerunErrored Rerun = iota
	// RerunNone keeps every complete result, a harness error too.
	RerunNone
	// RerunAll runs every target again, whatever its folder holds.
	RerunAll
)

var rerunNames = []string{"errored", "none", "all"}

func (r Rerun) String() string {
	if int(r) < len(rerunNames) && r >= 0 {
		return rerunNames[r]
	}
	return fmt.Sprintf("Rerun(%d)", int(r))
}

// ParseRerun reads a Rerun by its name: errored, none or all.
func ParseRerun(s string) (Rerun, error) {
	if i := slices.Index(rerunNames, s); i >= 0 {
		return Rerun(i), nil
	}
	return 0, fmt.Errorf("%q: want errored, none or all", s)
}

// completion is target.json.
type completion struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Name    string `json:"name"`
	// Settings is the SHA-256 of the run's settings (settingsOf).
	Settings string `json:"settings_sha256"`
	// Results is the SHA-256 of the results.json the run wrote.
	Results    string    `json:"results_sha256"`
	FinishedAt time.Time `json:"finished_at"`
}

// settings are what decides a target's verdicts besides the seller
// itself: a result is kept only when its run had the same. Credentials
// are left out (a hash of a weak secret on disk could be reversed, and a
// rotated token changes nothing the seller is judged on), and so are the
// settings the verdicts do not depend on: Parallel (the probes in
// flight), Out, Log, Verbose, Redact, Network.
type settings struct {
	Version         string                 `json:"version"`
	MCP             string                 `json:"mcp"`
	A2A             string                 `json:"a2a"`
	HeaderNames     []string               `json:"header_names,omitempty"`
	LiveCredential  bool                   `json:"live_credential,omitempty"`
	OAuth           *oauthSettings         `json:"oauth,omitempty"`
	Agents          []agentSettings        `json:"agents,omitempty"`
	CustomTLS       bool                   `json:"custom_tls,omitempty"`
	Release         string                 `json:"release,omitempty"`
	ReleaseMirror   string                 `json:"release_mirror,omitempty"`
	Storyboards     string                 `json:"storyboards,omitempty"`
	Schemas         string                 `json:"schemas,omitempty"`
	StoryboardIDs   []string               `json:"storyboard_ids,omitempty"`
	LabelFilter     string                 `json:"label_filter,omitempty"`
	Strict          bool                   `json:"strict,omitempty"`
	AllowedDomains  []string               `json:"allowed_domains,omitempty"`
	AllowMutations  bool                   `json:"allow_mutations,omitempty"`
	Sandbox         bool                   `json:"sandbox,omitempty"`
	LocalFetch      bool                   `json:"local_fetch,omitempty"`
	BrandJSON       string                 `json:"brand_json,omitempty"`
	RateBurst       int                    `json:"rate_burst,omitempty"`
	Seed            uint64                 `json:"seed,omitempty"`
	Inputs          plan.Inputs            `json:"inputs"`
	Timeout         time.Duration          `json:"timeout"`
	Deadline        time.Duration          `json:"deadline"`
	TaskWait        time.Duration          `json:"task_wait"`
	WebhookWait     time.Duration          `json:"webhook_wait"`
	MaxBody         int64                  `json:"max_body"`
	MaxEvent        int64                  `json:"max_event"`
	MaxEvidence     int64                  `json:"max_evidence"`
	MaxTotal        int64                  `json:"max_total"`
	WebhookListen   string                 `json:"webhook_listen,omitempty"`
	WebhookURL      string                 `json:"webhook_url,omitempty"`
	Certify         bool                   `json:"certify,omitempty"`
	Baseline        []report.BaselineEntry `json:"baseline"`
	BaselineGiven   bool                   `json:"baseline_given,omitempty"`
	SignedWith      string                 `json:"signed_with,omitempty"` // the public key
	ReferenceTarget bool                   `json:"reference_target,omitempty"`
}

type oauthSettings struct {
	TokenURL, ClientID, Scope, Audience, ClientAuth string
	Resources                                       []string
}

type agentSettings struct {
	Name, MCP, A2A string
}

// settingsOf is the SHA-256 (hex) of cfg's settings, its defaults filled.
func settingsOf(cfg Config) (string, error) {
	c := cfg.withDefaults()
	s := settings{Version: c.Version, MCP: c.MCP, A2A: c.A2A, LiveCredential: c.LiveBearerToken != "", CustomTLS: c.TLS != nil,
		Release: c.Release, ReleaseMirror: c.ReleaseMirror, Storyboards: c.Storyboards, Schemas: c.Schemas, StoryboardIDs: c.StoryboardIDs,
		LabelFilter: c.LabelFilter, Strict: c.Strict, AllowedDomains: c.AllowedDomains, AllowMutations: c.AllowMutations, Sandbox: c.Sandbox,
		LocalFetch: c.LocalFetch, BrandJSON: c.BrandJSON, RateBurst: c.RateBurst, Seed: c.Seed, Inputs: c.Inputs,
		Timeout: c.Timeout, Deadline: c.Deadline, TaskWait: c.TaskWait, WebhookWait: c.WebhookWait,
		MaxBody: c.MaxBody, MaxEvent: c.MaxEvent, MaxEvidence: c.MaxEvidence, MaxTotal: c.MaxTotal,
		WebhookListen: c.WebhookListen, WebhookURL: c.WebhookURL, Certify: c.Certify, Baseline: c.Baseline, BaselineGiven: c.Baseline != nil,
		ReferenceTarget: c.face != nil}
	for name := range c.Header {
		s.HeaderNames = append(s.HeaderNames, name)
	}
	slices.Sort(s.HeaderNames)
	if o := c.OAuth; o != nil {
		s.OAuth = &oauthSettings{TokenURL: o.TokenURL, ClientID: o.ClientID, Scope: o.Scope, Audience: o.Audience, ClientAuth: o.ClientAuth, Resources: o.Resources}
	}
	for _, a := range c.Agents {
		s.Agents = append(s.Agents, agentSettings{Name: a.Name, MCP: a.MCP.Endpoint, A2A: a.A2A.BaseURL})
	}
	if c.SignKey != nil {
		s.SignedWith = hex.EncodeToString(c.SignKey.Public().(ed25519.PublicKey))
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("the run's settings: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// maxCompletionBytes bounds the target.json read.
const maxCompletionBytes = 64 << 10

// kept is the index entry of the complete, verified result dir holds of a
// run with the settings fp, when it holds one that rerun keeps; otherwise
// why it holds none. A result is complete and verified when:
//
//   - target.json is there, names the same settings, and hashes the
//     results.json beside it (the run ended uninterrupted, with those
//     settings, and its folder was not rewritten since);
//   - results.json is there and parses;
//   - its integrity section matches the files it hashes (evidence.json,
//     junit.xml, report.html, every recorded call: report/certify.Check);
//   - with a signing key, its signature verifies with the key's public key.
//
// rerun RerunErrored also runs again a result that is a harness error.
func kept(indexDir, name, dir, fp string, rerun Rerun, signKey ed25519.PrivateKey) (IndexEntry, string) {
	c, err := readCompletion(filepath.Join(dir, FileTarget))
	if err != nil {
		return IndexEntry{}, err.Error()
	}
	if c.Settings != fp {
		return IndexEntry{}, "its last run had other settings"
	}
	run, sum, err := readResults(filepath.Join(dir, FileResults))
	if err != nil {
		return IndexEntry{}, fmt.Sprintf("%s does not parse: %v", FileResults, err)
	}
	if hex.EncodeToString(sum) != c.Results {
		return IndexEntry{}, fmt.Sprintf("%s is not the one its last run wrote", FileResults)
	}
	if errs := certify.Check(dir, run.Integrity); len(errs) > 0 {
		return IndexEntry{}, fmt.Sprintf("%s does not match its hashes: %v", FileResults, errs[0])
	}
	if signKey != nil {
		results, err := os.ReadFile(filepath.Join(dir, FileResults))
		if err != nil {
			return IndexEntry{}, err.Error()
		}
		sig, err := os.ReadFile(filepath.Join(dir, FileSignature))
		if err != nil {
			return IndexEntry{}, "it is not signed"
		}
		if err := certify.VerifySignature(signKey.Public().(ed25519.PublicKey), results, sig); err != nil {
			return IndexEntry{}, "its signature does not verify"
		}
	}
	if rerun == RerunErrored && (run.HarnessError != "" || run.Verdict == report.HarnessError) {
		return IndexEntry{}, "its result is a harness error"
	}
	return entryOf(IndexEntry{Name: name, Dir: relDir(indexDir, dir)}, run), ""
}

func readCompletion(path string) (completion, error) {
	var c completion
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, errors.New("no run of it ended uninterrupted")
	}
	if err != nil {
		return c, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCompletionBytes))
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s does not parse: %v", FileTarget, err)
	}
	return c, nil
}

// writeCompletion writes target.json into dir for the run of name with
// settings fp, over the results.json the run wrote there: to a temporary
// file first, renamed, so a folder never holds half a record.
func writeCompletion(dir, name, fp, version string) error {
	f, err := os.Open(filepath.Join(dir, FileResults))
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(completion{Tool: "adcp-conform", Version: version, Name: name, Settings: fp,
		Results: hex.EncodeToString(h.Sum(nil)), FinishedAt: time.Now().UTC()}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".target-*.json")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, bytes.NewReader(append(b, '\n'))); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, FileTarget))
}
