package webhook

// The RFC 9421 webhook profile (building/by-layer/L1/security.mdx, "Webhook
// callbacks"; building/by-layer/L3/webhooks.mdx, "Signature verification"):
//
//	Signature-Input: sig1=("@method" "@target-uri" "@authority" "content-type" "content-digest");
//	                 created=…;expires=…;nonce="…";keyid="…";alg="ed25519";tag="adcp/webhook-signing/v1"
//	Signature: sig1=:<base64url, unpadded>:
//	Content-Digest: sha-256=:<base64>:
//
// verified with the webhook verifier checklist, each failure named by its
// webhook_signature_* code, and held to every vector of
// compliance/webhook-signing.

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/rawjson"
)

// Profile constants of the webhook signing profile.
const (
	// WebhookTag is the tag parameter every webhook signature carries.
	WebhookTag = "adcp/webhook-signing/v1"
	// MaxSignatureWindow bounds expires − created.
	MaxSignatureWindow = 300
	// MaxClockSkew is how far created may lie in the receiver's future.
	MaxClockSkew = 60
	// Label is the signature label a verifier processes.
	Label = "sig1"
)

// RequiredComponents are the components every webhook signature covers.
var RequiredComponents = []string{"@method", "@target-uri", "@authority", "content-type", "content-digest"}

// The webhook_signature_* error codes of the verifier checklist.
const (
	CodeHeaderMalformed       = "webhook_signature_header_malformed"
	CodeParamsIncomplete      = "webhook_signature_params_incomplete"
	CodeTagInvalid            = "webhook_signature_tag_invalid"
	CodeAlgNotAllowed         = "webhook_signature_alg_not_allowed"
	CodeWindowInvalid         = "webhook_signature_window_invalid"
	CodeComponentsIncomplete  = "webhook_signature_components_incomplete"
	CodeKeyUnknown            = "webhook_signature_key_unknown"
	CodeKeyPurposeInvalid     = "webhook_signature_key_purpose_invalid"
	CodeKeyRevoked            = "webhook_signature_key_revoked"
	CodeRevocationStale       = "webhook_signature_revocation_stale"
	CodeRateAbuse             = "webhook_signature_rate_abuse"
	CodeSignatureInvalid      = "webhook_signature_invalid"
	CodeDigestMismatch        = "webhook_signature_digest_mismatch"
	CodeReplayed              = "webhook_signature_replayed"
	CodeSignatureMissing      = "webhook_signature_missing"
	CodeKeysUnavailable       = "webhook_signature_keys_unavailable"
	maxSignatureInputBytes    = 8 << 10
	maxSignatureHeaderEntries = 16
)

// SignatureError is a rejected RFC 9421 webhook signature: the checklist's
// error code and what failed.
type SignatureError struct {
	Code   string
	Detail string
}

func (e *SignatureError) Error() string {
	if e.Detail == "" {
		return e.Code
	}
	return e.Code + ": " + e.Detail
}

func sigErr(code, format string, a ...any) error {
	return &SignatureError{Code: code, Detail: fmt.Sprintf(format, a...)}
}

// JWK is a public key of a signer's JWKS, with the AdCP purpose fields.
type JWK struct {
	Kid     string   `json:"kid"`
	Kty     string   `json:"kty"`
	Crv     string   `json:"crv"`
	Alg     string   `json:"alg,omitempty"`
	Use     string   `json:"use,omitempty"`
	KeyOps  []string `json:"key_ops,omitempty"`
	AdcpUse string   `json:"adcp_use,omitempty"`
	X       string   `json:"x"`
	Y       string   `json:"y,omitempty"`
}

// ParseJWKS reads a JWKS document ({"keys": […]}).
func ParseJWKS(b []byte) ([]JWK, error) {
	var doc struct {
		Keys []JWK `json:"keys"`
	}
	if err := rawjson.Decode(b, &doc); err != nil {
		return nil, err
	}
	if len(doc.Keys) == 0 {
		return nil, fmt.Errorf("the JWKS holds no keys")
	}
	return doc.Keys, nil
}

// NonceCache remembers the (keyid, nonce) pairs of verified signatures, so
// a replay is refused. It is safe for concurrent use and bounded.
type NonceCache struct {
	mu   sync.Mutex
	seen map[string]bool
}

const maxNonces = 10000

// seenBefore records (kid, nonce) and reports whether it was already there.
func (c *NonceCache) seenBefore(kid, nonce string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	k := kid + "\x00" + nonce
	if c.seen[k] {
		return true
	}
	if len(c.seen) < maxNonces {
		c.seen[k] = true
	}
	return false
}

// Preload adds a (keyid, nonce) pair as already seen.
func (c *NonceCache) Preload(kid, nonce string) { c.seenBefore(kid, nonce) }

// VerifyOptions are the verifier's state: the signer's keys, the clock,
// and the revocation and replay state.
type VerifyOptions struct {
	Keys []JWK
	Now  time.Time
	// Revoked are revoked key ids.
	Revoked map[string]bool
	// RevocationStale says the revocation list could not be refreshed in
	// time (the verifier then refuses to trust any key).
	RevocationStale bool
	// CapFull says the per-keyid replay cache of kid is full.
	CapFull func(kid string) bool
	// Nonces is the replay cache; nil skips the replay check.
	Nonces *NonceCache
}

// Request is a webhook as received: method, the URL the sender addressed,
// headers and the raw body bytes.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

type sigParams struct {
	components []string
	params     []sfParam
}

type sfParam struct {
	key   string
	value any // int64 or string (quoted) or token (tokenValue)
}

type tokenValue string

func (p sigParams) get(key string) (any, bool) {
	for _, x := range p.params {
		if x.key == key {
			return x.value, true
		}
	}
	return nil, false
}

func (p sigParams) str(key string) (string, bool) {
	v, ok := p.get(key)
	s, isStr := v.(string)
	return s, ok && isStr
}

func (p sigParams) num(key string) (int64, bool) {
	v, ok := p.get(key)
	n, isNum := v.(int64)
	return n, ok && isNum
}

// serialize renders the @signature-params value (RFC 9421 §2.3).
func (p sigParams) serialize() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, c := range p.components {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Quote(c))
	}
	b.WriteByte(')')
	for _, x := range p.params {
		b.WriteString(";" + x.key + "=")
		switch v := x.value.(type) {
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		case string:
			b.WriteString(strconv.Quote(v))
		case tokenValue:
			b.WriteString(string(v))
		}
	}
	return b.String()
}

// VerifyRFC9421 runs the webhook verifier checklist on r, short-circuiting
// on the first failure, and returns a *SignatureError naming its code, or
// nil when the signature labelled sig1 verifies.
func VerifyRFC9421(r Request, o VerifyOptions) error {
	// Step 1: the bound pair of headers, parseable, with a sig1 member.
	si, sg := r.Header.Values("Signature-Input"), r.Header.Values("Signature")
	if len(si) == 0 && len(sg) == 0 {
		return sigErr(CodeSignatureMissing, "no Signature-Input or Signature header")
	}
	if len(si) == 0 || len(sg) == 0 {
		return sigErr(CodeHeaderMalformed, "Signature-Input and Signature must come together")
	}
	inputs, err := parseSignatureInput(strings.Join(si, ", "))
	if err != nil {
		return sigErr(CodeHeaderMalformed, "Signature-Input: %v", err)
	}
	sigs, err := parseSignatureHeader(strings.Join(sg, ", "))
	if err != nil {
		return sigErr(CodeHeaderMalformed, "Signature: %v", err)
	}
	p, okIn := inputs[Label]
	sigB64, okSig := sigs[Label]
	if !okIn || !okSig {
		return sigErr(CodeHeaderMalformed, "no %q label in both Signature-Input and Signature", Label)
	}
	sig, err := base64URLStrict(sigB64)
	if err != nil {
		return sigErr(CodeHeaderMalformed, "Signature: %v", err)
	}
	// Step 2: every parameter.
	created, okC := p.num("created")
	expires, okE := p.num("expires")
	nonce, okN := p.str("nonce")
	kid, okK := p.str("keyid")
	alg, okA := p.str("alg")
	tag, okT := p.str("tag")
	for name, ok := range map[string]bool{"created": okC, "expires": okE, "nonce": okN, "keyid": okK, "alg": okA, "tag": okT} {
		if !ok {
			return sigErr(CodeParamsIncomplete, "parameter %s missing or of the wrong type", name)
		}
	}
	if n, err := base64URLStrict(nonce); err != nil || len(n) < 16 {
		return sigErr(CodeParamsIncomplete, "nonce must be unpadded base64url of at least 16 bytes")
	}
	// Step 3: the tag.
	if tag != WebhookTag {
		return sigErr(CodeTagInvalid, "tag %q, want %q", tag, WebhookTag)
	}
	// Step 4: the algorithm.
	if alg != "ed25519" && alg != "ecdsa-p256-sha256" {
		return sigErr(CodeAlgNotAllowed, "alg %q", alg)
	}
	// Step 5: the window.
	now := o.Now.Unix()
	switch {
	case expires <= created:
		return sigErr(CodeWindowInvalid, "expires %d is not after created %d", expires, created)
	case expires-created > MaxSignatureWindow:
		return sigErr(CodeWindowInvalid, "window of %d s exceeds %d s", expires-created, MaxSignatureWindow)
	case now > expires:
		return sigErr(CodeWindowInvalid, "expired %d s ago", now-expires)
	case created > now+MaxClockSkew:
		return sigErr(CodeWindowInvalid, "created %d s in the future", created-now)
	}
	// Step 6: the covered components.
	for _, c := range RequiredComponents {
		if !slices.Contains(p.components, c) {
			return sigErr(CodeComponentsIncomplete, "component %q not covered", c)
		}
	}
	// Step 7: the key.
	var key *JWK
	for i := range o.Keys {
		if o.Keys[i].Kid == kid {
			key = &o.Keys[i]
			break
		}
	}
	if key == nil {
		return sigErr(CodeKeyUnknown, "keyid %q is not in the signer's JWKS", kid)
	}
	// Step 8: its purpose.
	if key.AdcpUse != "request-signing" && key.AdcpUse != "webhook-signing" {
		return sigErr(CodeKeyPurposeInvalid, "adcp_use %q", key.AdcpUse)
	}
	if !slices.Contains(key.KeyOps, "verify") || (key.Use != "" && key.Use != "sig") {
		return sigErr(CodeKeyPurposeInvalid, "key_ops %v, use %q", key.KeyOps, key.Use)
	}
	// Step 9: revocation, and 9a the per-keyid cap.
	if o.RevocationStale {
		return sigErr(CodeRevocationStale, "the revocation list is stale")
	}
	if o.Revoked[kid] {
		return sigErr(CodeKeyRevoked, "keyid %q is revoked", kid)
	}
	if o.CapFull != nil && o.CapFull(kid) {
		return sigErr(CodeRateAbuse, "the replay cache of keyid %q is full", kid)
	}
	// Step 10: the signature over the base.
	base, err := signatureBase(r, p)
	if err != nil {
		return sigErr(CodeHeaderMalformed, "%v", err)
	}
	if err := verifyWith(key, alg, []byte(base), sig); err != nil {
		return err
	}
	// Step 11: the body against its digest.
	if err := checkDigest(r.Header.Get("Content-Digest"), r.Body); err != nil {
		return err
	}
	// Step 12: replay.
	if o.Nonces != nil && o.Nonces.seenBefore(kid, nonce) {
		return sigErr(CodeReplayed, "nonce %q of keyid %q seen before", nonce, kid)
	}
	return nil
}

func verifyWith(key *JWK, alg string, base, sig []byte) error {
	x, errX := base64URLLenient(key.X)
	switch alg {
	case "ed25519":
		if key.Kty != "OKP" || key.Crv != "Ed25519" || errX != nil || len(x) != ed25519.PublicKeySize {
			return sigErr(CodeAlgNotAllowed, "alg ed25519 with a %s %s key", key.Kty, key.Crv)
		}
		if !ed25519.Verify(ed25519.PublicKey(x), base, sig) {
			return sigErr(CodeSignatureInvalid, "the Ed25519 signature does not verify")
		}
	case "ecdsa-p256-sha256":
		y, errY := base64URLLenient(key.Y)
		if key.Kty != "EC" || key.Crv != "P-256" || errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
			return sigErr(CodeAlgNotAllowed, "alg ecdsa-p256-sha256 with a %s %s key", key.Kty, key.Crv)
		}
		pub := &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
		if len(sig) != 64 {
			return sigErr(CodeSignatureInvalid, "an ES256 signature is 64 bytes (r||s), not %d", len(sig))
		}
		h := sha256.Sum256(base)
		if !ecdsa.Verify(pub, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return sigErr(CodeSignatureInvalid, "the ES256 signature does not verify")
		}
	}
	return nil
}

// checkDigest compares a Content-Digest header's sha-256 member with the
// SHA-256 of body. The value is decoded in either base64 alphabet, padded
// or not: the published vectors pad it, the profile's prose does not.
func checkDigest(header string, body []byte) error {
	want := sha256.Sum256(body)
	for _, m := range splitTop(header, ',') {
		k, v, ok := strings.Cut(strings.TrimSpace(m), "=")
		if !ok || strings.TrimSpace(k) != "sha-256" {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) < 2 || v[0] != ':' || v[len(v)-1] != ':' {
			return sigErr(CodeDigestMismatch, "Content-Digest sha-256 is not a byte sequence")
		}
		got, err := base64Any(v[1 : len(v)-1])
		if err != nil || string(got) != string(want[:]) {
			return sigErr(CodeDigestMismatch, "Content-Digest does not match the body")
		}
		return nil
	}
	return sigErr(CodeDigestMismatch, "no sha-256 Content-Digest")
}

// ContentDigest returns the Content-Digest value of body in the webhook-v1
// encoding (unpadded base64url).
func ContentDigest(body []byte) string {
	h := sha256.Sum256(body)
	return "sha-256=:" + base64.RawURLEncoding.EncodeToString(h[:]) + ":"
}

// signatureBase builds the RFC 9421 signature base of r for the parsed
// signature parameters p.
func signatureBase(r Request, p sigParams) (string, error) {
	u, err := url.Parse(r.URL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("request URL %q: not absolute", r.URL)
	}
	var b strings.Builder
	for _, c := range p.components {
		var v string
		switch c {
		case "@method":
			v = strings.ToUpper(r.Method)
		case "@target-uri":
			v = targetURI(u)
		case "@authority":
			v = authority(u)
		case "@path":
			v = canonicalPath(u.EscapedPath())
		case "@query":
			v = "?" + u.RawQuery
		case "@scheme":
			v = strings.ToLower(u.Scheme)
		default:
			if strings.HasPrefix(c, "@") {
				return "", fmt.Errorf("unsupported derived component %q", c)
			}
			vals := r.Header.Values(c)
			if len(vals) == 0 {
				return "", fmt.Errorf("covered header %q is absent", c)
			}
			for i := range vals {
				vals[i] = strings.TrimSpace(vals[i])
			}
			v = strings.Join(vals, ", ")
		}
		fmt.Fprintf(&b, "%q: %s\n", c, v)
	}
	fmt.Fprintf(&b, "%q: %s", "@signature-params", p.serialize())
	return b.String(), nil
}

func authority(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		return host
	}
	return host + ":" + port
}

func targetURI(u *url.URL) string {
	s := strings.ToLower(u.Scheme) + "://" + authority(u) + canonicalPath(u.EscapedPath())
	if u.RawQuery != "" || u.ForceQuery {
		s += "?" + u.RawQuery
	}
	return s
}

// canonicalPath upper-cases percent-encodings and keeps every other byte.
func canonicalPath(p string) string {
	if p == "" {
		return "/"
	}
	b := []byte(p)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = upperHex(b[i+1]), upperHex(b[i+2])
		}
	}
	return string(b)
}

func upperHex(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// parseSignatureInput parses the Signature-Input dictionary: label = inner
// list of component names, with parameters.
func parseSignatureInput(h string) (map[string]sigParams, error) {
	if len(h) > maxSignatureInputBytes {
		return nil, fmt.Errorf("longer than %d bytes", maxSignatureInputBytes)
	}
	members := splitTop(h, ',')
	if len(members) > maxSignatureHeaderEntries {
		return nil, fmt.Errorf("more than %d members", maxSignatureHeaderEntries)
	}
	out := map[string]sigParams{}
	for _, m := range members {
		label, rest, ok := strings.Cut(strings.TrimSpace(m), "=")
		if !ok || !isKey(label) || !strings.HasPrefix(rest, "(") {
			return nil, fmt.Errorf("member %q is not label=(components);params", truncate(m, 40))
		}
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return nil, fmt.Errorf("unclosed inner list")
		}
		var p sigParams
		for _, item := range strings.Fields(rest[1:end]) {
			s, err := strconv.Unquote(item)
			if err != nil || !strings.HasPrefix(item, `"`) {
				return nil, fmt.Errorf("component %q is not a string", truncate(item, 40))
			}
			p.components = append(p.components, s)
		}
		params, err := parseParams(rest[end+1:])
		if err != nil {
			return nil, err
		}
		p.params = params
		out[label] = p
	}
	return out, nil
}

func parseParams(s string) ([]sfParam, error) {
	var out []sfParam
	for _, part := range splitTop(s, ';')[1:] {
		k, v, ok := strings.Cut(part, "=")
		if !ok || !isKey(k) {
			return nil, fmt.Errorf("parameter %q malformed", truncate(part, 40))
		}
		switch {
		case strings.HasPrefix(v, `"`):
			u, err := strconv.Unquote(v)
			if err != nil {
				return nil, fmt.Errorf("parameter %s: bad string", k)
			}
			out = append(out, sfParam{k, u})
		case v != "" && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')):
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("parameter %s: bad integer", k)
			}
			out = append(out, sfParam{k, n})
		case v != "":
			out = append(out, sfParam{k, tokenValue(v)})
		default:
			return nil, fmt.Errorf("parameter %s: empty", k)
		}
	}
	if s != "" && !strings.HasPrefix(s, ";") {
		return nil, fmt.Errorf("unexpected %q after the inner list", truncate(s, 40))
	}
	return out, nil
}

// parseSignatureHeader parses the Signature dictionary: label = :bytes:.
func parseSignatureHeader(h string) (map[string]string, error) {
	members := splitTop(h, ',')
	if len(members) > maxSignatureHeaderEntries {
		return nil, fmt.Errorf("more than %d members", maxSignatureHeaderEntries)
	}
	out := map[string]string{}
	for _, m := range members {
		label, v, ok := strings.Cut(strings.TrimSpace(m), "=")
		if !ok || !isKey(label) || len(v) < 2 || v[0] != ':' || v[len(v)-1] != ':' {
			return nil, fmt.Errorf("member %q is not label=:bytes:", truncate(m, 40))
		}
		out[label] = v[1 : len(v)-1]
	}
	return out, nil
}

// splitTop splits s at sep outside quoted strings and parentheses.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == '(':
			depth++
		case !quoted && c == ')':
			depth--
		case !quoted && depth == 0 && c == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func isKey(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] == '*') {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("_-.*", c)) {
			return false
		}
	}
	return true
}

// base64URLStrict decodes unpadded base64url and refuses the standard
// alphabet's characters and padding.
func base64URLStrict(s string) ([]byte, error) {
	if strings.ContainsAny(s, "+/=") {
		return nil, fmt.Errorf("not unpadded base64url (found a standard-alphabet or padding character)")
	}
	return base64.RawURLEncoding.DecodeString(s)
}

func base64URLLenient(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// base64Any decodes either alphabet, padded or not.
func base64Any(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "+/") {
		return base64.RawStdEncoding.DecodeString(s)
	}
	return base64.RawURLEncoding.DecodeString(s)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
