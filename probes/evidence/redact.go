package evidence

import (
	"encoding/json"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// redact returns c with every secret the redactor knows cut from each of
// its texts, whatever its recorder did already: the probe phase, the
// storyboard engine (its own sessions' refusals, the arguments it builds
// from values it captured, the documents it fetches), the webhook
// receiver. A raw JSON member stays valid JSON (wire.Redactor.Bytes).
func redact(r *wire.Redactor, c Call) Call {
	if r == nil {
		return c
	}
	c.ProbeID, c.Tool, c.Method, c.URL, c.Credential, c.Agent = r.String(c.ProbeID), r.String(c.Tool), r.String(c.Method), r.String(c.URL), r.String(c.Credential), r.String(c.Agent)
	c.Transport, c.Kind = Transport(r.String(string(c.Transport))), Kind(r.String(string(c.Kind)))
	if len(c.Purposes) > 0 {
		ps := make([]Purpose, len(c.Purposes))
		for i, p := range c.Purposes {
			ps[i] = Purpose(r.String(string(p)))
		}
		c.Purposes = ps
	}
	c.HarnessError, c.Blocked, c.Refused, c.NotRun = r.String(c.HarnessError), r.String(c.Blocked), r.String(c.Refused), r.String(c.NotRun)
	for _, m := range rawMembers(&c) {
		*m.v = json.RawMessage(r.Bytes(*m.v))
	}
	if len(c.Exchanges) > 0 {
		xs := make([]wire.Exchange, len(c.Exchanges))
		for i, x := range c.Exchanges {
			xs[i] = r.Exchange(x)
		}
		c.Exchanges = xs
	}
	return c
}
