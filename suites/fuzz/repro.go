package fuzz

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/mcp"
	"github.com/adcp-conform/adcp-conform/probes/schemas"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/suites"
)

// Reproductions returns the reproduction of every failed turn and every
// cross-tenant pair that differs in the store, by rule then probe ID, read
// from the evidence alone. bearerEnv and tenant2Env are the names of the
// variables holding the tokens ("" for none), as the user gave them: the
// shell text names them, never a token.
func Reproductions(store *evidence.Store, set *schemas.Set, bearerEnv, tenant2Env string) []report.FuzzRepro {
	var out []report.FuzzRepro
	for id, sh := range suites.FuzzShrunk(store, set) {
		o := suites.FuzzOracle(sh.Last, set)
		if o.Class != suites.FuzzFailed {
			continue
		}
		r := report.FuzzRepro{Rule: o.Rule, Tool: sh.Turn.Tool, Turn: id, Call: sh.Last.ProbeID, Arguments: string(sh.Last.Arguments),
			TurnBytes: len(sh.Turn.Arguments), Bytes: len(sh.Last.Arguments), ShrinkCalls: sh.Calls}
		if len(o.Findings) > 0 {
			r.What = strings.TrimSpace(o.Findings[0].Pointer + " " + o.Findings[0].What)
		}
		if sh.Calls == 0 {
			continue // not shrunk: the same failure's reproduction stands for it
		}
		r.Shell = Shell(sh.Last, bearerEnv)
		out = append(out, r)
	}
	out = append(out, pairRepros(store, tenant2Env)...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rule != out[j].Rule {
			return out[i].Rule < out[j].Rule
		}
		return out[i].Turn < out[j].Turn
	})
	// Two turns shrunk to the same failure: the smaller reproduction stands
	// for both.
	best := map[string]int{}
	kept := out[:0]
	for _, r := range out {
		k := r.Rule + "\x00" + r.Tool + "\x00" + r.What
		if i, ok := best[k]; ok {
			if r.Bytes < kept[i].Bytes {
				kept[i] = r
			}
			continue
		}
		best[k] = len(kept)
		kept = append(kept, r)
	}
	return kept
}

// pairRepros are the reproductions of the cross-tenant pairs that differ:
// the smallest pair of each (its shrink), both requests sent as the second
// tenant.
func pairRepros(store *evidence.Store, tenant2Env string) []report.FuzzRepro {
	var out []report.FuzzRepro
	idx := map[string]int{}
	for _, p := range suites.FuzzPairs(store) {
		diffs := suites.FuzzUniformDiffs(p.Other, p.Unknown)
		base := suites.FuzzTurnOf(p.Key)
		i, seen := idx[base]
		switch {
		case !seen && len(diffs) > 0 && base == p.Key:
			idx[base] = len(out)
			out = append(out, report.FuzzRepro{Rule: "FUZZ-05", Tool: p.Other.Tool, Turn: p.Key, TurnBytes: len(p.Other.Arguments)})
			i = idx[base]
		case seen:
			out[i].ShrinkCalls += 2
			if len(diffs) == 0 {
				continue
			}
		default:
			continue
		}
		r := &out[i]
		r.Call, r.What, r.Arguments, r.Bytes = p.Key, diffs[0], string(p.Other.Arguments), len(p.Other.Arguments)
		r.Shell = "# the first tenant's id, as the second tenant:\n" + Shell(p.Other, tenant2Env) +
			"# an id that exists nowhere, as the second tenant:\n" + Shell(p.Unknown, tenant2Env)
	}
	return out
}

// Shell is a ready-to-paste reproduction of a recorded tool call: curl
// sends the request the call sent (over MCP after an initialize of its own
// session, the session id read from its reply's headers), and the reply
// goes through `adcp-conform extract` (SSE framing removed). The request
// is the recorded one, redacted: a credential the request carried is read
// from $bearerEnv.
func Shell(c evidence.Call, bearerEnv string) string {
	var url string
	var body []byte
	for i := len(c.Exchanges) - 1; i >= 0; i-- {
		if x := c.Exchanges[i]; x.Method == "POST" {
			url, body = x.URL, x.RequestBody
			break
		}
	}
	if url == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "URL=%s\n", shq(url))
	auth := ""
	if bearerEnv != "" {
		auth = fmt.Sprintf(" -H \"Authorization: Bearer $%s\"", bearerEnv)
	}
	b.WriteString("H=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'" + auth + ")\n")
	transport := "mcp"
	if c.Transport == evidence.A2A {
		transport = "a2a"
	} else {
		init := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"adcp-conform-repro","version":"1"}}}`, mcp.ProtocolVersion)
		fmt.Fprintf(&b, "SID=$(curl -sS -D - -o /dev/null \"${H[@]}\" \"$URL\" --data-binary %s | tr -d '\\r' | sed -n 's/^[Mm][Cc][Pp]-[Ss][Ee][Ss][Ss][Ii][Oo][Nn]-[Ii][Dd]: //p')\n", shq(init))
		b.WriteString(`H+=(-H "Mcp-Session-Id: $SID")` + "\n")
		fmt.Fprintf(&b, "curl -sS -o /dev/null \"${H[@]}\" \"$URL\" --data-binary %s\n", shq(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	fmt.Fprintf(&b, "curl -sS \"${H[@]}\" \"$URL\" --data-binary %s | sed -n 's/^data: //; /^{/p' | adcp-conform extract --jsonrpc --transport %s\n",
		shq(asciiJSON(body)), transport)
	return b.String()
}

// shq quotes s for a POSIX shell, made safe for a terminal first (a
// recorded URL is the seller's text).
func shq(s string) string {
	s = wire.Sanitize(s, 1<<20)
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// asciiJSON writes a JSON text with every non-ASCII or control character
// as a \u escape: the same JSON value (such characters occur in JSON text
// only inside strings), safe on any terminal and in any shell quoting.
func asciiJSON(b []byte) string {
	var out strings.Builder
	for _, r := range string(b) {
		switch {
		case r >= 0x20 && r < 0x7f:
			out.WriteRune(r)
		case r == '\n' || r == '\r' || r == '\t':
			out.WriteByte(' ') // whitespace between tokens: raw in a string it would not be JSON

		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&out, `\u%04x`, r)
		}
	}
	return out.String()
}
