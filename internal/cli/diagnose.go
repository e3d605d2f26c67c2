package cli

import (
	"fmt"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
)

// diagnosis is what the probe phase says about the run itself, before any
// rule is judged: calls the seller's application never saw, and calls
// that timed out.
type diagnosis struct {
	// harness is set when the run cannot judge the seller at all (the
	// seller wants a credential the run was not given, or refused the one
	// it was): the run is a harness error, never a seller failure.
	harness string
	// notes are one-line remarks for the terminal.
	notes []string
}

// diagnose reads the store after the probe phase.
func diagnose(store *evidence.Store) diagnosis {
	var d diagnosis
	var authRefused, otherUnreached, timedOut, dropped int
	var firstAuth string
	// A credential the seller took on some call is no user's mistake: a
	// refusal elsewhere is then the seller's answer to that call.
	accepted := false
	for _, c := range store.Calls() {
		if c.Kind == evidence.KindToolCall && c.Credential == "configured" && c.Answered() && c.Unreached() == "" && c.HTTPStatus/100 == 2 {
			accepted = true
		}
	}
	for _, c := range store.Calls() {
		if strings.Contains(c.HarnessError, "call timeout") {
			timedOut++
		}
		for _, x := range c.Exchanges {
			if x.Dropped != nil {
				dropped++
			}
		}
		why := c.Unreached()
		if why == "" {
			continue
		}
		if c.HTTPStatus == 401 || c.HTTPStatus == 403 || strings.Contains(why, "-32028") {
			authRefused++
			if firstAuth == "" {
				firstAuth = fmt.Sprintf("%s (%s)", c.ProbeID, statusOf(c))
			}
			continue
		}
		otherUnreached++
	}
	switch {
	case authRefused > 0 && accepted && store.Target().Credential:
		d.notes = append(d.notes, fmt.Sprintf("%d calls were refused for authentication although the run's credential was accepted on others, first %s; the rules that needed them are errors", authRefused, firstAuth))
	case authRefused > 0:
		if store.Target().Credential {
			d.harness = fmt.Sprintf("the seller refused the run's credential on %d calls, first %s: check the token --bearer-env names and the --header values", authRefused, firstAuth)
		} else {
			d.harness = fmt.Sprintf("the seller wants authentication: %d calls were refused, first %s; give its credential with --bearer-env NAME (the name of an environment variable holding the token) or --header 'Name: value'", authRefused, firstAuth)
		}
	}
	if otherUnreached > 0 {
		d.notes = append(d.notes, fmt.Sprintf("%d calls were refused before the seller's application (rate limit or gateway); the rules that needed them are errors, not failures", otherUnreached))
	}
	if dropped > 0 {
		d.notes = append(d.notes, fmt.Sprintf("the run's evidence budget (--max-total) was spent: %d exchanges keep sizes and SHA-256 digests instead of bodies; the calls they answered are errors", dropped))
	}
	if timedOut > 0 {
		d.notes = append(d.notes, fmt.Sprintf("%d calls timed out; the rules that needed them are errors, not failures (a slow seller may need a longer --timeout)", timedOut))
	}
	return d
}

func statusOf(c evidence.Call) string {
	if c.HTTPStatus != 0 && c.HTTPStatus != 200 {
		return fmt.Sprintf("HTTP %d", c.HTTPStatus)
	}
	return "JSON-RPC -32028"
}
