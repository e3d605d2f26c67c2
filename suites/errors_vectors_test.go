package suites

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/shared"
	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// TestErrorVectorsReadAsExtractReads runs the spec's transport-error-mapping
// vectors (transport-errors.mdx's Test Vectors) through the judges' reply view: every
// error the client detection (extract) reads is among the candidates the
// ERR, EOBJ, RETRY and CTX judges read, at the same place, and ERR-05 never
// passes a success result a client reads an error from.
func TestErrorVectorsReadAsExtractReads(t *testing.T) {
	b, err := os.ReadFile(shared.File(t, "spec/vectors/transport-error-mapping.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Vectors []struct {
			ID        string          `json:"id"`
			Transport string          `json:"transport"`
			Response  json.RawMessage `json:"response"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range doc.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			var members map[string]json.RawMessage
			if err := json.Unmarshal(v.Response, &members); err != nil {
				t.Fatal(err)
			}
			msg := v.Response
			if _, ok := members["jsonrpc"]; !ok {
				msg = json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":` + string(v.Response) + `}`)
				members = map[string]json.RawMessage{"result": v.Response}
			}
			c := evidence.Call{ProbeID: "vector/" + v.ID, Transport: evidence.Transport(v.Transport), Kind: evidence.KindToolCall,
				Tool: "get_products", Message: msg, Result: members["result"], RPCError: members["error"]}
			forgetReplies()
			defer forgetReplies()
			r := parseReply(c)
			out := r.outcome
			if out.Error == nil {
				return
			}
			want := out.Pointer
			if strings.HasSuffix(want, "/text") {
				want += "#/adcp_error" // extract names the text member; judges step into it
			}
			found := false
			for _, cand := range r.candidates() {
				if cand.ptr == want && jsonEqual(cand.raw, out.Error.Raw) {
					found = true
				}
			}
			if !found {
				t.Errorf("extract reads an error at %s; the judges' candidates are %+v", want, r.candidates())
			}
			if r.success() {
				s := evidence.NewStore(tableTarget)
				s.Add(c)
				for _, chk := range Checks() {
					if chk.ID == "ERR-05" && string(chk.Transport) == v.Transport {
						if verdict := chk.judge(s, Options{}); verdict.Outcome != Fail {
							t.Errorf("ERR-05 %s on a success a client reads an error from: %s", verdict.Outcome, verdict.Message)
						}
					}
				}
			}
		})
	}
}
