package suites

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/onsi/ginkgo/v2"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// The names of the report entries the specs attach (see the package doc).
const (
	EntryExchange     = "exchange"
	EntryFindings     = "findings"
	EntryExamined     = "examined"
	EntryHarnessError = "harness_error"
)

// Options configure the judges.
type Options struct {
	// Strict is carried for the report (SHOULD failures change the exit
	// code); judges ignore it.
	Strict bool
	// Transports selects the transports to judge (MCP, A2A); empty means
	// MCP. A rule is judged on each selected transport its catalogue entry
	// names.
	Transports []catalogue.Transport
	// AllowedDomains are registrable domains, besides the agent's own, that
	// seller URLs may point to (URL-02). A URL on a subdomain of one of them
	// is allowed too.
	AllowedDomains []string
	// Schemas are the published schemas of the release the run validates
	// against (SCHEMA-01, SCHEMA-02); nil skips those rules.
	Schemas *schemas.Set
	// SchemasUnavailable is why Schemas is nil, when the run looked for
	// them and found none (a fetch that failed): the skip reason of
	// SCHEMA-01 and SCHEMA-02. Empty means none were asked for.
	SchemasUnavailable string
	// Fuzz says the store is a fuzz run's (adcp-conform fuzz): the judges
	// are the rules of the families the catalogue gives to that command
	// (FUZZ), and only those; a run's store is judged by every other rule.
	Fuzz bool
	// Stop, when set, says why the run must stop judging ("" to go on):
	// the run's deadline, or a signal. A rule not judged by then is a
	// harness error saying why (--deadline and Ctrl-C bound the whole run,
	// not only the probes).
	Stop func() string
}

func (o Options) stopped() string {
	if o.Stop == nil {
		return ""
	}
	return o.Stop()
}

// Command is the command whose rules opts judges: catalogue.CommandFuzz
// for a fuzz run, "" for run.
func (o Options) Command() string {
	if o.Fuzz {
		return catalogue.CommandFuzz
	}
	return ""
}

// Judges reports whether opts judges check c: its transport is judged and
// its rule belongs to the run's command.
func (o Options) Judges(c Check) bool {
	return o.judges(c.Transport) && catalogue.CommandOf(c.ID) == o.Command()
}

func (o Options) judges(t catalogue.Transport) bool {
	if len(o.Transports) == 0 {
		return t == catalogue.MCP
	}
	return slices.Contains(o.Transports, t)
}

// Outcome is what a judge decided.
type Outcome string

// The outcomes a judge can reach.
const (
	// Pass: the seller met the rule on every reply examined (at least one).
	Pass Outcome = "passed"
	// Fail: the seller broke the rule.
	Fail Outcome = "failed"
	// Skip: nothing could be judged, for the reason in Message.
	Skip Outcome = "skipped"
	// HarnessError: the harness or the network failed on a call the rule
	// needs; never counted against the seller.
	HarnessError Outcome = "error"
)

// Verdict is one judge's decision.
type Verdict struct {
	Rule      string
	Transport catalogue.Transport
	Outcome   Outcome
	// Message is the failure message ("ENV-02: <probe>: <pointer> <what>"),
	// the skip reason, or the harness error.
	Message string
	// Findings are every problem found (failures only).
	Findings []Finding
	// Examined are the probe IDs of every call the judge examined, failed
	// or not.
	Examined []string
	// Calls are the evidence: the offending calls of a failure, the calls
	// with harness errors of an error, the examined calls of a pass.
	Calls []evidence.Call
}

// GomegaString keeps Gomega's rendering of a verdict short.
func (v Verdict) GomegaString() string {
	ids := make([]string, len(v.Calls))
	for i, c := range v.Calls {
		ids[i] = c.ProbeID
	}
	return fmt.Sprintf("%s %s %s: %q (calls %v)", v.Rule, v.Transport, v.Outcome, v.Message, ids)
}

// Check is one judge: a rule on a transport, the text of its spec, and the
// pure function that decides it.
type Check struct {
	ID        string
	Transport catalogue.Transport
	// Text states the rule in present tense; it is the spec's name.
	Text  string
	Judge func(*evidence.Store, Options) Verdict
}

// Checks returns every judge of the package, in catalogue order: each
// family's checks, and for a rule the catalogue applies to both transports
// the same judge again on A2A (it reads the A2A view of the store).
func Checks() []Check {
	var all []Check
	for _, fam := range families() {
		all = append(all, withA2A(fam.checks)...)
	}
	return all
}

// withA2A adds, after each MCP check of a rule that also covers A2A, its A2A
// twin.
func withA2A(checks []Check) []Check {
	var out []Check
	for _, c := range checks {
		out = append(out, c)
		if r, ok := catalogue.Lookup(c.ID); ok && c.Transport == catalogue.MCP && r.Covers(catalogue.A2A) {
			twin := c
			twin.Transport = catalogue.A2A
			out = append(out, twin)
		}
	}
	return out
}

// judge runs one check on the view of the store for its transport. A call
// that never reached the seller's application (evidence.Call.Unreached) is
// seen as a harness error by every rule but those about refusals, so a 401
// or a gateway's 503 is never judged as the application's answer.
func (c Check) judge(store *evidence.Store, opts Options) Verdict {
	if opts.Stop != nil {
		stopJudging.Store(&opts.Stop)
		defer stopJudging.Store(nil)
	}
	view := store.Only(evidence.Transport(c.Transport))
	if !readsRefusals[c.ID] {
		credential := store.Target().Credential
		view = view.View(func(call evidence.Call) evidence.Call { return unreachedAsError(call, credential) })
	}
	v := c.Judge(view, opts)
	v.Rule, v.Transport = c.ID, c.Transport
	return mutate(c, v)
}

// Judge runs every judge on the transports opts selects, without Ginkgo:
// the re-judging entry point.
func Judge(store *evidence.Store, opts Options) []Verdict {
	forgetReplies()
	defer forgetReplies()
	var out []Verdict
	for _, c := range Checks() {
		if opts.Judges(c) {
			out = append(out, c.judge(store, opts))
		}
	}
	return out
}

// readsRefusals are the rules whose evidence includes refusals made before
// the seller's application: authentication, the reserved JSON-RPC codes,
// the error object a refusal carries, and the readability of every reply.
// TOL-01 reads them too: it compares a call carrying the envelope fields
// with the same call without them, and judges a refusal only when that
// call went through (a 401 the fields alone provoke is the seller's answer
// to the fields; a signing seller's request_signature_required is one).
var readsRefusals = map[string]bool{
	"AUTH-01": true, "AUTH-02": true, "AUTH-03": true, "ERR-06": true, "ENV-10": true, "SCHEMA-02": true, "TOL-01": true,
	"EOBJ-01": true, "EOBJ-02": true, "EOBJ-03": true, "EOBJ-04": true, "EOBJ-05": true, "EOBJ-06": true,
	"EOBJ-07": true, "EOBJ-08": true, "EOBJ-09": true, "EOBJ-10": true,
	"RETRY-01": true, "RETRY-02": true, "RETRY-03": true,
}

// unreachedAsError marks a call that never reached the seller's
// application as a harness error, with the reason and what to do.
func unreachedAsError(c evidence.Call, credential bool) evidence.Call {
	if why := c.Unreached(); why != "" && c.HarnessError == "" && c.NotRun == "" {
		c.HarnessError = why + unreachedHint(c, credential)
	}
	return c
}

func unreachedHint(c evidence.Call, credential bool) string {
	switch c.HTTPStatus {
	case 401, 403:
		if credential {
			return "; the seller refused the run's credential: check the token --bearer-env names, or the --header values"
		}
		return "; the seller wants a credential: give it with --bearer-env NAME or --header 'Name: value'"
	case 429:
		return "; run again later, or with a lower --parallel"
	}
	return ""
}

type family struct {
	id     string
	checks []Check
}

// familyChecks is every rule family's judges, by family ID: the one place
// a family is registered (TestEveryCatalogueFamilyHasItsChecks holds it
// to the catalogue).
var familyChecks = map[string]func() []Check{
	"ENV": envChecks, "ERR": errChecks, "EOBJ": eobjChecks, "RETRY": retryChecks,
	"CTX": ctxChecks, "TOL": tolChecks, "A2A": a2aChecks, "CAP": capChecks,
	"TASK": taskChecks, "VER": verChecks, "IDEM": idemChecks, "AUTH": authChecks,
	"URL": urlChecks, "HOOK": hookChecks, "SCHEMA": schemaChecks, "TLS": tlsChecks,
	"FUZZ": fuzzChecks,
}

// families lists the rule families this package judges, in catalogue
// order.
func families() []family {
	var out []family
	for _, f := range catalogue.Families() {
		if checks, ok := familyChecks[f.ID]; ok {
			if cs := checks(); len(cs) > 0 {
				out = append(out, family{f.ID, cs})
			}
		}
	}
	return out
}

// Register declares the judges for store as Ginkgo specs: a container per
// transport, one per rule family, one spec per rule. Every verdict reached
// is passed to record (when not nil) before the spec settles, so a runner
// keeps the findings and evidence behind each spec. Call it before
// RunSpecs, and again after globals.Reset() (with catalogue.ResetBugs())
// for another run in the same process.
func Register(store *evidence.Store, opts Options, record func(Verdict)) {
	forgetReplies()
	var ts []catalogue.Transport
	for _, t := range []catalogue.Transport{catalogue.MCP, catalogue.A2A} {
		if opts.judges(t) {
			ts = append(ts, t)
		}
	}
	registerLazy(ts, opts.Command(), func(catalogue.Transport) (*evidence.Store, Options, string) { return store, opts, "" }, record)
}

// RegisterLazy declares the judges of the transports ts into the Ginkgo
// tree being built, as Register does, for a store that exists only once
// the specs run: a suite that probes the seller in a BeforeAll first (the
// caller's own Ginkgo suite, say). Each spec calls get with its transport
// when it runs, for the store and the options, or for why it is skipped (a
// transport given no target). Call Release once the specs have run.
// The rules declared are run's (a fuzz run's store is judged by Register
// with Options.Fuzz).
func RegisterLazy(ts []catalogue.Transport, get func(catalogue.Transport) (store *evidence.Store, opts Options, skip string), record func(Verdict)) {
	registerLazy(ts, "", get, record)
}

// registerLazy is RegisterLazy for the rules of command (see
// Options.Command).
func registerLazy(ts []catalogue.Transport, command string, get func(catalogue.Transport) (store *evidence.Store, opts Options, skip string), record func(Verdict)) {
	for _, t := range ts {
		ginkgo.Describe(strings.ToUpper(string(t)), func() {
			for _, fam := range families() {
				ginkgo.Describe(catalogue.FamilyTitle(fam.id), func() {
					for _, c := range withA2A(fam.checks) {
						if c.Transport != t || catalogue.CommandOf(c.ID) != command {
							continue
						}
						catalogue.RuleIt(c.Text, catalogue.ID(c.ID), catalogue.On(c.Transport), func(_ ginkgo.SpecContext) {
							store, opts, skip := get(c.Transport)
							if skip != "" {
								ginkgo.Skip(skip)
							}
							var v Verdict
							if why := opts.stopped(); why != "" {
								v = Verdict{Rule: c.ID, Transport: c.Transport, Outcome: HarnessError,
									Message: c.ID + ": harness error: " + why + " before this rule was judged"}
							} else {
								v = c.judge(store, opts)
							}
							if record != nil {
								record(v)
							}
							settle(v)
						})
					}
				})
			}
		})
	}
}

// settle turns a verdict into the spec's outcome and its report entries.
func settle(v Verdict) {
	ginkgo.GinkgoHelper()
	switch v.Outcome {
	case Pass:
		ids := make([]string, len(v.Calls))
		for i, c := range v.Calls {
			ids[i] = c.ProbeID
		}
		ginkgo.AddReportEntry(EntryExamined, strings.Join(ids, " "), ginkgo.ReportEntryVisibilityFailureOrVerbose)
	case Skip:
		ginkgo.Skip(v.Message)
	case Fail:
		attach(v)
		lines := make([]string, len(v.Findings))
		for i, f := range v.Findings {
			lines[i] = f.String()
		}
		ginkgo.AddReportEntry(EntryFindings, strings.Join(lines, "\n"), ginkgo.ReportEntryVisibilityFailureOrVerbose)
		ginkgo.Fail(v.Message)
	case HarnessError:
		attach(v)
		ginkgo.AddReportEntry(EntryHarnessError, v.Message, ginkgo.ReportEntryVisibilityAlways)
		ginkgo.Fail(v.Message)
	default:
		ginkgo.Fail(fmt.Sprintf("%s: harness error: judge returned unknown outcome %q", v.Rule, v.Outcome))
	}
}

// attach adds the exchanges of the verdict's calls, at most a bounded
// number, so a report stays small.
func attach(v Verdict) {
	const max = 8
	n := 0
	for _, c := range v.Calls {
		for _, x := range c.Exchanges {
			if n == max {
				return
			}
			ginkgo.AddReportEntry(EntryExchange, x, ginkgo.ReportEntryVisibilityFailureOrVerbose)
			n++
		}
	}
}

// Finding is one problem in one recorded call: the probe, where (a JSON
// pointer into the JSON-RPC response; "#" steps into a parsed text item) and
// what.
type Finding struct {
	ProbeID string `json:"probe_id"`
	Pointer string `json:"json_pointer,omitempty"`
	What    string `json:"what"`
}

func (f Finding) String() string {
	return f.ProbeID + ": " + finding{f.Pointer, f.What}.String()
}

// finding is one problem in one reply, before it is tied to its call.
type finding struct {
	ptr, what string
}

func (f finding) String() string {
	if f.ptr == "" {
		return f.what
	}
	return f.ptr + " " + f.what
}

// tally accumulates what a judge saw and turns it into a verdict.
type tally struct {
	id       string
	examined []evidence.Call
	failed   []evidence.Call
	errored  []evidence.Call
	findings []Finding
	notRun   []string
}

func newTally(id string) *tally { return &tally{id: id} }

// account records a call that cannot be judged: not run, or a harness
// error. It reports whether the call can be examined.
func (t *tally) account(c evidence.Call) bool {
	switch {
	case c.NotRun != "":
		t.notRun = append(t.notRun, c.ProbeID+" not run: "+wire.Sanitize(c.NotRun, 200))
		return false
	case c.HarnessError != "":
		t.errored = append(t.errored, c)
		return false
	}
	return true
}

// judged records an examined call and its findings.
func (t *tally) judged(c evidence.Call, fs []finding) {
	t.examined = append(t.examined, c)
	if len(fs) == 0 {
		return
	}
	t.failed = append(t.failed, c)
	for _, f := range fs {
		t.findings = append(t.findings, Finding{ProbeID: c.ProbeID, Pointer: f.ptr, What: f.what})
	}
}

// verdict decides: fail on any finding; else a harness error on any call the
// rule needed; else pass when something was examined; else skip, saying why.
func (t *tally) verdict(none string) Verdict {
	switch {
	case len(t.failed) > 0:
		msg := t.id + ": " + t.findings[0].String()
		if n := len(t.findings) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %d more)", n)
		}
		return Verdict{Rule: t.id, Outcome: Fail, Message: msg, Findings: t.findings, Calls: t.failed, Examined: t.ids()}
	case len(t.errored) > 0:
		c := t.errored[0]
		msg := fmt.Sprintf("%s: harness error: %s: %s", t.id, c.ProbeID, wire.Sanitize(c.HarnessError, 200))
		return Verdict{Rule: t.id, Outcome: HarnessError, Message: msg, Calls: t.errored, Examined: t.ids()}
	case len(t.examined) > 0:
		return Verdict{Rule: t.id, Outcome: Pass, Calls: t.examined, Examined: t.ids()}
	case len(t.notRun) > 0:
		return Verdict{Rule: t.id, Outcome: Skip, Message: strings.Join(t.notRun, "; ")}
	}
	return Verdict{Rule: t.id, Outcome: Skip, Message: none}
}

func (t *tally) ids() []string {
	out := make([]string, len(t.examined))
	for i, c := range t.examined {
		out[i] = c.ProbeID
	}
	return out
}

// eachReply judges every answered call in calls with examine, which says
// whether the reply is one the rule judges and what is wrong with it. needed
// says which calls' harness errors and skip reasons count (nil: all).
func eachReply(id string, calls []evidence.Call, needed func(evidence.Call) bool, none string, examine func(r *reply) (bool, []finding)) Verdict {
	t := newTally(id)
	for _, c := range calls {
		if needed == nil || needed(c) {
			if !t.account(c) {
				continue
			}
		} else if c.NotRun != "" || c.HarnessError != "" {
			continue
		}
		if c.Message == nil {
			continue // no JSON-RPC reply: nothing of the reply to judge
		}
		if why := stopping(); why != "" {
			// Parsing and judging a reply cost its size, and a rule's
			// replies may be many megabytes: a rule stops between them, the
			// replies left a harness error (a failure found before stands).
			c.HarnessError = why + " before this reply was judged"
			t.errored = append(t.errored, c)
			continue
		}
		r := parseReply(c)
		if ok, fs := examine(r); ok {
			t.judged(c, fs)
		}
	}
	return t.verdict(none)
}

// stopJudging is the run's Options.Stop while a judge runs (Check.judge
// sets it), for the loops over replies to ask between replies.
var stopJudging atomic.Pointer[func() string]

// stopping is why the judge running must stop ("" to go on).
func stopping() string {
	if f := stopJudging.Load(); f != nil {
		return (*f)()
	}
	return ""
}

// probe returns the ID of a probe of the store's transport: "mcp/" or
// "a2a/" and rest.
func probe(s *evidence.Store, rest string) string {
	t := s.Scope()
	if t == "" {
		t = evidence.MCP
	}
	return string(t) + "/" + rest
}

// agentURL is the URL the user gave for the store's transport.
func agentURL(s *evidence.Store) string {
	if s.Scope() == evidence.A2A {
		return s.Target().A2A
	}
	return s.Target().MCP
}

// toolCalls returns the tool calls (AdCP task invocations) of the store.
func toolCalls(s *evidence.Store, filters ...evidence.Filter) []evidence.Call {
	return s.Calls(append([]evidence.Filter{evidence.OfKind(evidence.KindToolCall)}, filters...)...)
}

// errorProbe reports whether a call was made to provoke an application
// error.
func errorProbe(c evidence.Call) bool {
	return mandatoryErrorProbe(c) || c.Has(evidence.PurposeErrorWrongType) || c.Has(evidence.PurposeErrorUnknownID)
}

// mandatoryErrorProbe reports whether a call provokes an error the spec
// makes mandatory (ERR-01): a release or major version the seller cannot
// serve (VERSION_UNSUPPORTED), an unknown id on the task-status tool
// (REFERENCE_NOT_FOUND). A success answering it is a failure.
func mandatoryErrorProbe(c evidence.Call) bool {
	return c.Has(evidence.PurposeErrorVersion) || c.Has(evidence.PurposeErrorMajorVersion) || c.Has(evidence.PurposeErrorUnknownTask)
}
