package plan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// NotAllowed is why a mutating probe did not run.
const NotAllowed = "mutating probes not allowed (--allow-mutations)"

func init() {
	registerMCP(func(ctx context.Context, env Env) {
		idempotencyProbes(env, "mcp/", func(id string, args map[string]any, p evidence.Purpose) evidence.Call {
			return env.Shared.CallTool(ctx, id, "create_media_buy", args, p)
		})
	})
	registerA2A(func(ctx context.Context, env Env) {
		idempotencyProbes(env, "a2a/", func(id string, args map[string]any, p evidence.Purpose) evidence.Call {
			return env.A2A.Send(ctx, id, "create_media_buy", args, p)
		})
	})
}

// idempotencyProbes are the mutating probes of IDEM-02..04, on a sandbox
// account (account.sandbox: true, merged into the user's base arguments)
// with a key unique to the run: a create without a key, the first create
// with the key, its replay, and the same key with a changed po_number.
// Without --allow-mutations each is recorded as not run, and no request
// leaves the harness.
//
// The key and the po_numbers carry a random part besides the nonce: --seed
// makes the nonce repeat, and a second run against the same seller within
// its replay window would otherwise have its "first" create replayed.
func idempotencyProbes(env Env, prefix string, call func(id string, args map[string]any, p evidence.Purpose) evidence.Call) {
	if !slices.Contains(env.Listed, "create_media_buy") {
		return
	}
	run := fmt.Sprintf("%s-%08x", env.Nonce, rand.Uint32())
	key := "adcp-conform-" + run + "-" + prefix[:3] + "-create"
	args := func(po string, withKey bool) map[string]any {
		a := env.Config.Inputs.base("create_media_buy")
		merge(a, map[string]any{"account": map[string]any{"sandbox": true}, "po_number": "adcp-conform-" + run + "-" + po})
		if withKey {
			a["idempotency_key"] = key
		}
		return a
	}
	steps := []struct {
		id      string
		purpose evidence.Purpose
		args    map[string]any
	}{
		{"idem/missing_key", evidence.PurposeIdemMissingKey, args("a", false)},
		{"idem/first", evidence.PurposeIdemFirst, args("a", true)},
		{"idem/replay", evidence.PurposeIdemReplay, args("a", true)},
		{"idem/conflict", evidence.PurposeIdemConflict, args("b", true)},
	}
	for _, st := range steps {
		id := prefix + st.id
		if !env.Config.AllowMutations {
			env.Add(evidence.Call{ProbeID: id, Transport: evidence.Transport(prefix[:3]), Kind: evidence.KindToolCall,
				Tool: "create_media_buy", Purposes: []evidence.Purpose{st.purpose}, NotRun: NotAllowed})
			continue
		}
		c := call(id, st.args, st.purpose)
		c.Arguments, _ = redactedArgs(st.args)
		c.Credential = "configured"
		env.Add(c)
	}
}
