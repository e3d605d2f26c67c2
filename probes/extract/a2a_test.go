package extract

import (
	"errors"
	"testing"
)

func TestNormalizeState(t *testing.T) {
	cases := []struct{ in, want string }{
		{"TASK_STATE_COMPLETED", "completed"},
		{"TASK_STATE_INPUT_REQUIRED", "input-required"},
		{"TASK_STATE_AUTH_REQUIRED", "auth-required"},
		{"input-required", "input-required"},
		{"COMPLETED", "completed"},
		{"INPUT_REQUIRED", "input-required"},
		{"task_state_completed", "task-state-completed"},        // the prefix is case-sensitive
		{"TASK_STATE_TASK_STATE_WORKING", "task-state-working"}, // stripped once
		{"input__required", "input--required"},                  // no collapsing
		{" completed", " completed"},                            // no trimming
		{"WOR\u212aING", "wor\u212aing"},                        // KELVIN SIGN is not ASCII: not folded to k
		{"\u0130", "\u0130"},                                    // no Unicode lowercasing
		{"", ""},
	}
	for _, c := range cases {
		if got := NormalizeState(c.in); got != c.want {
			t.Errorf("NormalizeState(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

const (
	dataA = `{"a":1}`
	dataB = `{"b":2}`
)

func task(state, rest string) string {
	if rest != "" {
		rest = "," + rest
	}
	return `{"id":"t1","status":{"state":"` + state + `"}` + rest + `}`
}

func taskMsg(state, parts, rest string) string {
	if rest != "" {
		rest = "," + rest
	}
	return `{"id":"t1","status":{"state":"` + state + `","message":{"role":"agent","parts":` + parts + `}}` + rest + `}`
}

var a2aCases = []struct {
	name     string
	in       string
	path     Path
	data     string
	ptr      string
	state    string
	wrapper  string // pointer of an expected *WrapperError
	anomalie []anomalyWant
}{
	// Step 1: envelope unwrap.
	{name: "task envelope", in: `{"task":` + task("completed", `"artifacts":[{"parts":[{"data":`+dataA+`}]}]`) + `}`, path: PathArtifact, data: dataA, ptr: "/task/artifacts/0/parts/0/data", state: "completed"},
	{name: "statusUpdate envelope", in: `{"statusUpdate":` + taskMsg("TASK_STATE_WORKING", `[{"data":`+dataA+`}]`, "") + `}`, path: PathStatusMessage, data: dataA, ptr: "/statusUpdate/status/message/parts/0/data", state: "working"},
	{name: "artifactUpdate has no state", in: `{"artifactUpdate":{"artifact":{"parts":[{"data":` + dataA + `}]}}}`, path: PathNone},
	{name: "message envelope has no state", in: `{"message":{"role":"agent","parts":[{"data":` + dataA + `}]}}`, path: PathNone},
	{name: "nested envelope is rejected", in: `{"task":{"task":` + task("completed", `"artifacts":[{"parts":[{"data":`+dataA+`}]}]`) + `}}`, path: PathNone,
		anomalie: []anomalyWant{{AnomalyNestedEnvelope, "/task/task"}}},
	{name: "envelope key among inner keys is rejected", in: `{"task":{"id":"t","status":{"state":"completed"},"artifacts":[{"parts":[{"data":` + dataA + `}]}],"message":{}}}`, path: PathNone,
		anomalie: []anomalyWant{{AnomalyNestedEnvelope, "/task/message"}}},
	{name: "envelope with a null value is not unwrapped", in: `{"task":null}`, path: PathNone},
	{name: "envelope with an array value", in: `{"task":[` + task("completed", `"artifacts":[{"parts":[{"data":`+dataA+`}]}]`) + `]}`, path: PathNone},
	{name: "two keys are not an envelope", in: `{"task":` + task("completed", `"artifacts":[{"parts":[{"data":`+dataA+`}]}]`) + `,"kind":"x"}`, path: PathNone},
	{name: "repeated envelope key: last wins", in: `{"task":{},"task":` + task("completed", `"artifacts":[{"parts":[{"data":`+dataA+`}]}]`) + `}`, path: PathArtifact, data: dataA, ptr: "/task/artifacts/0/parts/0/data", state: "completed",
		anomalie: []anomalyWant{{AnomalyDuplicateKey, "/task"}}},

	// Step 2: state.
	{name: "no status", in: `{"artifacts":[{"parts":[{"data":` + dataA + `}]}]}`, path: PathNone},
	{name: "no state", in: `{"status":{},"artifacts":[{"parts":[{"data":` + dataA + `}]}]}`, path: PathNone},
	{name: "non-string state", in: `{"status":{"state":3},"artifacts":[{"parts":[{"data":` + dataA + `}]}]}`, path: PathNone,
		anomalie: []anomalyWant{{AnomalyNonStringState, "/status/state"}}},
	{name: "empty state", in: task("", `"artifacts":[{"parts":[{"data":`+dataA+`}]}]`), path: PathNone},
	{name: "unknown state", in: task("TASK_STATE_ARCHIVED", `"artifacts":[{"parts":[{"data":`+dataA+`}]}]`), path: PathNone, state: "archived",
		anomalie: []anomalyWant{{AnomalyUnknownState, "/status/state"}}},
	{name: "padded state is unknown", in: task("completed ", `"artifacts":[{"parts":[{"data":`+dataA+`}]}]`), path: PathNone, state: "completed "},
	{name: "uppercase v0.3 state normalizes", in: task("COMPLETED", `"artifacts":[{"parts":[{"data":`+dataA+`}]}]`), path: PathArtifact, data: dataA, ptr: "/artifacts/0/parts/0/data", state: "completed"},

	// Step 3: final states.
	{name: "last DataPart of artifacts[0]", in: task("completed", `"artifacts":[{"parts":[{"kind":"text","text":"x"},{"kind":"data","data":`+dataA+`},{"data":`+dataB+`},{"kind":"text","text":"y"}]},{"parts":[{"data":{"c":3}}]}]`), path: PathArtifact, data: dataB, ptr: "/artifacts/0/parts/2/data", state: "completed"},
	{name: "null, array and string data are not DataParts", in: task("failed", `"artifacts":[{"parts":[{"data":`+dataA+`},{"data":null},{"data":[1]},{"data":"s"},{"kind":"data"}]}]`), path: PathArtifact, data: dataA, ptr: "/artifacts/0/parts/0/data", state: "failed"},
	{name: "only artifacts[0] is read", in: taskMsg("completed", `[{"data":`+dataB+`}]`, `"artifacts":[{"parts":[{"text":"x"}]},{"parts":[{"data":`+dataA+`}]}]`), path: PathStatusMessage, data: dataB, ptr: "/status/message/parts/0/data", state: "completed"},
	{name: "final fallback takes the first message DataPart", in: taskMsg("completed", `[{"text":"x"},{"data":`+dataA+`},{"data":`+dataB+`}]`, `"artifacts":[]`), path: PathStatusMessage, data: dataA, ptr: "/status/message/parts/1/data", state: "completed"},
	{name: "canceled without data", in: taskMsg("TASK_STATE_CANCELED", `[{"text":"canceled"}]`, ""), path: PathNone, state: "canceled"},
	{name: "rejected carries adcp_error", in: task("TASK_STATE_REJECTED", `"artifacts":[{"parts":[{"data":{"adcp_error":{"code":"POLICY_VIOLATION"}}}]}]`), path: PathArtifact, data: `{"adcp_error":{"code":"POLICY_VIOLATION"}}`, ptr: "/artifacts/0/parts/0/data", state: "rejected"},
	{name: "non-array artifacts fall back", in: taskMsg("completed", `[{"data":`+dataA+`}]`, `"artifacts":{"0":{"parts":[{"data":`+dataB+`}]}}`), path: PathStatusMessage, data: dataA, ptr: "/status/message/parts/0/data", state: "completed",
		anomalie: []anomalyWant{{AnomalyNotArray, "/artifacts"}}},
	{name: "non-array parts fall back", in: taskMsg("completed", `[{"data":`+dataA+`}]`, `"artifacts":[{"parts":{"data":`+dataB+`}}]`), path: PathStatusMessage, data: dataA, ptr: "/status/message/parts/0/data", state: "completed",
		anomalie: []anomalyWant{{AnomalyNotArray, "/artifacts/0/parts"}}},
	{name: "non-object parts are skipped", in: task("completed", `"artifacts":[{"parts":[{"data":`+dataA+`},7,null]}]`), path: PathArtifact, data: dataA, ptr: "/artifacts/0/parts/0/data", state: "completed",
		anomalie: []anomalyWant{{AnomalyNonObjectItem, "/artifacts/0/parts/1"}}},

	// Step 3c: wrappers.
	{name: "wrapper is detected", in: task("completed", `"artifacts":[{"parts":[{"data":{"response":{"products":[]}}}]}]`), path: PathArtifact, ptr: "/artifacts/0/parts/0/data", state: "completed", wrapper: "/artifacts/0/parts/0/data"},
	{name: "repeated response key is still a wrapper", in: task("failed", `"artifacts":[{"parts":[{"data":{"response":1,"response":{}}}]}]`), path: PathArtifact, ptr: "/artifacts/0/parts/0/data", state: "failed", wrapper: "/artifacts/0/parts/0/data"},
	{name: "response beside other keys is data", in: task("completed", `"artifacts":[{"parts":[{"data":{"response":{},"status":"completed"}}]}]`), path: PathArtifact, data: `{"response":{},"status":"completed"}`, ptr: "/artifacts/0/parts/0/data", state: "completed"},
	{name: "response holding null is data", in: task("completed", `"artifacts":[{"parts":[{"data":{"response":null}}]}]`), path: PathArtifact, data: `{"response":null}`, ptr: "/artifacts/0/parts/0/data", state: "completed"},
	{name: "response holding an array is data", in: task("completed", `"artifacts":[{"parts":[{"data":{"response":[]}}]}]`), path: PathArtifact, data: `{"response":[]}`, ptr: "/artifacts/0/parts/0/data", state: "completed"},
	{name: "an earlier wrapper is superseded", in: task("completed", `"artifacts":[{"parts":[{"data":{"response":{}}},{"data":`+dataA+`}]}]`), path: PathArtifact, data: dataA, ptr: "/artifacts/0/parts/1/data", state: "completed"},
	{name: "no wrapper check on the final fallback", in: taskMsg("completed", `[{"data":{"response":{}}}]`, ""), path: PathStatusMessage, data: `{"response":{}}`, ptr: "/status/message/parts/0/data", state: "completed"},

	// Step 4: interim states.
	{name: "interim takes the first message DataPart", in: taskMsg("working", `[{"text":"x"},{"data":`+dataA+`},{"data":`+dataB+`}]`, `"artifacts":[{"parts":[{"data":{"c":3}}]}]`), path: PathStatusMessage, data: dataA, ptr: "/status/message/parts/1/data", state: "working"},
	{name: "no wrapper check on interim states", in: taskMsg("TASK_STATE_INPUT_REQUIRED", `[{"data":{"response":{}}}]`, ""), path: PathStatusMessage, data: `{"response":{}}`, ptr: "/status/message/parts/0/data", state: "input-required"},
	{name: "interim without message", in: task("submitted", ""), path: PathNone, state: "submitted"},
	{name: "auth-required challenge", in: taskMsg("TASK_STATE_AUTH_REQUIRED", `[{"data":{"challenge_url":"https://x"}}]`, ""), path: PathStatusMessage, data: `{"challenge_url":"https://x"}`, ptr: "/status/message/parts/0/data", state: "auth-required"},
}

func TestA2A(t *testing.T) {
	for _, c := range a2aCases {
		t.Run(c.name, func(t *testing.T) {
			x, err := A2A([]byte(c.in))
			var w *WrapperError
			if c.wrapper != "" {
				if !errors.As(err, &w) {
					t.Fatalf("error = %v, want *WrapperError", err)
				}
				if w.Pointer != c.wrapper {
					t.Errorf("wrapper pointer = %q, want %q", w.Pointer, c.wrapper)
				}
			} else if err != nil {
				t.Fatalf("A2A: %v", err)
			}
			if x.Path != c.path {
				t.Errorf("path = %q, want %q", x.Path, c.path)
			}
			if string(x.Data) != c.data {
				t.Errorf("data = %s, want %s", x.Data, c.data)
			}
			if x.Pointer != c.ptr {
				t.Errorf("pointer = %q, want %q", x.Pointer, c.ptr)
			}
			if x.State != c.state {
				t.Errorf("state = %q, want %q", x.State, c.state)
			}
			checkAnomalies(t, x.Anomalies, c.anomalie)
		})
	}
}

var a2aErrorCases = []struct {
	name, in string
	path     Path
	code     string
	ptr      string
	rejected string
}{
	{name: "artifact DataPart", in: task("failed", `"artifacts":[{"parts":[{"text":"x"},{"kind":"data","data":{"adcp_error":{"code":"RATE_LIMITED"}}}]}]`), path: PathArtifact, code: "RATE_LIMITED", ptr: "/artifacts/0/parts/1/data/adcp_error"},
	{name: "every artifact is scanned", in: task("failed", `"artifacts":[{"parts":[{"data":{"a":1}}]},{"parts":[{"data":{"adcp_error":{"code":"SECOND"}}}]}]`), path: PathArtifact, code: "SECOND", ptr: "/artifacts/1/parts/0/data/adcp_error"},
	{name: "first error in document order", in: task("failed", `"artifacts":[{"parts":[{"data":{"adcp_error":{"code":"FIRST"}}},{"data":{"adcp_error":{"code":"LAST"}}}]}]`), path: PathArtifact, code: "FIRST", ptr: "/artifacts/0/parts/0/data/adcp_error"},
	{name: "artifacts before the status message", in: taskMsg("failed", `[{"data":{"adcp_error":{"code":"MSG"}}}]`, `"artifacts":[{"parts":[{"data":{"adcp_error":{"code":"ART"}}}]}]`), path: PathArtifact, code: "ART", ptr: "/artifacts/0/parts/0/data/adcp_error"},
	{name: "status message", in: taskMsg("failed", `[{"text":"x"},{"data":{"adcp_error":{"code":"MSG"}}}]`, ""), path: PathStatusMessage, code: "MSG", ptr: "/status/message/parts/1/data/adcp_error"},
	{name: "state is not consulted", in: task("completed", `"artifacts":[{"parts":[{"data":{"adcp_error":{"code":"X"}}}]}]`), path: PathArtifact, code: "X", ptr: "/artifacts/0/parts/0/data/adcp_error"},
	{name: "through a task envelope", in: `{"task":` + task("failed", `"artifacts":[{"parts":[{"data":{"adcp_error":{"code":"X"}}}]}]`) + `}`, path: PathArtifact, code: "X", ptr: "/task/artifacts/0/parts/0/data/adcp_error"},
	{name: "not through a nested envelope", in: `{"task":{"task":` + task("failed", `"artifacts":[{"parts":[{"data":{"adcp_error":{"code":"X"}}}]}]`) + `}}`, path: PathNone},
	{name: "invalid error ends the search", in: taskMsg("failed", `[{"data":{"adcp_error":{"code":"MSG"}}}]`, `"artifacts":[{"parts":[{"data":{"adcp_error":{"message":"no code"}}}]}]`), path: PathNone, rejected: "/artifacts/0/parts/0/data/adcp_error/code"},
	{name: "falsy adcp_error is skipped", in: taskMsg("failed", `[{"data":{"adcp_error":{"code":"MSG"}}}]`, `"artifacts":[{"parts":[{"data":{"adcp_error":false}}]}]`), path: PathStatusMessage, code: "MSG", ptr: "/status/message/parts/0/data/adcp_error"},
	{name: "no structure", in: taskMsg("failed", `[{"text":"Authentication failed"}]`, ""), path: PathNone},
}

func TestA2AError(t *testing.T) {
	for _, c := range a2aErrorCases {
		t.Run(c.name, func(t *testing.T) {
			x, err := A2AError([]byte(c.in))
			if err != nil {
				t.Fatalf("A2AError: %v", err)
			}
			if x.Path != c.path {
				t.Errorf("path = %q, want %q", x.Path, c.path)
			}
			code := ""
			if x.Error != nil {
				code = x.Error.Code
			}
			if code != c.code {
				t.Errorf("code = %q, want %q", code, c.code)
			}
			if x.Pointer != c.ptr {
				t.Errorf("pointer = %q, want %q", x.Pointer, c.ptr)
			}
			rej := ""
			if x.Rejected != nil {
				rej = x.Rejected.Pointer
			}
			if rej != c.rejected {
				t.Errorf("rejected at %q, want %q", rej, c.rejected)
			}
		})
	}
}
