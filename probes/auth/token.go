package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/adcp-conform/adcp-conform/probes/fetch"
	"github.com/adcp-conform/adcp-conform/probes/wire"
)

// MaxResponseBytes bounds a token endpoint's reply: a JWT access token is a
// few KiB.
const MaxResponseBytes = 64 << 10

// maxLifetime bounds a token's expires_in (ten years): a larger value is
// no lifetime a server means.
const maxLifetime = 10 * 365 * 24 * time.Hour

// Error is a token request that brought no token: the endpoint's refusal
// (an RFC 6749 §5.2 error response), another reply it gave, or none. It is
// a failure of the run's configuration or of the network, never the
// seller's.
type Error struct {
	// URL is the token endpoint, its query values redacted.
	URL string
	// Status is the reply's HTTP status; 0 when none came.
	Status int
	// Code and Description are the RFC 6749 §5.2 error and
	// error_description (sanitized, secrets redacted); "" when the reply
	// was no such error.
	Code, Description string
	// Reason says what was wrong otherwise.
	Reason string
}

func (e *Error) Error() string {
	switch {
	case e.Code != "":
		desc := ""
		if e.Description != "" {
			desc = " (" + e.Description + ")"
		}
		return fmt.Sprintf("the OAuth token endpoint %s refused the client credentials grant: %s%s, HTTP %d", e.URL, e.Code, desc, e.Status)
	case e.Status != 0:
		return fmt.Sprintf("the OAuth token endpoint %s answered HTTP %d: %s", e.URL, e.Status, e.Reason)
	default:
		return fmt.Sprintf("the OAuth token endpoint %s gave no answer: %s", e.URL, e.Reason)
	}
}

// Refused reports whether the endpoint refused the request with an RFC
// 6749 §5.2 error: the same credentials get the same answer.
func (e *Error) Refused() bool { return e.Code != "" }

// request asks the token endpoint for a token (RFC 6749 §4.4.2) and reads
// the reply. The token and any refresh token are learnt as secrets before
// it returns.
func (s *Source) request(ctx context.Context) (token, error) {
	cfg := s.cfg
	fail := func(status int, reason string) (token, error) {
		return token{}, &Error{URL: fetch.RedactURL(cfg.TokenURL), Status: status, Reason: reason}
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if cfg.Scope != "" {
		form.Set("scope", cfg.Scope)
	}
	for _, r := range cfg.Resource {
		form.Add("resource", r)
	}
	if cfg.Audience != "" {
		form.Set("audience", cfg.Audience)
	}
	if cfg.Method == ClientSecretPost {
		form.Set("client_id", cfg.ClientID)
		form.Set("client_secret", cfg.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return fail(0, "not a valid request URL")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if cfg.Method == ClientSecretBasic {
		// RFC 6749 §2.3.1: each form-urlencoded, then HTTP Basic.
		req.SetBasicAuth(url.QueryEscape(cfg.ClientID), url.QueryEscape(cfg.ClientSecret))
	}
	sent := cfg.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		var blocked *fetch.BlockedError
		switch {
		case errors.As(err, &blocked):
			return fail(0, blocked.Error())
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return fail(0, fmt.Sprintf("no answer within %s", cfg.Timeout))
		}
		return fail(0, s.clean(err.Error(), 300))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fail(resp.StatusCode, fmt.Sprintf("the reply did not end within %s", cfg.Timeout))
	case err != nil:
		return fail(resp.StatusCode, "the reply could not be read: "+s.clean(err.Error(), 200))
	case len(body) > MaxResponseBytes:
		return fail(resp.StatusCode, fmt.Sprintf("the reply is larger than %d bytes", MaxResponseBytes))
	}
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			if e := s.refusal(resp, body); e != nil {
				return token{}, e
			}
		}
		reason := "no token and no RFC 6749 error"
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			reason = "a redirect, which is not followed (give the token endpoint's own URL)"
		}
		return fail(resp.StatusCode, reason)
	}
	tok, why := s.parse(resp, body, sent)
	if why != "" {
		return fail(resp.StatusCode, why)
	}
	return tok, nil
}

// parse reads a successful token response strictly (RFC 6749 §5.1): a
// JSON object whose access_token is a string usable as a bearer
// credential (RFC 6750 §2.1's b64token), whose token_type is Bearer
// (compared without case, RFC 6749 §5.1), and whose expires_in, when
// present, is a positive integer of seconds. why says what is wrong.
// The one leniency: expires_in as a JSON string of digits ("3600"), as
// Azure AD v1 and other older servers send it — the token endpoint is the
// run's infrastructure, not the seller under test, and refusing its token
// over a quoted number would end the run with nothing judged.
func (s *Source) parse(resp *http.Response, body []byte, sent time.Time) (tok token, why string) {
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return tok, fmt.Sprintf("the reply is %q, not application/json (RFC 6749 §5.1)", wire.Sanitize(resp.Header.Get("Content-Type"), 60))
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil || fields == nil || dec.More() {
		return tok, "the reply is not one JSON object"
	}
	access, ok := jsonString(fields["access_token"])
	// Learnt before any check: a reply refused below must not leak the
	// token it carried into an error or a report either.
	if ok {
		s.cfg.Secrets.Add(access)
	}
	if refresh, ok := jsonString(fields["refresh_token"]); ok {
		s.cfg.Secrets.Add(refresh)
	}
	switch {
	case !ok || access == "":
		return tok, "the reply has no access_token string"
	case !b64token(access):
		return tok, "the access_token is not usable as a bearer credential (RFC 6750 §2.1 b64token)"
	case len(access) < wire.MinSecretLen:
		return tok, fmt.Sprintf("the access_token is shorter than %d characters: it could not be kept out of the reports", wire.MinSecretLen)
	}
	switch typ, ok := jsonString(fields["token_type"]); {
	case !ok:
		return tok, "the reply has no token_type string"
	case !strings.EqualFold(typ, "Bearer"):
		return tok, fmt.Sprintf("the token_type is %q: the harness sends Bearer tokens only (RFC 6750)", wire.Sanitize(typ, 40))
	}
	tok.value = access
	if raw, present := fields["expires_in"]; present {
		digits := string(raw)
		if quoted, isString := jsonString(raw); isString && quoted != "" && strings.Trim(quoted, "0123456789") == "" {
			digits = quoted
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n <= 0 || n > int64(maxLifetime/time.Second) {
			return token{}, fmt.Sprintf("the expires_in %s is not a positive integer of seconds", wire.Sanitize(string(raw), 40))
		}
		tok.renewAt = renewAt(sent, time.Duration(n)*time.Second)
	}
	return tok, ""
}

// refusal reads an RFC 6749 §5.2 error response: a JSON object whose
// error is a code in the section's character set. nil when body is none.
func (s *Source) refusal(resp *http.Response, body []byte) *Error {
	var e struct {
		Error       json.RawMessage `json:"error"`
		Description json.RawMessage `json:"error_description"`
	}
	if json.Unmarshal(body, &e) != nil {
		return nil
	}
	code, ok := jsonString(e.Error)
	if !ok || code == "" || len(code) > 64 || !errorChars(code) {
		return nil
	}
	out := &Error{URL: fetch.RedactURL(s.cfg.TokenURL), Status: resp.StatusCode, Code: code}
	if desc, ok := jsonString(e.Description); ok {
		out.Description = s.clean(desc, 200)
	}
	return out
}

// clean makes a text the endpoint (or the network) wrote fit for an error
// message: the run's secrets redacted, control characters gone, bounded.
func (s *Source) clean(text string, max int) string {
	return wire.Sanitize(wire.NewLiveRedactor(nil, s.cfg.Secrets, nil).String(text), max)
}

// jsonString decodes raw when it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	var v string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}

// b64token reports whether s matches RFC 6750 §2.1's
// b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func b64token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for _, c := range []byte(body) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// errorChars reports whether s is in RFC 6749 §5.2's error character set:
// %x20-21 / %x23-5B / %x5D-7E.
func errorChars(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
