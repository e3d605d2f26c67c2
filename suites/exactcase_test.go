package suites

import (
	"strings"
	"testing"
)

// TestWebhookEventIsExactCase: a delivery's identity is read as a receiver
// reads it, exact-case keys and the last of a repeated key
// (encoding/json's struct decoding read "Task_ID" as task_id).
func TestWebhookEventIsExactCase(t *testing.T) {
	e := event([]byte(`{"idempotency_key":"k1","task_id":"t1","Task_ID":"t2","status":"completed","STATUS":"failed"}`))
	if e.key != "k1" || e.taskID != "t1" || e.status != "completed" {
		t.Errorf("event = %+v", e)
	}
}

// TestWalkStringsAnyDepth: strings deeper than encoding/json's 10 000
// levels reach the URL and leak judges, with a bounded pointer.
func TestWalkStringsAnyDepth(t *testing.T) {
	const n = 12000
	doc := strings.Repeat(`{"a":`, n) + `"http://leak.example.com"` + strings.Repeat("}", n)
	var got []string
	walkStrings("/result", []byte(doc), func(p, key, s string) {
		if key != "a" || len(p) > maxWalkPointer+16 {
			t.Errorf("key %q, pointer of %d bytes", key, len(p))
		}
		got = append(got, s)
	})
	if len(got) != 1 || got[0] != "http://leak.example.com" {
		t.Fatalf("walked %q", got)
	}
	var ptrs []string
	walkStrings("/r", []byte(`{"b":["x",{"c~/d":"y"}],"a":"z","a":"w"}`), func(p, _, _ string) { ptrs = append(ptrs, p) })
	want := []string{"/r/b/0", "/r/b/1/c~0~1d", "/r/a"} // the last "a" only, as JSON.parse keeps it
	if len(ptrs) != len(want) {
		t.Fatalf("pointers %q, want %q", ptrs, want)
	}
	for i := range want {
		if ptrs[i] != want[i] {
			t.Errorf("pointers %q, want %q", ptrs, want)
		}
	}
}
