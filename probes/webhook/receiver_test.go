package webhook

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, url string, body []byte, h http.Header) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func TestReceiverAnswers503OnceVerifiesAndBoundsBodies(t *testing.T) {
	r, err := Listen("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	secret := []byte("0123456789abcdef0123456789abcdef")
	r.Expect("op", Expectation{Secret: secret})
	body := []byte(`{"a":1}`)
	signed := func() http.Header {
		ts := time.Now().Unix()
		return http.Header{"Content-Type": {"application/json"}, "X-Adcp-Signature": {Sign(secret, body, ts)}, "X-Adcp-Timestamp": {strconv.FormatInt(ts, 10)}}
	}
	if s := post(t, r.URL("op"), body, signed()); s != 503 {
		t.Errorf("first delivery answered %d, want 503", s)
	}
	if s := post(t, r.URL("op"), body, signed()); s != 200 {
		t.Errorf("retry answered %d, want 200", s)
	}
	bad := signed()
	bad.Set("X-Adcp-Signature", "sha256="+strings.Repeat("0", 64))
	post(t, r.URL("op"), body, bad)
	if s := post(t, r.URL("other"), bytes.Repeat([]byte("x"), MaxDeliveryBytes+10), http.Header{}); s != http.StatusRequestEntityTooLarge {
		t.Errorf("an oversized body answered %d, want 413", s)
	}
	got := r.Deliveries("op")
	if len(got) != 3 || got[0].SignatureError != "" || got[1].SignatureError != "" || got[2].SignatureError == "" || got[0].Scheme != SchemeHMAC {
		t.Fatalf("deliveries %+v", got)
	}
	if o := r.Deliveries("other"); len(o) != 1 || !o[0].Truncated || len(o[0].Body) != MaxDeliveryBytes {
		t.Errorf("oversized delivery recorded as %d bytes, truncated %v", len(o[0].Body), o[0].Truncated)
	}
	// The RFC 9421 scheme without keys, and signing both ways, are failures.
	r.Expect("op9421", Expectation{KeysError: "no JWKS"})
	post(t, r.URL("op9421"), body, signed())
	if d := r.Deliveries("op9421"); len(d) != 1 || !strings.Contains(d[0].SignatureError, "signed both ways") {
		t.Errorf("HMAC headers under the RFC 9421 scheme: %+v", d)
	}
	post(t, r.URL("op9421"), body, http.Header{})
	if d := r.Deliveries("op9421"); len(d) != 2 || !strings.Contains(d[1].SignatureError, CodeKeysUnavailable) {
		t.Errorf("no keys: %+v", d)
	}
}

// A seller posting many large deliveries with large headers cannot make
// the receiver hold them all: beyond MaxKeptBytes a delivery keeps its size
// and SHA-256, and headers over 64 KiB are refused before the body is read.
func TestTheReceiverBoundsWhatItKeeps(t *testing.T) {
	r, err := Listen("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	body := bytes.Repeat([]byte("x"), MaxDeliveryBytes-10)
	n := MaxKeptBytes/len(body) + 4
	for range n {
		resp, err := http.Post(r.URL("op"), "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	got := r.Deliveries("op")
	kept, dropped := 0, 0
	for _, d := range got {
		kept += len(d.Body)
		if d.Dropped {
			dropped++
			if d.BodyBytes != len(body) || len(d.BodySHA256) != 64 {
				t.Errorf("a dropped delivery says %d bytes, sha %q", d.BodyBytes, d.BodySHA256)
			}
		}
	}
	if len(got) != n || dropped == 0 || kept > MaxKeptBytes {
		t.Errorf("%d deliveries, %d dropped, %d bytes kept (max %d)", len(got), dropped, kept, MaxKeptBytes)
	}
	req, _ := http.NewRequest(http.MethodPost, r.URL("op2"), strings.NewReader("{}"))
	req.Header.Set("X-Pad", strings.Repeat("h", 200<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || len(r.Deliveries("op2")) != 0 {
		t.Errorf("200 KiB of headers: HTTP %d, %d deliveries kept", resp.StatusCode, len(r.Deliveries("op2")))
	}
}

// An operation with a failure plan is answered by it, not by the default
// first-delivery 503: n 0 accepts at once; n 2 with 429 refuses twice.
func TestReceiverFailurePlans(t *testing.T) {
	r, err := Listen("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !strings.HasPrefix(r.URL("x"), r.Base()+"/hooks/") {
		t.Errorf("URL %s is not under Base %s", r.URL("x"), r.Base())
	}
	r.Fail("now", 0, 0)
	r.Fail("retry", 2, http.StatusTooManyRequests)
	r.Fail("odd", 1, 200)
	body := []byte(`{}`)
	if s := post(t, r.URL("now"), body, http.Header{}); s != 200 {
		t.Errorf("a planned n=0 operation answered %d, want 200", s)
	}
	var got []int
	for range 3 {
		got = append(got, post(t, r.URL("retry"), body, http.Header{}))
	}
	if got[0] != 429 || got[1] != 429 || got[2] != 200 {
		t.Errorf("retry plan answered %v, want [429 429 200]", got)
	}
	if s := post(t, r.URL("odd"), body, http.Header{}); s != 503 {
		t.Errorf("a plan with a non-error status answered %d, want 503", s)
	}
	if s := post(t, r.URL("unplanned"), body, http.Header{}); s != 503 {
		t.Errorf("an unplanned operation's first delivery answered %d, want 503", s)
	}
}
