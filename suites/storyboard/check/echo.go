package check

import (
	"fmt"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// Reporting: what a failure echoes of a seller's reply, bounded.

// echo bounds a seller value for a report: long strings cut, arrays and
// objects capped in size and depth.
func echo(v any) any { return echoAt(v, 0) }

func echoAt(v any, depth int) any {
	switch x := v.(type) {
	case string:
		return spec.Clip(x, maxEchoString)
	case []any:
		if depth >= maxEchoDepth {
			return fmt.Sprintf("[array of %d items, nested too deep to echo]", len(x))
		}
		n := min(len(x), maxEchoItems)
		out := make([]any, 0, n+1)
		for _, e := range x[:n] {
			out = append(out, echoAt(e, depth+1))
		}
		if len(x) > n {
			out = append(out, fmt.Sprintf("… %d more items", len(x)-n))
		}
		return out
	case map[string]any:
		if depth >= maxEchoDepth {
			return fmt.Sprintf("{object of %d keys, nested too deep to echo}", len(x))
		}
		out := make(map[string]any, min(len(x), maxEchoItems))
		i := 0
		for k, e := range x {
			if i == maxEchoItems {
				out["…"] = fmt.Sprintf("%d more keys", len(x)-maxEchoItems)
				break
			}
			out[spec.Clip(k, 200)] = echoAt(e, depth+1)
			i++
		}
		return out
	}
	return v
}

// echoList is echo for the list of terminal values field_contains saw.
func echoList(vs []any) []any {
	out, _ := echo(append([]any{}, vs...)).([]any)
	if out == nil {
		out = []any{}
	}
	return out
}
