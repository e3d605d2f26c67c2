package suites

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// idemReply is an MCP tools/call reply whose structuredContent is body;
// isError marks it an error.
func idemReply(id, body string, isError bool) evidence.Call {
	result := `{"structuredContent":` + body + `,"content":[{"type":"text","text":` + strings.TrimSpace(quoteJSON(body)) + `}]`
	if isError {
		result += `,"isError":true`
	}
	result += `}`
	msg := `{"jsonrpc":"2.0","id":1,"result":` + result + `}`
	return evidence.Call{ProbeID: "mcp/idem/" + id, Transport: evidence.MCP, Kind: evidence.KindToolCall, Tool: "create_media_buy",
		Message: json.RawMessage(msg), Result: json.RawMessage(result), HTTPStatus: 200}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const (
	created      = `{"status":"completed","media_buy_id":"mb_1"}`
	replayed     = `{"status":"completed","media_buy_id":"mb_1","replayed":true}`
	otherBuy     = `{"status":"completed","media_buy_id":"mb_2","replayed":true}`
	keyMissing   = `{"adcp_error":{"code":"INVALID_REQUEST","message":"idempotency_key is required","recovery":"correctable","field":"idempotency_key"}}`
	packagesBad  = `{"adcp_error":{"code":"INVALID_REQUEST","message":"packages is required","recovery":"correctable","field":"packages"}}`
	conflictCode = `{"adcp_error":{"code":"IDEMPOTENCY_CONFLICT","message":"key reused","recovery":"correctable"}}`
)

// idemStore records the four mutating probes; an empty body leaves one out.
func idemStore(missing, first, replay, conflict string) *evidence.Store {
	s := evidence.NewStore(evidence.Target{MCP: "https://seller.example.com/mcp"})
	for _, p := range []struct {
		id, body string
		purpose  evidence.Purpose
	}{
		{"missing_key", missing, evidence.PurposeIdemMissingKey},
		{"first", first, evidence.PurposeIdemFirst},
		{"replay", replay, evidence.PurposeIdemReplay},
		{"conflict", conflict, evidence.PurposeIdemConflict},
	} {
		if p.body == "" {
			continue
		}
		c := idemReply(p.id, p.body, strings.Contains(p.body, "adcp_error"))
		c.Purposes = []evidence.Purpose{p.purpose}
		s.Add(c)
	}
	return s
}

func TestIdempotencyJudges(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store *evidence.Store
		judge func(*evidence.Store, Options) Verdict
		want  Outcome
		msg   string
	}{
		{"missing key refused", idemStore(keyMissing, created, replayed, conflictCode), judgeIDEM02, Pass, ""},
		{"missing key served", idemStore(created, created, replayed, conflictCode), judgeIDEM02, Fail, "succeeds"},
		{"missing key refused for another field while the keyed create works", idemStore(packagesBad, created, replayed, conflictCode), judgeIDEM02, Pass, ""},
		{"every create refused for another field", idemStore(packagesBad, packagesBad, packagesBad, packagesBad), judgeIDEM02, Skip, "--inputs"},
		{"replay flagged", idemStore(keyMissing, created, replayed, conflictCode), judgeIDEM03, Pass, ""},
		{"replay unflagged", idemStore(keyMissing, created, created, conflictCode), judgeIDEM03, Fail, "replayed is not true"},
		{"replay of another buy", idemStore(keyMissing, created, otherBuy, conflictCode), judgeIDEM03, Fail, `"mb_2" differs`},
		{"first use flagged replayed", idemStore(keyMissing, replayed, replayed, conflictCode), judgeIDEM03, Fail, "first use of a fresh key"},
		{"first create refused", idemStore(keyMissing, packagesBad, packagesBad, conflictCode), judgeIDEM03, Skip, "--inputs"},
		{"conflict", idemStore(keyMissing, created, replayed, conflictCode), judgeIDEM04, Pass, ""},
		{"conflict served", idemStore(keyMissing, created, replayed, created), judgeIDEM04, Fail, "succeeds"},
		{"conflict as another error", idemStore(keyMissing, created, replayed, packagesBad), judgeIDEM04, Fail, "INVALID_REQUEST"},
		{"no probes", idemStore("", "", "", ""), judgeIDEM04, Skip, noCreate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forgetReplies()
			v := tc.judge(tc.store, Options{})
			if v.Outcome != tc.want || !strings.Contains(v.Message, tc.msg) {
				t.Fatalf("got %s %q, want %s containing %q", v.Outcome, v.Message, tc.want, tc.msg)
			}
			if v.Outcome == Fail && len(v.Findings) == 0 {
				t.Fatal("a failure without findings")
			}
		})
	}
}

// TestIdempotencyNotRun: without --allow-mutations the probes are recorded
// as not run, and the mutating rules are skipped with that reason, never
// passed.
func TestIdempotencyNotRun(t *testing.T) {
	s := evidence.NewStore(evidence.Target{MCP: "https://seller.example.com/mcp"})
	for id, p := range map[string]evidence.Purpose{"missing_key": evidence.PurposeIdemMissingKey, "first": evidence.PurposeIdemFirst,
		"replay": evidence.PurposeIdemReplay, "conflict": evidence.PurposeIdemConflict} {
		s.Add(evidence.Call{ProbeID: "mcp/idem/" + id, Transport: evidence.MCP, Kind: evidence.KindToolCall, Tool: "create_media_buy",
			Purposes: []evidence.Purpose{p}, NotRun: "mutating probes not allowed (--allow-mutations)"})
	}
	for _, judge := range []func(*evidence.Store, Options) Verdict{judgeIDEM02, judgeIDEM03, judgeIDEM04} {
		v := judge(s, Options{})
		if v.Outcome != Skip || !strings.Contains(v.Message, "--allow-mutations") {
			t.Errorf("got %s %q, want a skip naming --allow-mutations", v.Outcome, v.Message)
		}
	}
}
