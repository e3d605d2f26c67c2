package runner

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
)

// Diagnosis is what the probe phase says about the run itself, before any
// rule is judged: calls the seller's application never saw, and calls
// that timed out.
type Diagnosis struct {
	// Harness is set when the run cannot judge the seller at all (the
	// seller wants a credential the run was not given, or refused the one
	// it was): the run is a harness error, never a seller failure.
	Harness string
	// Notes are one-line remarks for the terminal.
	Notes []string
	// Wrong says, per transport, that the URL given for it is no such
	// endpoint (a web page, the agent card's own URL, the other
	// transport's endpoint): the user's mistake, so the run is a harness
	// error and no rule of that transport fails on it.
	Wrong map[evidence.Transport]string
}

// WrongTarget is the one-line reason of the wrong targets, MCP first; ""
// when every target answered as its transport.
func (d Diagnosis) WrongTarget() string {
	var parts []string
	for _, t := range []evidence.Transport{evidence.MCP, evidence.A2A} {
		if why := d.Wrong[t]; why != "" {
			parts = append(parts, why)
		}
	}
	return strings.Join(parts, "; ")
}

// notTheEndpoint are the statuses with which a server says there is no
// such resource, or that it does not take that method: what a URL that is
// not the endpoint asked for answers.
var notTheEndpoint = map[int]bool{404: true, 405: true, 410: true, 501: true}

// diagnoseTargets finds the transports whose URL is not their endpoint:
// an agent card that is not there (--a2a given the card's own URL, the MCP
// endpoint, a plain web server), an initialize answered as by a server
// that does not speak MCP.
func diagnoseTargets(store *evidence.Store) map[evidence.Transport]string {
	wrong := map[evidence.Transport]string{}
	for _, c := range store.Calls() {
		if c.HarnessError != "" || c.NotRun != "" {
			continue
		}
		switch {
		case c.ProbeID == "a2a/card" && c.Kind == evidence.KindHTTPGet:
			status := ""
			switch {
			case notTheEndpoint[c.HTTPStatus]:
				status = fmt.Sprintf("HTTP %d", c.HTTPStatus)
			case c.HTTPStatus/100 == 2 && c.Body == nil:
				status = fmt.Sprintf("HTTP %d, not a JSON document", c.HTTPStatus)
			}
			if status != "" {
				wrong[evidence.A2A] = fmt.Sprintf("no agent card at %s (%s): --a2a wants the agent's base URL", wire.Sanitize(c.URL, 300), status)
			}
		case c.ProbeID == "mcp/initialize" && c.Kind == evidence.KindInitialize && notTheEndpoint[c.HTTPStatus]:
			wrong[evidence.MCP] = fmt.Sprintf("%s answered initialize with HTTP %d %s: it does not speak MCP Streamable HTTP at this URL (--mcp wants the seller's MCP endpoint)",
				wire.Sanitize(store.Target().MCP, 300), c.HTTPStatus, http.StatusText(c.HTTPStatus))
		}
	}
	return wrong
}

// BlameTheTarget turns every failed spec of a transport whose URL was
// wrong into a harness error with the reason: the seller was never
// reached there, so nothing it did can fail. A rule left with no failure
// drops the findings behind one.
func BlameTheTarget(run *report.Run, wrong map[evidence.Transport]string) {
	if len(wrong) == 0 {
		return
	}
	for i := range run.Rules {
		rule := &run.Rules[i]
		changed, failing := false, false
		for j := range rule.Specs {
			sp := &rule.Specs[j]
			why := wrong[evidence.Transport(sp.Transport)]
			if sp.Outcome == report.Failed && why != "" {
				sp.Outcome, sp.Message, changed = report.Error, rule.ID+": not judged: "+why, true
			}
			if sp.Outcome == report.Failed {
				failing = true
			}
		}
		if changed && !failing {
			rule.Findings = nil
		}
	}
}

// Diagnose reads the store after the probe phase.
func Diagnose(store *evidence.Store) Diagnosis {
	d := Diagnosis{Wrong: diagnoseTargets(store)}
	var authRefused, otherUnreached, timedOut, dropped int
	var firstAuth string
	// A credential the seller took on some call is no user's mistake: a
	// refusal elsewhere is then the seller's answer to that call.
	accepted := false
	for _, c := range store.Calls() {
		if c.Kind == evidence.KindToolCall && !c.OtherAgent() && c.Credential == "configured" && c.Answered() && c.Unreached() == "" && c.HTTPStatus/100 == 2 {
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
		if why == "" || c.IsStoryboard() {
			// A storyboard's calls are graded by the storyboard: its
			// negative auth steps send bad credentials on purpose.
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
		d.Notes = append(d.Notes, fmt.Sprintf("%d calls were refused for authentication although the run's credential was accepted on others, first %s; the rules that needed them are errors", authRefused, firstAuth))
	case authRefused > 0:
		if store.Target().Credential {
			d.Harness = fmt.Sprintf("the seller refused the run's credential on %d calls, first %s: check the token --bearer-env names and the --header values", authRefused, firstAuth)
		} else {
			d.Harness = fmt.Sprintf("the seller wants authentication: %d calls were refused, first %s; give its credential with --bearer-env NAME (the name of an environment variable holding the token) or --header 'Name: value'", authRefused, firstAuth)
		}
	}
	if otherUnreached > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d calls were refused before the seller's application (rate limit or gateway); the rules that needed them are errors, not failures", otherUnreached))
	}
	if dropped > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("the run's evidence budget (--max-total) was spent: %d exchanges keep sizes and SHA-256 digests instead of bodies; the calls they answered are errors", dropped))
	}
	if timedOut > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d calls timed out; the rules that needed them are errors, not failures (a slow seller may need a longer --timeout)", timedOut))
	}
	return d
}

func statusOf(c evidence.Call) string {
	if c.HTTPStatus != 0 && c.HTTPStatus != 200 {
		return fmt.Sprintf("HTTP %d", c.HTTPStatus)
	}
	return "JSON-RPC -32028"
}
