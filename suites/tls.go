package suites

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/adcp-conform/adcp-conform/probes/evidence"
	"github.com/adcp-conform/adcp-conform/suites/catalogue"
)

// minHSTSMaxAge is a year, in seconds (TLS-02).
const minHSTSMaxAge = 31536000

var (
	okTLS      = map[string]bool{"TLS 1.2": true, "TLS 1.3": true}
	hstsMaxAge = regexp.MustCompile(`(?i)(?:^|;)\s*max-age\s*=\s*"?(\d+)"?\s*(?:;|$)`)
)

func tlsChecks() []Check {
	return []Check{
		// Rule: TLS-01 · Spec: §4.76 · Since: 0.1.0 ·
		// Description: HTTPS endpoints MUST negotiate TLS 1.2 or newer. Judged on a bare
		// handshake in which the harness offers TLS 1.0 to 1.3 (so an old version is seen,
		// not only refused), and on every HTTPS exchange of the run.
		{ID: "TLS-01", Transport: catalogue.MCP, Text: "negotiates TLS 1.2 or newer", Judge: judgeTLS01},
		// Rule: TLS-02 · Spec: §4.76 · Since: 0.1.0 ·
		// Description: HTTPS responses SHOULD carry Strict-Transport-Security with max-age of
		// at least 31536000 seconds (RFC 6797: the first header counts, directive
		// names are case-insensitive, the value may be quoted; delta-seconds is unbounded, so a
		// value too long for an integer is over a year). Judged on every
		// response of the agent's endpoints and of plain GETs on a target's host;
		// a GET elsewhere (a jwks_uri on a key host the seller does not run) is
		// not the agent's endpoint and is not judged.
		{ID: "TLS-02", Transport: catalogue.MCP, Text: "sends HSTS for at least a year", Judge: judgeTLS02},
	}
}

// notHTTPS is the skip reason for a plain-HTTP target.
func notHTTPS(s *evidence.Store) (string, bool) {
	u, err := url.Parse(agentURL(s))
	if err == nil && u.Scheme == "https" {
		return "", false
	}
	return "the target is not HTTPS", true
}

// targetHosts are the hosts of the run's targets, lower case.
func targetHosts(t evidence.Target) map[string]bool {
	out := map[string]bool{}
	for _, u := range []string{t.MCP, t.A2A} {
		if h := hostOf(u); h != "" {
			out[h] = true
		}
	}
	return out
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

func judgeTLS01(s *evidence.Store, _ Options) Verdict {
	if why, skip := notHTTPS(s); skip {
		return Verdict{Outcome: Skip, Message: why}
	}
	t := newTally("TLS-01")
	for _, c := range s.Calls() {
		if c.Kind == evidence.KindTLSHandshake && !t.account(c) {
			continue
		}
		seen := false
		var fs []finding
		for _, x := range c.Exchanges {
			if x.TLSVersion == "" {
				continue
			}
			seen = true
			if !okTLS[x.TLSVersion] {
				fs = append(fs, finding{"", x.Method + " " + x.URL + " negotiated " + x.TLSVersion + ", below TLS 1.2"})
			}
		}
		if seen {
			t.judged(c, fs)
		}
	}
	return t.verdict("no TLS handshake was recorded")
}

func judgeTLS02(s *evidence.Store, _ Options) Verdict {
	if why, skip := notHTTPS(s); skip {
		return Verdict{Outcome: Skip, Message: why}
	}
	t := newTally("TLS-02")
	hosts := targetHosts(s.Target())
	for _, c := range s.Calls() {
		seen := false
		var fs []finding
		for _, x := range c.Exchanges {
			if x.TLSVersion == "" || x.Status == 0 || x.Method == "TLS" {
				continue
			}
			if c.Kind == evidence.KindHTTPGet && !hosts[hostOf(x.URL)] {
				continue // not the agent's endpoint
			}
			seen = true
			h := x.ResponseHeaders.Get("Strict-Transport-Security")
			m := hstsMaxAge.FindStringSubmatch(h)
			switch {
			case h == "":
				fs = append(fs, finding{"", x.URL + " answers without Strict-Transport-Security"})
			case m == nil:
				fs = append(fs, finding{"", x.URL + " sends Strict-Transport-Security without a max-age"})
			default:
				// delta-seconds has no bound (RFC 6797 §6.1.1): a value too
				// long for an int64 is far over a year.
				if n, err := strconv.ParseInt(m[1], 10, 64); err == nil && n < minHSTSMaxAge {
					fs = append(fs, finding{"", x.URL + " sends HSTS max-age " + m[1] + ", under a year"})
				}
			}
		}
		if seen {
			t.judged(c, fs)
		}
	}
	return t.verdict("no HTTPS response was recorded")
}
