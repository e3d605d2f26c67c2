// Package wire captures the exact bytes exchanged with a seller agent.
//
// Everything adcp-conform decides rests on the raw HTTP exchange, so the
// capture happens underneath every client, at the http.RoundTripper seam:
//
//	rec := &wire.Recorder{}
//	t := &wire.Transport{Base: guard.Transport(), Recorder: rec, BearerToken: token}
//	hc := fetch.Client(t, fetch.SameOriginRedirects) // probes/fetch: every connection checked
//	ctx, capt := wire.WithCapture(ctx, "get_products/basic")
//	// ... any call made with ctx over hc (go-sdk MCP client, plain JSON-RPC) ...
//	msg, ex, err := capt.Response(ctx) // exact JSON-RPC response bytes (redacted copy)
//	result, rpcErr, id, err := wire.SplitResponse(msg)
//
// The Transport tees each response body as the consumer reads it (SSE is parsed
// incrementally and never blocks the reader), bounds every read with Limits
// (a body over the limit is cut, flagged Truncated, and the reader gets a
// *LimitError), and redacts credentials before anything is stored: the
// consumer still receives the real bytes, only the stored Exchange is
// redacted. Whether a configured secret appeared in a response is recorded in
// Exchange.SecretEchoed before redaction. A credential obtained at run time
// (Transport.Token: an OAuth client's tokens, renewed mid-run) is redacted
// from the moment it exists: the run's redactors follow a SecretSet
// (Limits.LiveSecrets) that learns each one.
//
// The SSE parser (NewSSEReader) implements the WHATWG event-stream rules and is
// usable on its own, e.g. for A2A streaming.
package wire
