package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// rawIDBase starts the ids of the harness's own requests, far above the
// small ids the SDK gives its requests on the same session.
const rawIDBase = 1 << 32

// post sends one JSON-RPC request on the session, with the headers the SDK
// would send (the session id, the negotiated protocol version), through the
// session's capturing client, and reads the reply through the capture: the
// body is read in the background until its end, the reply with the
// request's id having been captured or not, or until ctx is done; then it
// is closed. It returns the transport error, or why no reply was captured.
func (s *Session) post(ctx context.Context, capture *wire.Capture, method string, params any) error {
	id := rawIDBase + s.nextID.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.Endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", s.protocolVersion())
	if sid := s.cs.ID(); sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(io.Discard, resp.Body) // through the capture's tee, bounded by its limits
	}()
	_, _, rerr := capture.ResponseFor(ctx, json.RawMessage(strconv.FormatInt(id, 10)))
	select {
	case <-read:
	case <-ctx.Done():
	}
	_ = resp.Body.Close()
	<-read
	return rerr
}

// protocolVersion is the version the session negotiated (ProtocolVersion
// when the seller's initialize result named none).
func (s *Session) protocolVersion() string {
	if r := s.cs.InitializeResult(); r != nil && r.ProtocolVersion != "" {
		return r.ProtocolVersion
	}
	return ProtocolVersion
}
