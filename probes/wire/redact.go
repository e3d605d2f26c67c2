package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Redacted replaces every redacted value.
const Redacted = "[redacted]"

var redacted = []byte(Redacted)

// MinimumKeyPattern is the runner output contract's minimum payload_redaction
// pattern (universal/runner-output-contract.yaml); matching is
// case-insensitive. SensitiveKey extends it, never narrows it.
const MinimumKeyPattern = `^(authorization|credentials?|token|api[_-]?key|password|secret|client[_-]secret|refresh[_-]token|access[_-]token|bearer|session[_-]token|offering[_-]token|cookie|set[_-]cookie)$`

var (
	minimumKey  = regexp.MustCompile(`(?i)` + MinimumKeyPattern)
	extendedKey = regexp.MustCompile(`(?i)^(x[_-]?api[_-]?key|proxy[_-]authorization|private[_-]?key|id[_-]token|auth[_-]?token|api[_-]?secret|client[_-]?secret|passwd|passphrase|client[_-]assertion)$`)
)

// sensitiveNames is MinimumKeyPattern and extendedKey spelled out, with "-"
// written as "_", for the ASCII fast path.
var sensitiveNames = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`authorization credential credentials token api_key apikey password secret
		client_secret refresh_token access_token bearer session_token offering_token cookie set_cookie
		xapikey x_apikey xapi_key x_api_key proxy_authorization private_key privatekey id_token auth_token
		authtoken api_secret apisecret clientsecret passwd passphrase client_assertion`) {
		sensitiveNames[n] = true
	}
}

// SensitiveKey reports whether a JSON key's value is redacted: the contract's
// minimum pattern (MinimumKeyPattern, case-insensitive) plus a few common
// credential names.
func SensitiveKey(name string) bool {
	if len(name) > 64 {
		return false // longer than any matching name
	}
	var buf [64]byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= utf8RuneSelf:
			// Unicode case folding (e.g. U+212A KELVIN SIGN): the regexps.
			return minimumKey.MatchString(name) || extendedKey.MatchString(name)
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == '-':
			c = '_'
		}
		buf[i] = c
	}
	return sensitiveNames[string(buf[:len(name)])]
}

const utf8RuneSelf = 0x80

// ResponseHeaderAllowlist is the runner output contract's response_headers
// allowlist (lower case). Reports drop every other response header.
var ResponseHeaderAllowlist = []string{
	"content-type", "content-length", "content-encoding", "www-authenticate",
	"location", "retry-after", "x-request-id", "x-correlation-id",
}

var credentialFragments = []string{
	"authorization", "token", "secret", "password", "passwd", "credential",
	"api-key", "apikey", "api_key", "cookie", "private-key", "session-key", "x-auth",
}

// SensitiveHeader reports whether a header's values are redacted when stored:
// Authorization, Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key, any name
// matching SensitiveKey (with "-" or "_"), and names that look like a
// credential. WWW-Authenticate and Proxy-Authenticate (challenges, needed by
// auth rules) and Mcp-Session-Id (needed by session rules) are kept.
func SensitiveHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "www-authenticate", "proxy-authenticate", "authentication-info", "proxy-authentication-info":
		return false
	}
	if SensitiveKey(n) || SensitiveKey(strings.ReplaceAll(n, "-", "_")) {
		return true
	}
	for _, f := range credentialFragments {
		if strings.Contains(n, f) {
			return true
		}
	}
	return false
}

// ReportResponseHeaders returns the headers a report may show for a response:
// only the allowlisted names (ResponseHeaderAllowlist); the rest are dropped.
func ReportResponseHeaders(h http.Header) http.Header {
	out := http.Header{}
	for _, name := range ResponseHeaderAllowlist {
		if v := h.Values(name); len(v) > 0 {
			out[http.CanonicalHeaderKey(name)] = append([]string(nil), v...)
		}
	}
	return out
}

// ReportRequestHeaders returns the headers a report may show for a request,
// per the contract's request_headers rule: credential headers with their
// values "[redacted]", other headers through the response allowlist.
func ReportRequestHeaders(h http.Header) http.Header {
	out := ReportResponseHeaders(h)
	for name, v := range h {
		if SensitiveHeader(name) {
			out[name] = redactedValues(len(v))
		}
	}
	return out
}

func redactedValues(n int) []string {
	v := make([]string, n)
	for i := range v {
		v[i] = Redacted
	}
	return v
}

// RedactJSON rewrites data with the value of every key matching SensitiveKey,
// at any depth, replaced by the string "[redacted]". Bytes, key order and
// whitespace are otherwise unchanged, so the output is valid JSON whenever the
// input is; invalid or truncated input is redacted on a best-effort basis.
func RedactJSON(data []byte) []byte {
	out, _ := (&Redactor{}).Body(data, false)
	return out
}

// RedactHeader returns a copy of h with the values of SensitiveHeader names
// replaced by "[redacted]".
func RedactHeader(h http.Header) http.Header {
	out, _ := (&Redactor{}).Header(h)
	return out
}

// Redactor removes credentials from stored evidence: sensitive JSON keys and
// headers, and configured secret values wherever their bytes appear.
//
// A Redactor following a SecretSet (NewLiveRedactor) also removes every
// secret the set learns, from the moment it learns it.
type Redactor struct {
	fixed *formSet
	extra func(string) bool
	live  *SecretSet
	// merged caches fixed plus the live set's secrets, for one state of
	// the set.
	merged atomic.Pointer[mergedForms]
}

// formSet is what a Redactor looks for: the secrets, their byte forms
// (raw, JSON-escaped, URL-escaped) and what a decoded text must not hold.
type formSet struct {
	secrets []string
	forms   [][]byte
	// rare is the index of each form's rarest byte (see indexFoldAt).
	rare    []int
	needles needles
}

type mergedForms struct {
	of  *secretSnapshot
	set *formSet
}

// NewRedactor returns a Redactor for the given secret values (shorter than
// MinSecretLen are ignored) and an optional extra key matcher that extends
// SensitiveKey.
func NewRedactor(secrets []string, extraKey func(string) bool) *Redactor {
	return &Redactor{extra: extraKey, fixed: newFormSet(secrets)}
}

// NewLiveRedactor is NewRedactor that also redacts every secret live holds
// or learns later (nil: none).
func NewLiveRedactor(secrets []string, live *SecretSet, extraKey func(string) bool) *Redactor {
	r := NewRedactor(secrets, extraKey)
	r.live = live
	return r
}

// newFormSet builds the forms and needles of secrets (shorter than
// MinSecretLen ignored).
func newFormSet(secrets []string) *formSet {
	fs := &formSet{}
	seen := map[string]bool{}
	add := func(s string) {
		if len(s) >= MinSecretLen && !seen[s] {
			seen[s] = true
			fs.forms = append(fs.forms, []byte(s))
			fs.rare = append(fs.rare, rarest([]byte(s)))
		}
	}
	seenNeedle := map[string]bool{}
	var list [][]byte
	for _, s := range secrets {
		if len(s) < MinSecretLen || slices.Contains(fs.secrets, s) {
			continue
		}
		fs.secrets = append(fs.secrets, s)
		add(s)
		add(jsonEscape(s))
		add(url.QueryEscape(s))
		for _, n := range []string{s, strings.ReplaceAll(s, " ", "+")} {
			if !seenNeedle[n] {
				seenNeedle[n] = true
				list = append(list, []byte(n))
			}
		}
	}
	fs.needles = newNeedles(list)
	return fs
}

// emptyForms is the form set of a Redactor made without NewRedactor.
var emptyForms = newFormSet(nil)

// set returns what to look for now: the fixed secrets and every secret the
// live set has learnt so far.
func (r *Redactor) set() *formSet {
	fixed := r.fixed
	if fixed == nil {
		fixed = emptyForms
	}
	if r.live == nil {
		return fixed
	}
	snap := r.live.snap.Load()
	if snap == nil {
		return fixed
	}
	if m := r.merged.Load(); m != nil && m.of == snap {
		return m.set
	}
	m := &mergedForms{of: snap, set: newFormSet(append(slices.Clip(fixed.secrets), snap.list...))}
	r.merged.Store(m)
	return m.set
}

// SecretSet holds the secrets a run learns while it goes — the access
// tokens an OAuth client obtains, each refresh's too — for the redactors
// that follow it (NewLiveRedactor, Limits.LiveSecrets). It only grows. A
// nil *SecretSet holds nothing; the zero value is ready to use and safe
// for concurrent use.
type SecretSet struct {
	mu   sync.Mutex
	snap atomic.Pointer[secretSnapshot]
}

type secretSnapshot struct{ list []string }

// Add learns secrets (shorter than MinSecretLen are ignored: they cannot
// be redacted without shredding unrelated evidence).
func (s *SecretSet) Add(secrets ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.snap.Load()
	var list []string
	if old != nil {
		list = old.list
	}
	grown := slices.Clip(list)
	for _, v := range secrets {
		if len(v) >= MinSecretLen && !slices.Contains(grown, v) {
			grown = append(grown, v)
		}
	}
	if len(grown) != len(list) {
		s.snap.Store(&secretSnapshot{list: grown})
	}
}

// List returns the secrets learnt so far.
func (s *SecretSet) List() []string {
	if s == nil {
		return nil
	}
	if snap := s.snap.Load(); snap != nil {
		return slices.Clone(snap.list)
	}
	return nil
}

func jsonEscape(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(b.String(), `"`), "\n"), `"`)
}

func (r *Redactor) sensitive(key string) bool {
	return SensitiveKey(key) || (r.extra != nil && r.extra(key))
}

// Text replaces every secret form in b, in any ASCII letter case (a seller
// may echo a credential upper-cased), and every run of b that a JSON, HTML
// or URL decoder, or several in turn, turns into a secret (see
// escapedSpans); a truncated b also loses a trailing prefix (4 bytes or
// more) of a secret. It returns how many secrets it found. The runs cut
// are whole escapes, so a JSON string stays one.
func (r *Redactor) Text(b []byte, truncated bool) ([]byte, int) {
	return r.text(b, truncated, nil)
}

// text is Text, remembering in known (nil: nowhere) the parts of b that
// hold no secret in any reading.
func (r *Redactor) text(b []byte, truncated bool, known *cleanParts) ([]byte, int) {
	if r == nil {
		return b, 0
	}
	hits := 0
	fs := r.set()
	for i, f := range fs.forms {
		var n int
		b, n = replaceFold(b, f, fs.rare[i], redacted)
		hits += n
	}
	if truncated {
		b = r.cutSecretPrefix(b)
	}
	// Cutting what one reading holds may leave another reading's secret
	// whole (two readings may take it from different bytes): again until
	// none is left.
	for range MaxEscapeDepth {
		if !hasEscapes(b) {
			break
		}
		var n int
		b, n = cutSpans(b, escapedSpans(b, &r.set().needles, truncated, known))
		if n == 0 {
			break
		}
		hits += n
	}
	return b, hits
}

func (r *Redactor) cutSecretPrefix(b []byte) []byte {
	for _, f := range r.set().forms {
		for k := len(f) - 1; k >= 4; k-- {
			if hasSuffixFold(b, f[:k]) {
				b = append(b[:len(b)-k:len(b)-k], Redacted...)
				break
			}
		}
	}
	return b
}

// Header returns a redacted copy of h and how many secret values it found in
// it (credential headers are not counted: the caller sent them). A secret
// in a header's name is redacted too: a seller may echo anything anywhere.
func (r *Redactor) Header(h http.Header) (http.Header, int) {
	out := make(http.Header, len(h))
	hits := 0
	for name, vals := range h {
		// The name first: a credential-like name ("X-Echo-<token>") is
		// kept with its values redacted, so its own secrets must go too.
		key, n := r.foldName(name)
		hits += n
		if SensitiveHeader(name) || r.sensitive(name) {
			out[key] = append(out[key], redactedValues(len(vals))...)
			continue
		}
		for _, v := range vals {
			b, n := r.Text([]byte(v), false)
			hits += n
			out[key] = append(out[key], string(b))
		}
	}
	return out, hits
}

// foldName redacts the secrets in a header name, matching without regard
// to ASCII case: Go canonicalizes names ("x-tok-…" arrives as "X-Tok-…").
func (r *Redactor) foldName(name string) (string, int) {
	b, hits := r.Text([]byte(name), false)
	if hits == 0 {
		return name, 0
	}
	return string(b), hits
}

// String returns s with every secret form replaced: for the texts a run
// writes that are not bodies (harness errors, skip reasons), which may
// quote what a seller sent.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.set().forms) == 0 || s == "" {
		return s
	}
	if !r.mayHold(s) {
		return s // no copy of an event's data megabytes long
	}
	b, n := r.Text([]byte(s), false)
	if n == 0 {
		return s
	}
	return string(b)
}

// hasPrefixFold reports whether s starts with f under ASCII case folding.
func hasPrefixFold(s string, f []byte) bool {
	if len(s) < len(f) {
		return false
	}
	for i, c := range f {
		if s[i] != c && lowerASCII(s[i]) != lowerASCII(c) {
			return false
		}
	}
	return true
}

// mayHold reports whether s holds an escape or a secret form in any ASCII
// letter case: whether Text could cut anything from it.
func (r *Redactor) mayHold(s string) bool {
	if strings.ContainsAny(s, `\&%`) {
		return true
	}
	for _, f := range r.set().forms {
		for _, c := range []byte{lowerASCII(f[0]), upperASCII(f[0])} {
			for i := 0; i+len(f) <= len(s); i++ {
				j := strings.IndexByte(s[i:len(s)-len(f)+1], c)
				if j < 0 {
					break
				}
				i += j
				if hasPrefixFold(s[i:], f) {
					return true
				}
			}
		}
	}
	return false
}

// Secrets are the values a run must never write anywhere: the bearer token
// and the values of the user's credential headers (SensitiveHeader:
// Authorization, X-Api-Key, anything named like a token, key or secret),
// with a "Bearer " prefix taken off too.
func Secrets(bearerToken string, header http.Header) []string {
	var out []string
	if bearerToken != "" {
		out = append(out, bearerToken)
	}
	for name, vals := range header {
		if !SensitiveHeader(name) {
			continue
		}
		for _, v := range vals {
			out = append(out, v, strings.TrimSpace(strings.TrimPrefix(v, "Bearer ")))
		}
	}
	return out
}

// URL returns u as a string with userinfo, sensitive query parameters and
// secret values redacted.
func (r *Redactor) URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.User != nil {
		c.User = url.User(Redacted)
	}
	if c.RawQuery != "" {
		q, err := url.ParseQuery(c.RawQuery)
		changed := false
		if err == nil {
			for k := range q {
				if r.sensitive(k) {
					q[k] = redactedValues(len(q[k]))
					changed = true
				}
			}
			if changed {
				c.RawQuery = q.Encode()
			}
		}
	}
	s, _ := r.Text([]byte(c.String()), false)
	return string(s)
}

// Body redacts a request or response body (JSON, SSE, or anything else):
// values of sensitive keys become "[redacted]" keeping structure, key order
// and whitespace; configured secrets are replaced wherever they appear, also
// JSON-escaped inside strings. It returns the number of secret occurrences
// found before redaction (values of sensitive keys included).
func (r *Redactor) Body(in []byte, truncated bool) ([]byte, int) {
	out, hits := r.redactTokens(in)
	out, n := r.Text(out, truncated)
	return out, hits + n
}

type frame struct {
	obj       bool
	expectKey bool
}

// redactTokens walks in as a (possibly invalid or cut) JSON token stream.
// Most replies hold nothing to redact: it returns in itself then, and
// copies only from the first change on.
func (r *Redactor) redactTokens(in []byte) ([]byte, int) {
	w := spanWriter{in: in}
	// Without a secret form in the input and without escapes that could
	// spell one, no token holds a secret: only the keys need a look.
	fs := r.set()
	secrets := len(fs.forms) > 0 && hasEscapes(in)
	for i, f := range fs.forms {
		secrets = secrets || indexFoldAt(in, f, fs.rare[i]) >= 0
	}
	var stack []frame
	hits := 0
	top := func() *frame {
		if len(stack) == 0 {
			return nil
		}
		return &stack[len(stack)-1]
	}
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '{' || c == '[':
			stack = append(stack, frame{obj: c == '{', expectKey: c == '{'})
			i++
		case c == '}' || c == ']':
			if f := top(); f != nil && f.obj == (c == '}') {
				stack = stack[:len(stack)-1]
			}
			i++
		case c == ',':
			if f := top(); f != nil && f.obj {
				f.expectKey = true
			}
			i++
		case c == '"':
			end := scanString(in, i)
			tok := in[i:end]
			f := top()
			isKey := f != nil && f.obj && f.expectKey
			w.keep(i)
			if secrets {
				if repl, n := r.stringSecrets(tok); n > 0 {
					hits += n
					w.replace(end, repl)
				}
			}
			i = end
			if !isKey {
				continue
			}
			f.expectKey = false
			key, ok := decodeString(tok)
			if !ok || !r.sensitive(key) {
				continue
			}
			j := skipWS(in, i)
			if j >= len(in) || in[j] != ':' {
				continue
			}
			k := skipWS(in, j+1)
			end = skipValue(in, k)
			if end == k {
				continue
			}
			w.keep(k)
			w.replace(end, []byte(`"`+Redacted+`"`))
			if secrets {
				hits += r.count(in[k:end])
			}
			i = end
		case isWS(c) || c == ':':
			i++
		default:
			end := scanLiteral(in, i)
			tok := in[i:end]
			if !secrets {
				i = end
				continue
			}
			switch n := r.count(tok); {
			case n == 0:
			case json.Valid(tok):
				// A JSON scalar (a number): keep the document valid.
				hits += n
				w.keep(i)
				w.replace(end, []byte(`"`+Redacted+`"`))
			default:
				b, n := r.Text(append([]byte(nil), tok...), false)
				hits += n
				w.keep(i)
				w.replace(end, b)
			}
			i = end
		}
	}
	return w.done(), hits
}

// spanWriter rewrites in span by span: what it keeps is not copied until
// a replacement comes, and with none done returns in itself.
type spanWriter struct {
	in, out []byte
	pos     int // in[:pos] is settled
	dirty   bool
}

// keep settles in[pos:to] unchanged.
func (w *spanWriter) keep(to int) {
	if w.dirty {
		w.out = append(w.out, w.in[w.pos:to]...)
	}
	w.pos = to
}

// replace settles in[pos:to] as with.
func (w *spanWriter) replace(to int, with []byte) {
	if !w.dirty {
		w.dirty = true
		w.out = make([]byte, 0, len(w.in)+16)
		w.out = append(w.out, w.in[:w.pos]...)
	}
	w.out = append(w.out, with...)
	w.pos = to
}

func (w *spanWriter) done() []byte {
	if !w.dirty {
		return w.in
	}
	return append(w.out, w.in[w.pos:]...)
}

// stringSecrets returns a string token with the secrets inside it
// replaced, and how many there were (0: nothing to replace).
func (r *Redactor) stringSecrets(tok []byte) ([]byte, int) {
	if len(r.set().forms) == 0 {
		return nil, 0
	}
	s, ok := decodeString(tok)
	if !ok || bytes.IndexByte(tok, '\\') < 0 {
		// No JSON escape (or no whole string): the bytes are the text.
		b, n := r.Text(tok, false)
		if n == 0 {
			return nil, 0
		}
		return b, n
	}
	b, n := r.Text([]byte(s), false)
	if n == 0 {
		return nil, 0
	}
	return []byte(`"` + jsonEscape(string(b)) + `"`), n
}

func (r *Redactor) count(b []byte) int {
	n := 0
	fs := r.set()
	for i, f := range fs.forms {
		n += countFold(b, f, fs.rare[i])
	}
	if n == 0 && len(r.set().forms) > 0 && hasEscapes(b) {
		// Escaped forms (inside strings of a skipped value, say).
		n = len(escapedSpans(b, &r.set().needles, false, nil))
	}
	return n
}

// decodeString decodes a complete JSON string token.
func decodeString(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[len(tok)-1] != '"' {
		return "", false
	}
	if bytes.IndexByte(tok, '\\') < 0 {
		return string(tok[1 : len(tok)-1]), true
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return "", false
	}
	return s, true
}

// scanString returns the index after the string token starting at in[i]
// (a quote), or len(in) when it is not terminated.
func scanString(in []byte, i int) int {
	for j := i + 1; j < len(in); j++ {
		switch in[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(in)
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(in []byte, i int) int {
	for i < len(in) && isWS(in[i]) {
		i++
	}
	return i
}

func scanLiteral(in []byte, i int) int {
	j := i
	for j < len(in) {
		c := in[j]
		if isWS(c) || c == ',' || c == ':' || c == '{' || c == '}' || c == '[' || c == ']' || c == '"' {
			break
		}
		j++
	}
	if j == i {
		j++
	}
	return j
}

// skipValue returns the end of the value starting at in[i], tolerating a cut.
func skipValue(in []byte, i int) int {
	if i >= len(in) {
		return i
	}
	switch in[i] {
	case '"':
		return scanString(in, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(in); j++ {
			switch in[j] {
			case '"':
				j = scanString(in, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(in)
	case '}', ']', ',', ':':
		return i
	default:
		return scanLiteral(in, i)
	}
}

// Exchange returns a copy of x with every secret cut from each of its
// texts (the URL, headers, bodies, events, the error): what a recorder
// stores, whatever redaction its transport applied already.
func (r *Redactor) Exchange(x Exchange) Exchange {
	x.ProbeID, x.Method, x.URL, x.Proto = r.String(x.ProbeID), r.String(x.Method), r.String(x.URL), r.String(x.Proto)
	x.ContentEncoding, x.Error, x.TLSVersion, x.TLSCipher = r.String(x.ContentEncoding), r.String(x.Error), r.String(x.TLSVersion), r.String(x.TLSCipher)
	x.RequestHeaders, x.ResponseHeaders = r.headers(x.RequestHeaders), r.headers(x.ResponseHeaders)
	x.RequestBody, x.ResponseBody = r.Bytes(x.RequestBody), r.Bytes(x.ResponseBody)
	if len(x.Events) > 0 {
		evs := make([]Event, len(x.Events))
		for i, e := range x.Events {
			e.Type, e.Data, e.ID = r.String(e.Type), r.String(e.Data), r.String(e.ID)
			e.Raw = r.Bytes(e.Raw)
			evs[i] = e
		}
		x.Events = evs
	}
	if d := x.Dropped; d != nil {
		c := *d
		c.BodySHA256 = r.String(c.BodySHA256)
		x.Dropped = &c
	}
	return x
}

// headers is Header, with absent headers left absent.
func (r *Redactor) headers(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out, _ := r.Header(h)
	return out
}

// Bytes returns b with every secret cut (see Text): b itself when it holds
// none. Valid JSON stays valid.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || len(r.set().forms) == 0 || len(b) == 0 {
		return b
	}
	out, n := r.Text(b, false)
	if n == 0 {
		return b
	}
	return out
}

// Writer returns a writer that passes to w what it is given with every
// secret cut (see Text), streaming: it holds back only the bytes since the
// last one that no run spelling a secret, in any reading, may hold (a
// space, a brace, a comma…; see needles), so a report megabytes long is
// never held whole. Close writes what it holds back; it does not close w.
// With no secret, it is w itself (Close does nothing).
func (r *Redactor) Writer(w io.Writer) io.WriteCloser {
	if r == nil || len(r.set().forms) == 0 {
		return nopCloser{w}
	}
	return &redactingWriter{r: r, w: w}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type redactingWriter struct {
	r   *Redactor
	w   io.Writer
	buf []byte
	// known are the parts found clean in what was written before.
	known cleanParts
}

func (rw *redactingWriter) Write(p []byte) (int, error) {
	held := len(rw.buf) // no byte held back ends a run: look in p only
	rw.buf = append(rw.buf, p...)
	cut := len(rw.buf) - 1
	class := &rw.r.set().needles.class
	for cut >= held && class[rw.buf[cut]] != 0 {
		cut--
	}
	if cut < held {
		return len(p), nil
	}
	out, _ := rw.r.text(rw.buf[:cut+1], false, &rw.known)
	if _, err := rw.w.Write(out); err != nil {
		return len(p), err
	}
	rw.buf = append(rw.buf[:0], rw.buf[cut+1:]...)
	return len(p), nil
}

func (rw *redactingWriter) Close() error {
	out, _ := rw.r.text(rw.buf, false, &rw.known)
	rw.buf = nil
	_, err := rw.w.Write(out)
	return err
}
