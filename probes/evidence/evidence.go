// Package evidence is the store between the two phases of a run: the probe
// phase records every call it made to the seller and what came back (as raw,
// redacted bytes), and the judge phase reads it without doing any I/O.
//
//	store := evidence.NewStore(evidence.Target{MCP: url})
//	store.Add(evidence.Call{ProbeID: "read/get_products/valid", Transport: evidence.MCP, Kind: evidence.KindToolCall, Tool: "get_products", ...})
//	for _, c := range store.Calls(evidence.ToolCalls(evidence.MCP)) { ... }
//
// A store is written to disk with the report (store.json), so a recorded run
// can be judged again offline.
package evidence

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// Transport names the protocol face a call went through.
type Transport string

// The transports.
const (
	MCP Transport = "mcp"
	A2A Transport = "a2a"
)

// Kind says what sort of request a call was.
type Kind string

// The kinds of call.
const (
	// KindInitialize is the MCP initialize request (and its notification).
	KindInitialize Kind = "initialize"
	// KindToolsList is an MCP tools/list request.
	KindToolsList Kind = "tools_list"
	// KindToolCall is an MCP tools/call or an A2A message carrying an AdCP
	// task.
	KindToolCall Kind = "tool_call"
	// KindHTTPGet is a plain HTTP GET (server cards, agent cards).
	KindHTTPGet Kind = "http_get"
	// KindTLSHandshake: a bare TLS handshake with the target's host, no
	// request sent.
	KindTLSHandshake Kind = "tls_handshake"
	// KindWebhook: the deliveries the harness's webhook receiver saw for
	// one operation (Exchanges holds one per delivery).
	KindWebhook Kind = "webhook"
	// KindTask: an MCP Tasks request whose reply is not a tool result: a
	// task-augmented tools/call (answered with a task handle), tasks/get,
	// tasks/cancel, tasks/list.
	KindTask Kind = "mcp_task"
	// KindStoryboardContext: no request, the values a storyboard run
	// minted ($generate aliases), in Arguments, so the run can be judged
	// again with the same requests.
	KindStoryboardContext Kind = "storyboard_context"
)

// Purpose tags say why a probe made a call; judges select calls by them.
type Purpose string

// The purposes the probe plan uses.
const (
	// PurposeValid is a read call with valid arguments and no envelope
	// fields beyond the tool's own.
	PurposeValid Purpose = "valid"
	// PurposeEnvelopeFields is a read call carrying every envelope field
	// (TOL-01).
	PurposeEnvelopeFields Purpose = "envelope_fields"
	// PurposeContext is a read call carrying a random nested context (CTX).
	PurposeContext Purpose = "context"
	// PurposeNoContext is a read call without a context (CTX-03).
	PurposeNoContext Purpose = "no_context"
	// PurposeErrorVersion pins adcp_version "99.0" (VER-02).
	PurposeErrorVersion Purpose = "error_version"
	// PurposeErrorWrongType sends a wrong-typed argument.
	PurposeErrorWrongType Purpose = "error_wrong_type"
	// PurposeErrorUnknownID references an id that does not exist on a read
	// tool; a lenient seller may answer it with a success (an empty list).
	PurposeErrorUnknownID Purpose = "error_unknown_id"
	// PurposeErrorUnknownTask asks the task-status tool (tasks/get,
	// get_task_status) about a task id that does not exist: the error
	// (REFERENCE_NOT_FOUND) is mandatory (ERR-01).
	PurposeErrorUnknownTask Purpose = "error_unknown_task"
	// PurposeErrorMajorVersion declares an unsupported major version with
	// the integer adcp_major_version (VER-02): VERSION_UNSUPPORTED is
	// mandatory.
	PurposeErrorMajorVersion Purpose = "error_major_version"
	// PurposeAuthNone repeats a protected call without the credential.
	PurposeAuthNone Purpose = "auth_none"
	// PurposeAuthRandom sends a random invalid credential.
	PurposeAuthRandom Purpose = "auth_random"
	// PurposeAuthCapabilities calls get_adcp_capabilities without a
	// credential.
	PurposeAuthCapabilities Purpose = "auth_capabilities"
	// PurposeRateBurst is the opt-in bounded burst for RATE_LIMITED.
	PurposeRateBurst Purpose = "rate_burst"
	// PurposeDiscovery is a discovery request (initialize, tools/list,
	// cards).
	PurposeDiscovery Purpose = "discovery"
	// PurposeStream: the call went through the streaming method (A2A
	// message/stream, SendStreamingMessage).
	PurposeStream Purpose = "stream"
	// PurposeVersionPin: the call pins adcp_version to a release the
	// seller advertises (VER-03).
	PurposeVersionPin Purpose = "version_pin"
	// The idempotency probes (mutating): a create without a key, the first
	// create with one, its replay, and the same key with another payload.
	PurposeIdemMissingKey Purpose = "idem_missing_key"
	PurposeIdemFirst      Purpose = "idem_first"
	PurposeIdemReplay     Purpose = "idem_replay"
	PurposeIdemConflict   Purpose = "idem_conflict"
	// PurposeHookSync: a synchronous call registering a webhook, and the
	// deliveries the harness's receiver saw for it (HOOK-04).
	PurposeHookSync Purpose = "hook_sync"
	// PurposeTask: a call of the MCP Tasks probes (a task-augmented
	// tools/call, tasks/get polling) on the session that owns the task.
	PurposeTask Purpose = "task"
	// PurposeTaskResult: a tasks/result reply, recorded as a tool call so
	// the envelope and error rules judge it like a direct result (TASK-02).
	PurposeTaskResult Purpose = "task_result"
	// PurposeTaskIsolation: a second MCP session asking for the first
	// session's task (TASK-04).
	PurposeTaskIsolation Purpose = "task_isolation"
	// PurposeTaskTTL: a task-augmented call asking for a ten-year TTL
	// (TASK-05).
	PurposeTaskTTL Purpose = "task_ttl"
	// PurposeHookAsync: a call asking for asynchronous work that registers
	// a webhook, and the deliveries the receiver saw for it (HOOK-01..03).
	PurposeHookAsync Purpose = "hook_async"
	// PurposeHookKeys: the fetches of the seller's brand.json and JWKS, to
	// verify RFC 9421 webhook signatures (HOOK-02).
	PurposeHookKeys Purpose = "hook_keys"
	// PurposeFuzz: a turn of adcp-conform fuzz, a request generated from
	// the release's request schema (FUZZ-01, FUZZ-02, FUZZ-04).
	PurposeFuzz Purpose = "fuzz"
	// PurposeFuzzShrink: a smaller request sent while shrinking a failed
	// turn (its probe ID is the turn's, then /shrink/NNN).
	PurposeFuzzShrink Purpose = "fuzz_shrink"
	// PurposeFuzzUnknownID: an accepted turn that used an existing id,
	// sent again with an unknown id of the same shape (FUZZ-03).
	PurposeFuzzUnknownID Purpose = "fuzz_unknown_id"
	// PurposeFuzzTenant2: the cross-tenant probe, made with the second
	// tenant's credential: the first tenant's id (/other) and an unknown
	// one (/unknown) (FUZZ-05).
	PurposeFuzzTenant2 Purpose = "fuzz_tenant2"
	// PurposeFuzzSeed: a call creating a resource on a sandbox so the
	// fuzz turns have existing ids to use (--sandbox).
	PurposeFuzzSeed Purpose = "fuzz_seed"
)

// Call is one request a probe made and everything that came back. Raw
// members are nil when absent, so absent is never confused with null.
type Call struct {
	ProbeID   string    `json:"probe_id"`
	Transport Transport `json:"transport"`
	Kind      Kind      `json:"kind"`
	Purposes  []Purpose `json:"purposes,omitempty"`
	// Tool is the AdCP task (MCP tool or A2A skill) for tool calls.
	Tool string `json:"tool,omitempty"`
	// Method is the JSON-RPC method, or the HTTP method for KindHTTPGet.
	Method string `json:"method,omitempty"`
	// URL is the request URL (redacted) for KindHTTPGet.
	URL string `json:"url,omitempty"`
	// Arguments are the tool arguments sent (redacted).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Context is the context object sent in the arguments; nil when the call
	// sent none.
	Context json.RawMessage `json:"context,omitempty"`
	// Credential says which credential the call carried: "configured",
	// "none" or "random".
	Credential string `json:"credential,omitempty"`
	// Agent is the logical agent a storyboard step's call went to (the
	// step's agent: key, --agent NAME=URL) when it is not the agent under
	// test; "" is the agent under test. The rules judge only the latter.
	Agent string `json:"agent,omitempty"`

	// Message is the raw JSON-RPC response message; nil when none was
	// received (an HTTP error without a JSON-RPC body, a transport failure).
	Message json.RawMessage `json:"message,omitempty"`
	// Result and RPCError are the raw members of Message; nil when absent.
	Result   json.RawMessage `json:"result,omitempty"`
	RPCError json.RawMessage `json:"rpc_error,omitempty"`
	// HTTPStatus is the status of the HTTP exchange that answered; 0 when
	// there was none.
	HTTPStatus int `json:"http_status,omitempty"`
	// Body is the raw HTTP body for KindHTTPGet calls.
	Body json.RawMessage `json:"body,omitempty"`
	// Exchanges are the HTTP exchanges made for this call.
	Exchanges []wire.Exchange `json:"exchanges,omitempty"`

	// HarnessError is set when the harness or the network failed: the call
	// proves nothing about the seller.
	HarnessError string `json:"harness_error,omitempty"`
	// Blocked is a fetch policy's refusal of a URL the seller named (not
	// https, a private address after resolution, a rebinding peer): the
	// seller's doing, judged as such, not a harness error.
	Blocked string `json:"blocked,omitempty"`
	// Refused is the seller's refusal of a read probe it answered with an
	// error ("CODE: message"): the probe could not run with the harness's
	// arguments (often a business field the seller requires; see --inputs).
	// The reply stays evidence for the error-shape rules.
	Refused string `json:"refused,omitempty"`
	// NotRun is set when the probe could not run (a capability the seller
	// does not declare, mutations not allowed, a business argument the seller
	// requires and the run was not given); it is the skip reason.
	NotRun string `json:"not_run,omitempty"`

	Started    time.Time `json:"started"`
	DurationMS float64   `json:"duration_ms"`
}

// Has reports whether the call was made for purpose p.
func (c Call) Has(p Purpose) bool {
	for _, q := range c.Purposes {
		if q == p {
			return true
		}
	}
	return false
}

// Answered reports whether the call got a JSON-RPC response from the seller.
func (c Call) Answered() bool {
	return c.HarnessError == "" && c.NotRun == "" && c.Message != nil
}

// SecretEchoed reports whether any exchange of the call carried a configured
// secret back in its response.
func (c Call) SecretEchoed() bool {
	for _, x := range c.Exchanges {
		if x.SecretEchoed {
			return true
		}
	}
	return false
}

// Target is what the run tested.
type Target struct {
	MCP string `json:"mcp,omitempty"`
	A2A string `json:"a2a,omitempty"`
	// Sandbox is set when the run targets a sandbox (CAP-04).
	Sandbox bool `json:"sandbox,omitempty"`
	// Credential is set when the run was given a credential.
	Credential bool `json:"credential,omitempty"`
	// AllowMutations is set when probes that create state may run.
	AllowMutations bool `json:"allow_mutations,omitempty"`
	// LocalFetch is set when the run was flagged for local development:
	// URLs the agent names were fetched over http and from loopback and
	// private addresses (never a certifiable run).
	LocalFetch bool `json:"local_fetch,omitempty"`
	// BrandJSON is the operator-configured URL of the agent's brand.json
	// (--brand-json), "" when the run was given none.
	BrandJSON string `json:"brand_json,omitempty"`
	// LiveCredential is set when the run was given a live-mode
	// principal's credential (--live-bearer-env): the steps that
	// authenticate as a live-mode test kit were sent with it.
	LiveCredential bool `json:"live_credential,omitempty"`
}

// Store holds the calls of one run. It is safe for concurrent use by the
// probe phase; the judge phase only reads.
type Store struct {
	mu     sync.Mutex
	target Target
	scope  Transport
	calls  []Call
	red    *wire.Redactor
}

// NewStore returns an empty store for the target that redacts the secrets
// (the run's credentials) from every call it records, in any letter case
// and any escaped form (see wire.Redactor).
func NewStore(t Target, secrets ...string) *Store {
	return &Store{target: t, red: wire.NewRedactor(secrets, nil)}
}

// NewStoreWith returns an empty store for the target that redacts with
// red (one that follows the secrets a run learns as it goes, say).
func NewStoreWith(t Target, red *wire.Redactor) *Store {
	return &Store{target: t, red: red}
}

// Redactor is the store's redaction: every output written from the store
// (the reports, the terminal) passes through it too. A nil store's, or a
// store read back from evidence.json, knows no secret.
func (s *Store) Redactor() *wire.Redactor {
	if s == nil {
		return nil
	}
	return s.red
}

// Target returns what the run tested.
func (s *Store) Target() Target { return s.target }

// Add records a call, redacted, and returns it as recorded: what a
// recorder shows or reads afterwards is what the evidence holds.
func (s *Store) Add(c Call) Call {
	c = redact(s.red, c)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	return c
}

// Calls returns the calls that match every filter, ordered by probe ID so
// judges see the same order whatever the probes' concurrency was.
func (s *Store) Calls(filters ...Filter) []Call {
	s.mu.Lock()
	all := append([]Call(nil), s.calls...)
	s.mu.Unlock()
	sort.SliceStable(all, func(i, j int) bool { return all[i].ProbeID < all[j].ProbeID })
	out := all[:0]
	for _, c := range all {
		if matches(c, filters) {
			out = append(out, c)
		}
	}
	return out
}

// Only returns a view of the store holding the calls of transport t alone,
// with the same target; its Scope is t. Judges of one transport read such a
// view, so probe IDs and filters need not name the transport.
func (s *Store) Only(t Transport) *Store {
	v := &Store{target: s.target, scope: t, red: s.red}
	for _, c := range s.Calls() {
		if c.Transport == t {
			v.calls = append(v.calls, c)
		}
	}
	return v
}

// StoryboardPrefix starts the probe ID of every call a storyboard step
// made ("storyboard/<storyboard>/<phase>/<step>").
const StoryboardPrefix = "storyboard/"

// IsStoryboard reports whether a storyboard step made the call.
func (c Call) IsStoryboard() bool { return strings.HasPrefix(c.ProbeID, StoryboardPrefix) }

// OtherAgent reports whether the call went to another logical agent than
// the agent under test (a multi-agent storyboard's routed step).
func (c Call) OtherAgent() bool { return c.Agent != "" }

// Probes returns a view of the store without the storyboard steps' calls:
// the rules' judges read the harness's own crafted probes (a storyboard
// sends the spec's sample requests, with credentials stripped on purpose
// in places); the storyboards grade their own calls.
func (s *Store) Probes() *Store {
	v := &Store{target: s.target, scope: s.scope, red: s.red}
	for _, c := range s.Calls() {
		if !c.IsStoryboard() {
			v.calls = append(v.calls, c)
		}
	}
	return v
}

// Scope is the transport of a view made by Only; "" for a whole store.
func (s *Store) Scope() Transport { return s.scope }

// Call returns the call with the probe ID.
func (s *Store) Call(probeID string) (Call, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.calls {
		if c.ProbeID == probeID {
			return c, true
		}
	}
	return Call{}, false
}

// Filter selects calls.
type Filter func(Call) bool

// ToolCalls selects the tool calls on a transport.
func ToolCalls(t Transport) Filter {
	return func(c Call) bool { return c.Transport == t && c.Kind == KindToolCall }
}

// WithPurpose selects the calls made for purpose p.
func WithPurpose(p Purpose) Filter { return func(c Call) bool { return c.Has(p) } }

// OfKind selects the calls of kind k.
func OfKind(k Kind) Filter { return func(c Call) bool { return c.Kind == k } }

// Answered selects the calls the seller answered with a JSON-RPC message.
func Answered() Filter { return Call.Answered }

func matches(c Call, filters []Filter) bool {
	for _, f := range filters {
		if !f(c) {
			return false
		}
	}
	return true
}

// document is the on-disk form of a store.
type document struct {
	Target Target `json:"target"`
	Calls  []Call `json:"calls"`
	// Omitted says how many recorded calls the file leaves out, and why:
	// the run was interrupted, or hit its deadline, while writing them.
	Omitted *Omitted `json:"omitted,omitempty"`
}

// Omitted is the count of recorded calls an evidence.json leaves out (the
// last ones, in probe-ID order) and the reason.
type Omitted struct {
	Calls  int    `json:"calls"`
	Reason string `json:"reason"`
}

// MarshalJSON writes the store in probe-ID order. A raw member encoding/json
// cannot embed (a reply nested deeper than 10 000 levels) is kept whole in
// a wrapper (see pack).
func (s *Store) MarshalJSON() ([]byte, error) {
	return json.Marshal(document{Target: s.target, Calls: packed(s.Calls())})
}

// UnmarshalJSON reads a store written by MarshalJSON.
func (s *Store) UnmarshalJSON(b []byte) error {
	var d document
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	unpacked(d.Calls)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.target, s.calls = d.Target, d.Calls
	return nil
}
