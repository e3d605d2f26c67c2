package certify

import (
	"net/url"
	"strings"

	"github.com/adcp-conform/adcp-conform/report"
)

// Mark sets the certification fields of a settled run: Certify, and
// Publishable with the reasons it is not. A run is publishable only when it
// is a certification run of a seller (never the bundled reference seller)
// over HTTPS with no harness error, and every MUST
// rule was judged or skipped for a reason of the seller's own declarations:
// a MUST rule that errored, has no judge yet, or was skipped because of the
// harness's configuration (a message citing a flag, such as
// "--allow-mutations") keeps the run unpublishable, as does a storyboard
// that errored (its steps are MUST-level).
func Mark(run *report.Run, certifyMode bool) {
	run.Certify = certifyMode
	var why []string
	if !certifyMode {
		why = append(why, "not a certification run (--certify)")
	}
	if run.Reference() {
		why = append(why, "the target is the bundled reference seller, not a seller")
	}
	if !allHTTPS(run.Target) {
		why = append(why, "the target is not served over HTTPS")
	}
	if run.HarnessError != "" {
		why = append(why, "the run hit a harness error")
	}
	var unjudged []string
	for _, r := range run.Rules {
		if r.Level != report.Must {
			continue
		}
		if r.Outcome == report.Error || r.Outcome == report.Disabled ||
			(r.Outcome == report.Skipped && (r.Message == report.NotImplemented || strings.Contains(r.Message, "--") ||
				strings.HasPrefix(r.Message, schemasUnavailable))) {
			unjudged = append(unjudged, r.ID)
		}
	}
	if len(unjudged) > 0 {
		why = append(why, "MUST rules not judged for a reason of the harness: "+strings.Join(unjudged, " "))
	}
	var errored []string
	for _, sb := range run.Storyboards {
		if sb.Outcome == report.Error {
			errored = append(errored, sb.ID)
		}
	}
	if len(errored) > 0 {
		why = append(why, "storyboards not judged for a reason of the harness: "+strings.Join(errored, " "))
	}
	run.Publishable = len(why) == 0
	run.PublishableReason = strings.Join(why, "; ")
}

// schemasUnavailable begins the skip reason of the SCHEMA rules when the
// published schemas could not be fetched (suites.SchemasUnavailablePrefix
// and the --schemas off reason): a reason of the harness, not the seller.
const schemasUnavailable = "no schemas"

// allHTTPS reports whether every URL of a target (one per transport,
// separated by spaces) is an https URL.
func allHTTPS(target string) bool {
	urls := strings.Fields(target)
	for _, s := range urls {
		if u, err := url.Parse(s); err != nil || u.Scheme != "https" || u.Host == "" {
			return false
		}
	}
	return len(urls) > 0
}
