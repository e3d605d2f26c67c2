package check

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// sv is one crafted step for an invariant table: the task, what was sent
// and what came back.
type sv struct {
	task        string
	req         string // JSON object
	reply       string // JSON payload; "" for none
	code        string // the extracted error code; the reply is then a refusal
	expectError bool
	echoed      bool // the capture found the run's credential in the reply
}

// gradeSteps runs one invariant over crafted steps and returns, per step,
// "-" (no result), "pass" or "fail: <message>".
func gradeSteps(t *testing.T, inv string, steps []sv) []string {
	t.Helper()
	var ran []Ran
	for i, s := range steps {
		id := string(rune('a' + i))
		obs := &spec.Observation{Task: s.task, Transport: "mcp", ErrorCode: s.code, Refused: s.code != ""}
		if err := json.Unmarshal([]byte(s.req), &obs.Request); err != nil {
			t.Fatalf("step %d request: %v", i, err)
		}
		if s.reply != "" {
			var p any
			if err := json.Unmarshal([]byte(s.reply), &p); err != nil {
				t.Fatalf("step %d reply: %v", i, err)
			}
			obs.Payload = spec.Normalize(p)
		}
		if s.code != "" {
			obs.Error = map[string]any{"code": s.code, "message": "no"}
			if m, ok := obs.Payload.(map[string]any); ok {
				if errs := objects(m["errors"]); len(errs) > 0 {
					obs.Error = errs[0]
				}
			}
		}
		obs.Call.Exchanges = []wire.Exchange{{SecretEchoed: s.echoed}}
		ran = append(ran, Ran{ID: "p." + id, Task: s.task, ExpectError: s.expectError, Obs: obs})
	}
	var out []string
	for _, results := range Invariants([]string{inv}, ran) {
		got := "-"
		for _, v := range results {
			if v.Check != checkInvariant || v.ID != inv {
				t.Fatalf("unexpected validation %+v", v)
			}
			if v.Passed {
				got = "pass"
			} else {
				got = "fail: " + v.Message
			}
		}
		out = append(out, got)
	}
	return out
}

type invCase struct {
	name  string
	steps []sv
	// want per step: "-", "pass", or "fail" (prefix of the message after "fail: " when longer)
	want []string
}

func runInvariantTable(t *testing.T, inv string, cases []invCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := gradeSteps(t, inv, c.steps)
			if len(got) != len(c.want) {
				t.Fatalf("got %d results, want %d", len(got), len(c.want))
			}
			for i := range got {
				w := c.want[i]
				switch {
				case w == "-" || w == "pass":
					if got[i] != w {
						t.Errorf("step %d: got %q, want %q", i, got[i], w)
					}
				case strings.HasPrefix(w, "fail"):
					if !strings.HasPrefix(got[i], "fail") || !strings.Contains(got[i], strings.TrimPrefix(strings.TrimPrefix(w, "fail"), ": ")) {
						t.Errorf("step %d: got %q, want %q", i, got[i], w)
					}
				}
			}
		})
	}
}

const (
	createReq  = `{"idempotency_key":"k-0000000000000001","brand":{"domain":"acme.example"},"end_time":"2099-07-31T23:59:59Z","packages":[{"product_id":"p1","budget":5000}],"context":{"correlation_id":"initial-call"}}`
	createOK   = `{"status":"completed","media_buy_id":"mb_7f3a9c21","media_buy_status":"pending_creatives","confirmed_at":"2026-11-25T10:00:00Z","context":{"correlation_id":"initial-call"}}`
	conflictRq = `{"idempotency_key":"k-0000000000000001","brand":{"domain":"acme.example"},"end_time":"2099-08-31T23:59:59Z","packages":[{"product_id":"p1","budget":9000}],"context":{"correlation_id":"conflict-call"}}`
)

func conflictReply(extra string) string {
	return `{"errors":[{"code":"IDEMPOTENCY_CONFLICT","message":"idempotency_key was used with a different payload"` + extra + `}],"context":{"correlation_id":"conflict-call"}}`
}

func TestInvariantConflictNoPayloadLeak(t *testing.T) {
	create := sv{task: "create_media_buy", req: createReq, reply: createOK}
	conflict := func(extra string) sv {
		return sv{task: "create_media_buy", req: conflictRq, reply: conflictReply(extra), code: "IDEMPOTENCY_CONFLICT", expectError: true}
	}
	runInvariantTable(t, spec.InvariantConflictNoPayloadLeak, []invCase{
		{"the spec's example: code, message, recovery", []sv{create, conflict(`,"recovery":"correctable"`)}, []string{"-", "pass"}},
		{"a retry_after and details with nothing of the original", []sv{create, conflict(`,"retry_after":1,"details":{"window_seconds":86400}`)}, []string{"-", "pass"}},
		{"the buyer's own values repeated", []sv{create, conflict(`,"details":{"brand":"acme.example","end_time":"2099-08-31T23:59:59Z"}`)}, []string{"-", "pass"}},
		{"a time of its own equal to the cached reply's", []sv{create, conflict(`,"details":{"at":"2026-11-25T10:00:00Z"}`)}, []string{"-", "pass"}},
		{"a field pointer", []sv{create, conflict(`,"field":"/packages/0/budget"`)}, []string{"-", "fail: carries field"}},
		{"the cached media_buy_id", []sv{create, conflict(`,"details":{"existing":"mb_7f3a9c21"}`)}, []string{"-", "fail: mb_7f3a9c21"}},
		{"a short cached id", []sv{{task: "create_media_buy", req: createReq, reply: strings.Replace(createOK, "mb_7f3a9c21", "mb_0001", 1)},
			conflict(`,"details":{"existing_media_buy_id":"mb_0001"}`)}, []string{"-", "fail: mb_0001"}},
		{"the original end_time in the message", []sv{create, conflict(`,"details":{"was":"end 2099-07-31T23:59:59Z"}`)}, []string{"-", "fail: 2099-07-31T23:59:59Z"}},
		{"the cached response beside the error", []sv{create, {task: "create_media_buy", req: conflictRq, code: "IDEMPOTENCY_CONFLICT", expectError: true,
			reply: `{"errors":[{"code":"IDEMPOTENCY_CONFLICT","message":"m"}],"media_buy_id":"mb_7f3a9c21"}`}}, []string{"-", "fail"}},
		{"another key's values are no leak", []sv{create, {task: "create_media_buy", req: strings.Replace(conflictRq, "k-0000000000000001", "k-0000000000000002", 1),
			reply: conflictReply(`,"details":{"existing":"mb_7f3a9c21"}`), code: "IDEMPOTENCY_CONFLICT", expectError: true}}, []string{"-", "pass"}},
		{"another error code is not read", []sv{create, {task: "create_media_buy", req: conflictRq, reply: `{"errors":[{"code":"CONFLICT","message":"m","field":"/x"}]}`, code: "CONFLICT"}}, []string{"-", "-"}},
		{"no conflict at all", []sv{create}, []string{"-"}},
	})
}

func TestInvariantNoSecretEcho(t *testing.T) {
	caps := `{"adcp":{"major_versions":[3]}}`
	runInvariantTable(t, spec.InvariantNoSecretEcho, []invCase{
		{"a plain reply", []sv{{task: "get_adcp_capabilities", req: `{}`, reply: caps}}, []string{"pass"}},
		{"an account's authorization object", []sv{{task: "sync_accounts", req: `{}`, reply: `{"accounts":[{"account_id":"a","authorization":{"scopes":["buy"]}}]}`}}, []string{"pass"}},
		{"prose that says bearer", []sv{{task: "get_products", req: `{}`, reply: `{"products":[],"message":"the bearer of good news"}`}}, []string{"pass"}},
		{"the run's credential, found by the capture", []sv{{task: "get_products", req: `{}`, reply: `{"products":[],"message":"[redacted]"}`, echoed: true}}, []string{"fail: run's own credential"}},
		{"a bearer-token literal", []sv{{task: "get_products", req: `{}`, reply: `{"message":"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc"}`}}, []string{"fail: bearer-token literal"}},
		{"an api_key property", []sv{{task: "get_products", req: `{}`, reply: `{"products":[],"debug":{"api_key":"x"}}`}}, []string{"fail: api_key"}},
		{"an authorization string", []sv{{task: "get_products", req: `{}`, reply: `{"echo":{"Authorization":"Basic Zm9v"}}`}}, []string{"fail: Authorization"}},
		{"an error reply is read too", []sv{{task: "create_media_buy", req: `{}`, reply: `{"errors":[{"code":"INVALID_REQUEST","message":"bad token Bearer abcdefghijklmnop"}]}`, code: "INVALID_REQUEST"}}, []string{"fail"}},
	})
}

func TestInvariantStatusMonotonic(t *testing.T) {
	get := func(status string) sv {
		return sv{task: "get_media_buys", req: `{}`, reply: `{"media_buys":[{"media_buy_id":"mb1","status":"` + status + `"}]}`}
	}
	create := func(body string) sv { return sv{task: "create_media_buy", req: `{}`, reply: body} }
	upd := func(status string) sv {
		return sv{task: "update_media_buy", req: `{}`, reply: `{"status":"completed","media_buy_id":"mb1","media_buy_status":"` + status + `"}`}
	}
	creative := func(task, status string) sv {
		return sv{task: task, req: `{}`, reply: `{"creatives":[{"creative_id":"c1","status":"` + status + `"}]}`}
	}
	runInvariantTable(t, spec.InvariantStatusMonotonic, []invCase{
		{"create, pause, resume, cancel", []sv{create(`{"media_buy_id":"mb1","media_buy_status":"active"}`), upd("paused"), upd("active"), upd("canceled")},
			[]string{"pass", "pass", "pass", "pass"}},
		{"states between reads are unseen", []sv{create(`{"media_buy_id":"mb1","media_buy_status":"pending_creatives"}`), get("completed")}, []string{"pass", "pass"}},
		{"the task status completed on create is not the buy's", []sv{create(`{"status":"completed","media_buy_id":"mb1","media_buy_status":"pending_creatives"}`), get("active")},
			[]string{"pass", "pass"}},
		{"a 3.0 root status that only a buy takes", []sv{create(`{"status":"active","media_buy_id":"mb1"}`), get("pending_creatives")}, []string{"pass", "fail: active"}},
		{"a resume before the flight returns to pending_start", []sv{get("pending_start"), get("paused"), get("pending_start")}, []string{"pass", "pass", "pass"}},
		{"a buy that has run never waits for its flight again", []sv{get("active"), get("paused"), get("pending_start")}, []string{"pass", "pass", "fail: pending_start"}},
		{"a canceled buy comes back", []sv{get("active"), upd("canceled"), get("active")}, []string{"pass", "pass", "fail: canceled"}},
		{"a completed buy is rejected", []sv{get("completed"), get("rejected")}, []string{"pass", "fail: terminal"}},
		{"a cached replay is a snapshot, not a read", []sv{upd("paused"), create(`{"media_buy_id":"mb1","media_buy_status":"pending_creatives","replayed":true}`), get("paused")},
			[]string{"pass", "-", "pass"}},
		{"an expected error is not read", []sv{upd("canceled"), {task: "update_media_buy", req: `{}`, reply: `{"errors":[{"code":"INVALID_STATE","message":"m"}]}`, code: "INVALID_STATE", expectError: true}},
			[]string{"pass", "-"}},
		{"a creative re-synced after rejection restarts", []sv{creative("list_creatives", "approved"), creative("list_creatives", "rejected"), creative("sync_creatives", "pending_review")},
			[]string{"pass", "pass", "pass"}},
		{"a creative goes back to processing on a read", []sv{creative("list_creatives", "approved"), creative("list_creatives", "processing")}, []string{"pass", "fail: processing"}},
		{"a creative suspended and restored (3.1)", []sv{creative("list_creatives", "approved"), creative("list_creatives", "suspended"), creative("list_creatives", "approved")},
			[]string{"pass", "pass", "pass"}},
		{"an account leaves closed", []sv{{task: "list_accounts", req: `{}`, reply: `{"accounts":[{"account_id":"a1","status":"closed"}]}`},
			{task: "list_accounts", req: `{}`, reply: `{"accounts":[{"account_id":"a1","status":"active"}]}`}}, []string{"pass", "fail: closed"}},
		{"a state outside the enum is left to response_schema", []sv{get("active"), get("running"), get("active")}, []string{"pass", "pass", "pass"}},
		{"per-package approvals are tracked apart", []sv{
			{task: "get_media_buys", req: `{}`, reply: `{"media_buys":[{"media_buy_id":"mb1","status":"active","packages":[{"package_id":"p1","creative_approvals":[{"creative_id":"c1","approval_status":"approved"}]},{"package_id":"p2","creative_approvals":[{"creative_id":"c1","approval_status":"pending_review"}]}]}]}`},
			{task: "get_media_buys", req: `{}`, reply: `{"media_buys":[{"media_buy_id":"mb1","status":"active","packages":[{"package_id":"p1","creative_approvals":[{"creative_id":"c1","approval_status":"approved"}]},{"package_id":"p2","creative_approvals":[{"creative_id":"c1","approval_status":"approved"}]}]}]}`}},
			[]string{"pass", "pass"}},
		{"no status in any reply", []sv{{task: "get_products", req: `{}`, reply: `{"products":[]}`}}, []string{"-"}},
	})
}

func TestInvariantImpairmentCoherence(t *testing.T) {
	buy := func(status, health, imps, packages string) sv {
		h := ""
		if health != "" {
			h = `,"health":"` + health + `"`
		}
		return sv{task: "get_media_buys", req: `{}`, reply: `{"media_buys":[{"media_buy_id":"mb1","status":"` + status + `"` + h + `,"impairments":` + imps + `,"packages":` + packages + `}]}`}
	}
	solo := `[{"package_id":"p1","creative_approvals":[{"creative_id":"c1","approval_status":"approved"}]}]`
	pair := `[{"package_id":"p1","creative_approvals":[{"creative_id":"c1","approval_status":"approved"},{"creative_id":"c2","approval_status":"approved"}]}]`
	imp := `[{"impairment_id":"i1","resource_type":"creative","resource_id":"c1","package_ids":["p1"]}]`
	creative := func(status string) sv {
		return sv{task: "list_creatives", req: `{}`, reply: `{"creatives":[{"creative_id":"c1","status":"` + status + `"}]}`}
	}
	forced := sv{task: "comply_test_controller", req: `{"scenario":"force_creative_status","params":{"creative_id":"c1","status":"suspended"}}`,
		reply: `{"success":true,"previous_state":"approved","current_state":"suspended"}`}
	runInvariantTable(t, spec.InvariantImpairmentCoherence, []invCase{
		{"healthy", []sv{creative("approved"), buy("active", "ok", `[]`, solo)}, []string{"-", "pass"}},
		{"health absent and no impairments", []sv{buy("active", "", `[]`, solo)}, []string{"pass"}},
		{"the sole creative suspended and listed", []sv{forced, buy("active", "impaired", imp, solo)}, []string{"-", "pass"}},
		{"impaired without impairments", []sv{buy("active", "impaired", `[]`, solo)}, []string{"fail: impaired"}},
		{"impairments with health ok", []sv{buy("active", "ok", imp, solo)}, []string{"fail"}},
		{"impairments with health absent", []sv{buy("active", "", imp, solo)}, []string{"fail"}},
		{"an impairment on a creative last seen approved", []sv{creative("approved"), buy("active", "impaired", imp, solo)}, []string{"-", "fail: serviceable"}},
		{"the sole creative suspended and not listed", []sv{forced, buy("active", "ok", `[]`, solo)}, []string{"-", "fail: does not list"}},
		{"a suspended creative beside a serviceable peer need not be listed", []sv{forced, buy("active", "ok", `[]`, pair)}, []string{"-", "pass"}},
		{"a terminal buy is not read", []sv{buy("canceled", "impaired", `[]`, solo)}, []string{"-"}},
		{"no snapshot read", []sv{creative("suspended")}, []string{"-"}},
	})
}

func TestInvariantGovernanceDenial(t *testing.T) {
	check := func(verdict string) sv {
		return sv{task: "check_governance", req: `{"plan_id":"plan-1"}`, reply: `{"status":"completed","check_id":"c","plan_id":"plan-1","verdict":"` + verdict + `"}`}
	}
	create := func(plan string) sv {
		return sv{task: "create_media_buy", req: `{"plan_id":"` + plan + `"}`, reply: `{"media_buy_id":"mb1","media_buy_status":"pending_creatives"}`}
	}
	denied := sv{task: "create_media_buy", req: `{"plan_id":"plan-1"}`, reply: `{"errors":[{"code":"GOVERNANCE_DENIED","message":"m"}]}`, code: "GOVERNANCE_DENIED"}
	runInvariantTable(t, spec.InvariantGovernanceDenial, []invCase{
		{"approved then bought", []sv{check("approved"), create("plan-1")}, []string{"-", "pass"}},
		{"denied then bought", []sv{check("denied"), create("plan-1")}, []string{"-", "fail: plan plan-1"}},
		{"denied, then another plan bought", []sv{check("denied"), create("plan-2")}, []string{"-", "pass"}},
		{"denied, restructured and approved, then bought", []sv{check("denied"), check("approved"), create("plan-1")}, []string{"-", "-", "pass"}},
		{"an unexpected GOVERNANCE_DENIED then a buy", []sv{denied, create("plan-1")}, []string{"-", "fail"}},
		{"an expected denial is the storyboard's own setup", []sv{func() sv { d := denied; d.expectError = true; return d }(), create("plan-1")}, []string{"-", "pass"}},
		{"a rejected buy acquires nothing", []sv{check("denied"), {task: "create_media_buy", req: `{"plan_id":"plan-1"}`, reply: `{"media_buy_id":"mb1","media_buy_status":"rejected"}`}}, []string{"-", "-"}},
		{"a 3.0 status verdict", []sv{{task: "check_governance", req: `{"plan_id":"plan-1"}`, reply: `{"plan_id":"plan-1","status":"denied"}`}, create("plan-1")}, []string{"-", "fail"}},
		{"rights acquired after a denial", []sv{check("denied"), {task: "acquire_rights", req: `{"plan_id":"plan-1"}`, reply: `{"rights_id":"r1","rights_status":"acquired"}`}}, []string{"-", "fail: rights_id"}},
		{"rights pending approval acquire nothing", []sv{check("denied"), {task: "acquire_rights", req: `{"plan_id":"plan-1"}`, reply: `{"rights_id":"r1","rights_status":"pending_approval"}`}}, []string{"-", "-"}},
	})
}

// TestInvariantsCoverTheReleases holds the engine to the spec: every
// invariant a release's storyboards declare is defined, and each
// lifecycle graph has every state of each release's enum and no other.
func TestInvariantsCoverTheReleases(t *testing.T) {
	union := map[string]map[string]bool{}
	for _, rel := range []string{"3.1.19", "3.2.0-beta.5"} {
		dir := shared.File(t, filepath.Join("spec/compliance", rel))
		r, err := spec.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, sb := range r.Storyboards {
			for _, id := range sb.Invariants {
				if !slices.Contains(spec.Invariants(), id) {
					t.Errorf("%s: %s declares invariant %s, which the engine does not define", rel, sb.ID, id)
				}
			}
		}
		for _, l := range lifecycles {
			b, err := os.ReadFile(shared.File(t, filepath.Join("spec/schemas", rel, l.enumFile())))
			if err != nil {
				t.Fatal(err)
			}
			var enum struct {
				Enum []string `json:"enum"`
			}
			if err := json.Unmarshal(b, &enum); err != nil {
				t.Fatal(err)
			}
			for _, st := range enum.Enum {
				if !slices.Contains(l.states(), st) {
					t.Errorf("%s: the %s lifecycle lacks %s of %s", rel, l.kindName(), st, l.enumFile())
				}
				if union[l.kindName()] == nil {
					union[l.kindName()] = map[string]bool{}
				}
				union[l.kindName()][st] = true
			}
		}
	}
	for _, l := range lifecycles {
		for _, st := range l.states() {
			if !union[l.kindName()][st] {
				t.Errorf("the %s lifecycle has %s, which no release's %s holds", l.kindName(), st, l.enumFile())
			}
		}
	}
}

// TestInvariantJudgesAreTheInvariantsLintKnows holds the judges and
// lint's list of the invariants the engine defines in step.
func TestInvariantJudgesAreTheInvariantsLintKnows(t *testing.T) {
	for id := range invariantJudges {
		if !slices.Contains(spec.Invariants(), id) {
			t.Errorf("invariant %s has a judge, and lint warns of it as unknown", id)
		}
	}
	for _, id := range spec.Invariants() {
		if _, ok := invariantJudges[id]; !ok {
			t.Errorf("lint knows invariant %s, which has no judge", id)
		}
	}
}

// hasBearerLiteral finds what the regular expression it stands for
// matches, and nothing else: crafted strings at each edge, then random
// ones over an alphabet dense in the pattern's own characters.
func TestHasBearerLiteralIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{10,}`)
	cases := []string{
		"", "bearer", "Bearer abcdefghij", "Bearer abcdefghi", "BEARER\tabc.def~ghi", "xbearer abcdefghij",
		"_bearer abcdefghij", "-bearer abcdefghij", "é bearer abcdefghij", "bearerabcdefghijk", "bearer  \n\r\fabcdefghij",
		"bearer \vabcdefghij", "Authorization: Bearer eyJhbGciOi.x", "bearer bearer abcdefghij", "beaRer abc/+=-_~.12",
		"bearer abcde fghij", "bearer\u00a0abcdefghij", "bearer abcdefghi\u00e9", "Ωbearer abcdefghij",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"b", "B", "e", "a", "r", "R", "bearer", "Bearer", " ", "\t", "\v", "x", "_", "-", ".", "é", "0", "=", "\n"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if got, want := hasBearerLiteral(s), re.MatchString(s); got != want {
			t.Errorf("hasBearerLiteral(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}

// BenchmarkHasBearerLiteral scans a 1 MB string of a seller's reply: the
// no_secret_echo invariant reads every string of every step's reply.
func BenchmarkHasBearerLiteral(b *testing.B) {
	s := strings.Repeat("bearer of news, Bearer x ", 1<<20/25)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if hasBearerLiteral(s) {
			b.Fatal("no literal in it")
		}
	}
}
