package diagnose

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"
)

// Claims are what an access token that is a JWT (RFC 9068, RFC 7519) says
// of itself, read WITHOUT verifying its signature: the harness has no key
// to verify it with and does not need one — the claims only explain what
// the seller, which does verify, decided. A claim the token does not carry
// (or carries in another type) is left zero, with its Has… false.
type Claims struct {
	Alg string `json:"alg,omitempty"`
	Kid string `json:"kid,omitempty"`
	Typ string `json:"typ,omitempty"`

	Iss    string   `json:"iss,omitempty"`
	HasIss bool     `json:"-"`
	Aud    []string `json:"aud,omitempty"`
	HasAud bool     `json:"-"`
	Sub    string   `json:"sub,omitempty"`
	// Exp, Nbf and Iat are NumericDate claims (RFC 7519 §2); nil when
	// absent.
	Exp *time.Time `json:"exp,omitempty"`
	Nbf *time.Time `json:"nbf,omitempty"`
	Iat *time.Time `json:"iat,omitempty"`
	// Scopes are the scope claim's space-separated values (RFC 9068 §2.2.3,
	// RFC 8693 §4.2), or an scp claim's (a list or a string, as some
	// servers write it).
	Scopes   []string `json:"scopes,omitempty"`
	HasScope bool     `json:"-"`
}

// maxTokenLen bounds the token decoded (a JWT access token is a few KiB).
const maxTokenLen = 16 << 10

// DecodeJWT reads a compact JWS's header and claims without verifying it.
// The error says why tok is no readable JWT: an opaque token (any other
// shape), an encrypted one (five parts), or parts that do not decode.
func DecodeJWT(tok string) (*Claims, error) {
	if len(tok) > maxTokenLen {
		return nil, errors.New("longer than 16 KiB")
	}
	parts := strings.Split(tok, ".")
	switch len(parts) {
	case 3:
	case 5:
		return nil, errors.New("an encrypted JWT (JWE): its claims are for the seller only")
	default:
		return nil, errors.New("opaque (not a JWT)")
	}
	var head map[string]json.RawMessage
	if err := decodePart(parts[0], &head); err != nil {
		return nil, errors.New("opaque (its first part is no JWT header)")
	}
	var body map[string]json.RawMessage
	if err := decodePart(parts[1], &body); err != nil {
		return nil, errors.New("a JWT whose claims are not a JSON object")
	}
	c := &Claims{}
	str(head["alg"], &c.Alg)
	str(head["kid"], &c.Kid)
	str(head["typ"], &c.Typ)
	c.HasIss = str(body["iss"], &c.Iss)
	str(body["sub"], &c.Sub)
	var one string
	var many, scp []string
	switch {
	case str(body["aud"], &one):
		c.Aud, c.HasAud = []string{one}, true
	case json.Unmarshal(body["aud"], &many) == nil && many != nil:
		c.Aud, c.HasAud = many, true
	}
	c.Exp, c.Nbf, c.Iat = date(body["exp"]), date(body["nbf"]), date(body["iat"])
	switch {
	case str(body["scope"], &one):
		c.Scopes, c.HasScope = strings.Fields(one), true
	case str(body["scp"], &one):
		c.Scopes, c.HasScope = strings.Fields(one), true
	case json.Unmarshal(body["scp"], &scp) == nil && scp != nil:
		c.Scopes, c.HasScope = scp, true
	}
	return c, nil
}

// decodePart decodes one base64url part (padding tolerated) as a JSON
// object into v.
func decodePart(p string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(p, "="))
	if err != nil {
		return err
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return errors.New("not an object")
	}
	return json.Unmarshal(b, v)
}

// str decodes raw into *s when it is a JSON string.
func str(raw json.RawMessage, s *string) bool {
	if len(raw) == 0 || raw[0] != '"' {
		return false
	}
	return json.Unmarshal(raw, s) == nil
}

// date reads a NumericDate: seconds since the epoch, a JSON number.
func date(raw json.RawMessage) *time.Time {
	var f float64
	if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &f) != nil || math.IsNaN(f) || math.Abs(f) > 1e11 {
		return nil
	}
	sec, frac := math.Modf(f)
	t := time.Unix(int64(sec), int64(frac*1e9)).UTC()
	return &t
}
