// Package webhook holds the harness's side of AdCP webhooks: the receiver
// it starts (receiver.go), the envelope checks (envelope.go), the RFC 9421
// webhook profile (rfc9421.go) and, in this file, the legacy HMAC-SHA256
// scheme (building/by-layer/L3/webhooks.mdx, "Signature algorithm (legacy)"):
//
//	X-ADCP-Signature: sha256=hex(HMAC-SHA256(secret, "{timestamp}.{rawBody}"))
//	X-ADCP-Timestamp: <unix seconds>
//
// checked against every vector of webhook-hmac-sha256.json.
package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The legacy scheme's constants.
const (
	// Window is how far the timestamp may be from the receiver's clock.
	Window = 300 * time.Second
	// MinSecretBytes is the shortest shared secret the scheme allows.
	MinSecretBytes = 32
	prefix         = "sha256="
)

// The verification failures, by class: a signature or timestamp that does
// not verify, and a body that verifies but is malformed (duplicate object
// keys: a verifier and a consumer could read it differently).
var (
	ErrSignature     = errors.New("webhook signature does not verify")
	ErrTimestamp     = errors.New("webhook timestamp is missing, not a number, or outside the 300 s window")
	ErrMalformedBody = errors.New("webhook body is malformed (duplicate object keys)")
	ErrWeakSecret    = errors.New("webhook secret is shorter than 32 bytes or has no entropy")
)

// Sign returns the X-ADCP-Signature value of body at timestamp ts.
func Sign(secret, body []byte, ts int64) string {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "%d.", ts)
	m.Write(body)
	return prefix + hex.EncodeToString(m.Sum(nil))
}

// CheckSecret refuses a secret the scheme forbids: under 32 bytes, or one
// byte repeated (no entropy).
func CheckSecret(secret string) error {
	if len(secret) < MinSecretBytes || strings.Count(secret, secret[:1]) == len(secret) {
		return ErrWeakSecret
	}
	return nil
}

// VerifyHMAC checks a legacy-signed delivery: the timestamp header (a
// number within Window of now), the signature header (sha256= and 64 hex
// digits, compared in constant time over "{timestamp}.{body}" as received),
// and then the body itself, which must not hold duplicate object keys.
func VerifyHMAC(secret, body []byte, signature, timestamp string, now time.Time) error {
	ts, err := strconv.ParseInt(strings.TrimSpace(timestamp), 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Window || d < -Window {
		return ErrTimestamp
	}
	got, ok := strings.CutPrefix(signature, prefix)
	if !ok || len(got) != sha256.Size*2 {
		return ErrSignature
	}
	want := Sign(secret, body, ts)[len(prefix):]
	if !hmac.Equal([]byte(got), []byte(want)) {
		return ErrSignature
	}
	if DuplicateKeys(body) {
		return ErrMalformedBody
	}
	return nil
}

// DuplicateKeys reports whether a JSON text holds an object with a key
// twice, at any depth. A body that is not JSON has none to report.
func DuplicateKeys(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		keys  map[string]bool
		isObj bool
		key   bool // the next string token is a key
	}
	var frames []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return false
		}
		var top *frame
		if n := len(frames); n > 0 {
			top = frames[n-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				if top != nil && top.isObj {
					top.key = true
				}
				frames = append(frames, &frame{keys: map[string]bool{}, isObj: true, key: true})
				continue
			case '[':
				if top != nil && top.isObj {
					top.key = true
				}
				frames = append(frames, &frame{})
				continue
			default:
				frames = frames[:len(frames)-1]
				continue
			}
		case string:
			if top != nil && top.isObj && top.key {
				if top.keys[t] {
					return true
				}
				top.keys[t] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.isObj {
			top.key = true
		}
	}
}
