package conform

import (
	"crypto/ed25519"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/internal/material"
	"github.com/adcp-conform/adcp-conform/probes/a2a"
	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/plan"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/live"
)

// Config is one conformance run: what it tests, with which credentials,
// against which release material, within which limits, and where its
// reports go. A field's zero value is its flag's default; each field names
// the flag of `adcp-conform run` it stands for, and the run's messages and
// reports name a setting by that flag.
type Config struct {
	// MCP is the seller's MCP endpoint URL, Streamable HTTP (--mcp).
	MCP string
	// A2A is the seller's A2A base URL (--a2a): its agent card is at
	// A2A/.well-known/agent-card.json. A run needs MCP, A2A or both.
	A2A string

	// BearerToken is sent as "Authorization: Bearer" on every call to the
	// agent under test (the token the variable --bearer-env names).
	BearerToken string
	// LiveBearerToken is the token of a live-mode (non-sandbox) principal
	// on the same seller (--live-bearer-env): the storyboard steps that
	// authenticate as a live-mode test kit are sent with it; without it
	// they are skipped.
	LiveBearerToken string
	// Header holds extra request headers sent on every call to the agent
	// under test (--header); a credential among them is redacted like the
	// token.
	Header http.Header
	// OAuth, when set, obtains the bearer token with the OAuth client
	// credentials grant (--oauth-*), instead of BearerToken.
	OAuth *OAuth
	// Agents are the further logical agents of multi-agent storyboards
	// (--agent, --agent-bearer-env): each its Name and MCP.Endpoint or
	// A2A.BaseURL, and its own bearer token (MCP.BearerToken,
	// A2A.BearerToken); the run's other client settings apply to them.
	Agents []live.Agent
	// TLS is the client TLS configuration of every HTTPS connection; set
	// its RootCAs to trust a staging seller's private CA (--ca-cert). nil:
	// the system's.
	TLS *tls.Config

	// Release is the AdCP release whose storyboards and schemas the run
	// uses (--release): a published release (3.1.19) or a version as
	// sellers advertise it (3.1); "": the newest the seller's
	// adcp.supported_versions lists that the run can get.
	Release string
	// ReleaseMirror is the folder or site releases come from
	// (--release-mirror); "": the published site.
	ReleaseMirror string
	// Storyboards are the compliance storyboards (--storyboards): a
	// compliance/<release>/ folder, the URL of a published bundle, or
	// "off"; "": the run's release's.
	Storyboards string
	// Schemas are the published JSON Schemas for SCHEMA-01/02 (--schemas):
	// a schemas/<release>/ folder, the URL of a published release folder,
	// or "off"; "": the run's release's.
	Schemas string
	// StoryboardIDs run only these storyboards (--storyboard).
	StoryboardIDs []string
	// LabelFilter is a Ginkgo label filter over the rules' and the
	// storyboards' labels (--label-filter): rule:, transport:, level:,
	// family:, storyboard:, category:, kind:.
	LabelFilter string
	// Strict makes SHOULD failures fail the run too (--strict).
	Strict bool
	// AllowedDomains are registrable domains seller URLs may point to
	// besides the agent's own (--allow-domain).
	AllowedDomains []string

	// AllowMutations allows the probes that create state on the seller
	// (--allow-mutations).
	AllowMutations bool
	// Sandbox says the target is a sandbox: comply_test_controller may be
	// exposed (--sandbox).
	Sandbox bool
	// LocalFetch lets every connection of the run reach loopback and
	// private addresses, and the seller's OAuth discovery graph be http
	// (--allow-local-fetch): local development only, never with Certify.
	LocalFetch bool
	// BrandJSON is the URL of the seller's brand.json when its
	// capabilities advertise none (--brand-json).
	BrandJSON string
	// RateBurst is the opt-in rate-limit burst: up to this many calls to
	// provoke RATE_LIMITED (--rate-burst, at most plan.MaxRateBurst).
	RateBurst int
	// Seed seeds the random context (--seed); 0 draws one.
	Seed uint64
	// Inputs are base arguments per tool (the content of --inputs).
	Inputs plan.Inputs

	// Timeout bounds each call (--timeout; 0: mcp.DefaultTimeout).
	Timeout time.Duration
	// Deadline bounds the whole run, reports included (--deadline; 0:
	// DefaultDeadline).
	Deadline time.Duration
	// TaskWait bounds the polling of each MCP task (--task-wait; 0:
	// mcp.DefaultTaskWait).
	TaskWait time.Duration
	// WebhookWait bounds the wait for webhooks a seller should, or should
	// not, send (--webhook-wait; 0: plan.DefaultWebhookWait).
	WebhookWait time.Duration
	// Parallel is how many probes are in flight at once per transport
	// (--parallel; 0: plan.DefaultConcurrency, at most MaxParallel).
	Parallel int
	// MaxBody, MaxEvent, MaxEvidence and MaxTotal are byte limits
	// (--max-body, --max-event, --max-evidence, --max-total; 0: the wire
	// package's defaults, at most 1 GiB each): of one response body, one
	// SSE event, the evidence kept of a body cut at one, and the evidence
	// the whole run keeps.
	MaxBody, MaxEvent, MaxEvidence, MaxTotal int64

	// WebhookListen is the address of the harness's webhook receiver
	// (--webhook-listen; "": 127.0.0.1:0).
	WebhookListen string
	// WebhookURL is the receiver's public URL, for a seller that cannot
	// reach WebhookListen (--webhook-url). Without it the receiver runs
	// only when every target is on this machine.
	WebhookURL string

	// Certify makes the run a certification run (--certify): every rule,
	// no LabelFilter, no Baseline, an HTTPS target to publish.
	Certify bool
	// Baseline are the expected failures (the content of --baseline):
	// each keeps its rule or storyboard step out of the verdict. nil: none.
	Baseline []report.BaselineEntry
	// SignKey, when set, signs results.json (--sign-key).
	SignKey ed25519.PrivateKey

	// Out is the folder the reports are written into (--out): junit.xml,
	// report.html, results.json and evidence.json. "": none are written;
	// the returned report is all there is.
	Out string
	// Log receives the run's progress lines (what the command line prints
	// on stderr); nil discards them.
	Log io.Writer
	// Verbose logs each exchange as it happens and each rule family's
	// progress (-v).
	Verbose bool
	// Redact, when set, is told the run's credentials once they are known,
	// before the first probe: their values, and the set that learns the
	// tokens an OAuth client obtains as the run goes. A caller printing
	// anything of the run (its report, Log) redacts them with
	// wire.NewLiveRedactor; the report files are redacted already.
	Redact func(secrets []string, learnt *wire.SecretSet)
	// Network, when set, is the network every connection of the run goes
	// through (tests resolve names and record connections with it); nil:
	// the system's.
	Network fetch.Network
	// Version is the harness version the reports name; "": this module's,
	// as the build records it.
	Version string

	// shared are the storyboards of a Config prepared for several runs
	// (Prefetch), with or without their notice.
	shared *material.Storyboards
	// sharedSchemas are the schemas of a local Schemas folder of a Config
	// prepared for several runs (Prefetch).
	sharedSchemas *schemas.Set
	// face, when set, is the face of the bundled reference seller the run
	// tests (Reference): the report is labelled the reference's.
	face *report.Face
	// ledgerNotice is said once the configuration is good, when the
	// baseline is the reference seller's ledger.
	ledgerNotice string
}

// OAuth are the client credentials a run obtains its bearer token with
// (RFC 6749 §4.4): the token is renewed before it expires and after a
// 401, and every token obtained is redacted from every output.
type OAuth struct {
	// TokenURL is the token endpoint (--oauth-token-url).
	TokenURL string
	// ClientID and ClientSecret are the client's credentials
	// (--oauth-client-id, and the value of --oauth-client-secret-env).
	ClientID, ClientSecret string
	// Scope is the scope asked for, space-separated (--oauth-scope).
	Scope string
	// Resources are the resource URIs the token is asked for (RFC 8707,
	// --oauth-resource).
	Resources []string
	// Audience is the audience parameter some servers take instead
	// (--oauth-audience).
	Audience string
	// ClientAuth is how the client authenticates to the token endpoint,
	// "basic" (client_secret_basic) or "post" (client_secret_post)
	// (--oauth-client-auth; "": basic).
	ClientAuth string
}

// The run's defaults and bounds.
const (
	// DefaultDeadline bounds a run given no Deadline.
	DefaultDeadline = 5 * time.Minute
	// MaxParallel bounds Parallel.
	MaxParallel = 64
	// maxLimit bounds the byte limits.
	maxLimit = 1 << 30
)

// ConfigError is a configuration the run refuses before probing: a
// missing target, a malformed URL, settings that cannot go together,
// release material that does not load. The command line exits 2 on it.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

func configf(format string, args ...any) error {
	return &ConfigError{Msg: fmt.Sprintf(format, args...)}
}

// configErr turns the material's refusals into ConfigErrors.
func configErr(err error) error {
	var ue *material.UsageError
	if errors.As(err, &ue) {
		return &ConfigError{Msg: ue.Msg}
	}
	return err
}

// withDefaults fills the zero fields with their defaults.
func (c Config) withDefaults() Config {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Timeout, mcp.DefaultTimeout)
	def(&c.Deadline, DefaultDeadline)
	if c.Parallel == 0 {
		c.Parallel = plan.DefaultConcurrency
	}
	for _, l := range []struct {
		v *int64
		d int64
	}{{&c.MaxBody, wire.DefaultMaxBodyBytes}, {&c.MaxEvent, wire.DefaultMaxEventBytes}, {&c.MaxEvidence, wire.DefaultMaxEvidenceBytes}, {&c.MaxTotal, wire.DefaultMaxTotalBytes}} {
		if *l.v == 0 {
			*l.v = l.d
		}
	}
	if c.WebhookListen == "" {
		c.WebhookListen = "127.0.0.1:0"
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Version == "" {
		c.Version = moduleVersion()
	}
	return c
}

// check refuses a configuration that cannot run, before anything is
// loaded or probed. Call it on a Config with its defaults.
func (c Config) check() error {
	switch {
	case c.MCP == "" && c.A2A == "":
		return configf("no target: give the seller's --mcp endpoint or its --a2a base URL")
	case c.Certify && c.LocalFetch:
		return configf("--certify judges production conformance: it cannot be combined with --allow-local-fetch")
	case c.Certify && c.LabelFilter != "":
		return configf("--certify judges every rule: it cannot be combined with --label-filter")
	case c.Certify && c.Baseline != nil:
		return configf("--certify judges every rule as it is: it cannot be combined with --baseline")
	case c.Timeout < 0:
		return configf("--timeout must be positive")
	case c.Deadline < 0:
		return configf("--deadline must be positive")
	case c.RateBurst < 0 || c.RateBurst > plan.MaxRateBurst:
		return configf("--rate-burst must be between 0 and %d", plan.MaxRateBurst)
	case c.Parallel < 1 || c.Parallel > MaxParallel:
		return configf("--parallel must be between 1 and %d", MaxParallel)
	case c.LiveBearerToken != "" && c.LiveBearerToken == c.BearerToken:
		return configf("the live-mode token (--live-bearer-env) is the run's own token (--bearer-env): give a live-mode principal's")
	}
	for name, v := range map[string]int64{"--max-body": c.MaxBody, "--max-event": c.MaxEvent, "--max-evidence": c.MaxEvidence, "--max-total": c.MaxTotal} {
		if v < 1 || v > maxLimit {
			return configf("%s must be between 1 byte and 1GiB", name)
		}
	}
	if c.BrandJSON != "" {
		u, err := url.Parse(c.BrandJSON)
		if err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return configf("--brand-json %s: want an absolute http(s) URL without credentials", wire.Sanitize(c.BrandJSON, 200))
		}
	}
	for _, t := range []struct{ flag, v string }{{"--mcp", c.MCP}, {"--a2a", c.A2A}} {
		if t.v == "" {
			continue
		}
		u, err := url.Parse(t.v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return configf("%s %q: want an http or https URL", t.flag, t.v)
		}
		if u.User != nil {
			return configf("%s: put credentials in --bearer-env or --header, not in the URL", t.flag)
		}
	}
	for name, values := range c.Header {
		if name == "" || strings.ContainsAny(name, " \t\r\n:") || strings.ContainsFunc(strings.Join(values, ""), func(r rune) bool { return r == '\r' || r == '\n' }) {
			return configf("--header %q: want 'Name: value'", wire.Sanitize(name, 80))
		}
	}
	if c.OAuth != nil {
		if _, err := c.OAuth.source(c, nil); err != nil {
			return err
		}
	}
	return nil
}

// probeConfig is the probe plan's configuration of a checked Config.
func (c Config) probeConfig() plan.Config {
	cfg := plan.Config{AllowMutations: c.AllowMutations, Seed: c.Seed, Sandbox: c.Sandbox, LocalFetch: c.LocalFetch, BrandJSON: c.BrandJSON,
		RateBurst: c.RateBurst, Inputs: c.Inputs, TLS: c.TLS, LiveBearerToken: c.LiveBearerToken, TaskWait: c.TaskWait, Concurrency: c.Parallel}
	cfg.MCP = mcp.Config{Endpoint: c.MCP, Timeout: c.Timeout, BearerToken: c.BearerToken}
	cfg.A2A = a2a.Config{BaseURL: strings.TrimRight(c.A2A, "/"), Timeout: c.Timeout, BearerToken: c.BearerToken}
	if len(c.Header) > 0 {
		cfg.MCP.Header, cfg.A2A.Header = c.Header, c.Header
	}
	lim := wire.Limits{MaxBodyBytes: c.MaxBody, MaxEventBytes: int(c.MaxEvent), MaxEvidenceBytes: c.MaxEvidence, Budget: wire.NewBudget(c.MaxTotal)}
	cfg.MCP.Limits, cfg.A2A.Limits = lim, lim
	cfg.Net = c.Network
	return cfg
}

// WritableOut makes the report folder dir and checks that a file can be
// written in it, so a folder that cannot take the reports is refused
// before the seller is probed, not after.
func WritableOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return configf("--out %s: %v", wire.Sanitize(dir, 200), unwrapPath(err))
	}
	f, err := os.CreateTemp(dir, ".adcp-conform-probe-*")
	if err != nil {
		return configf("--out %s: the folder cannot be written: %v", wire.Sanitize(dir, 200), unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// unwrapPath drops the path a *PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
