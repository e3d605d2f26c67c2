package schema

import (
	"strings"
	"testing"
)

// minimal is the smallest results.json the schema accepts.
const minimal = `{"tool":"adcp-conform","version":"1","adcp_release":"3.1.19","target":"https://s.example/mcp",
"started_at":"2026-01-02T03:04:05Z","duration_ms":1,"strict":false,"verdict":"conformant","counts":{"passed":1},
"publishable":false,"rules":[],"steps":[%s],"run_summary":{"total_steps":0,"steps_passed":0,"steps_failed":0,
"steps_skipped":0,"steps_not_selected":0,"tracks":[],"schemas_used":[],"runner_capability_version":"3.1.19",
"skipped_by_reason":{},"validations_not_applicable":0,"validations_advisory_failed":0,"expected_failures":0,"stale_baseline":0}}`

func doc(step string) []byte { return []byte(strings.Replace(minimal, "%s", step, 1)) }

func TestTheSchemaAcceptsAMinimalReport(t *testing.T) {
	if err := Validate(doc("")); err != nil {
		t.Fatal(err)
	}
}

func TestTheSchemaRejectsWhatTheContractForbids(t *testing.T) {
	const base = `"storyboard_id":"s","phase_id":"p","step_id":"x","task":"get_products","duration_ms":1,"extraction":{"path":"none"}`
	for name, step := range map[string]string{
		"a skip reason outside the vocabulary": `{` + base + `,"passed":true,"validations":[],"skip":{"reason":"because","detail":"d"}}`,
		"a response header outside the allowlist": `{` + base + `,"passed":true,"validations":[],
			"response":{"transport":"mcp","payload":{},"headers":{"Set-Cookie":["a"]}}}`,
		"request headers": `{` + base + `,"passed":true,"validations":[],
			"request":{"transport":"mcp","operation":"get_products","payload":{},"headers":{"Authorization":["x"]}}}`,
		"a failed validation without its pointer": `{` + base + `,"passed":false,"validations":[
			{"check":"rule","passed":false,"description":"d","expected":null,"actual":null,"schema_id":null,"schema_url":null}]}`,
		"a failed step without a failed validation or an error": `{` + base + `,"passed":false,"validations":[]}`,
		"an unknown extraction path": `{"storyboard_id":"s","phase_id":"p","step_id":"x","task":"t","duration_ms":1,
			"extraction":{"path":"guess"},"passed":true,"validations":[]}`,
		"a not-applicable validation that failed": `{` + base + `,"passed":true,"validations":[
			{"check":"future","passed":false,"not_applicable":true,"note":"n","description":"d","json_pointer":null,"expected":null,"actual":null,"schema_id":null,"schema_url":null}]}`,
		"a not-applicable validation without its note": `{` + base + `,"passed":true,"validations":[
			{"check":"future","passed":true,"not_applicable":true,"description":"d"}]}`,
		"a severity outside the vocabulary": `{` + base + `,"passed":true,"validations":[{"check":"c","passed":true,"description":"d","severity":"low"}]}`,
		"a promoted severity still advisory": `{` + base + `,"passed":true,"validations":[
			{"check":"c","passed":true,"description":"d","severity":"advisory","severity_promoted_from_advisory":true}]}`,
		"a notice without a code": `{` + base + `,"passed":true,"validations":[],"notices":[{"severity":"info","message":"m"}]}`,
	} {
		err := Validate(doc(step))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
	good := `{` + base + `,"passed":false,"validations":[{"check":"rule","rule":"ENV-02","passed":false,"description":"d",
		"json_pointer":"/result/structuredContent/payload","expected":"x","actual":null,"schema_id":null,"schema_url":null}]}`
	if err := Validate(doc(good)); err != nil {
		t.Errorf("a well-formed failed step: %v", err)
	}
}

func TestTheSchemaHoldsStoryboards(t *testing.T) {
	with := func(sb string) []byte {
		return []byte(strings.Replace(string(doc("")), `"rules":[]`, `"rules":[],"storyboards":[`+sb+`]`, 1))
	}
	good := `{"id":"capability_discovery","title":"t","category":"universal","path":"universal/x.yaml","track":"core",
		"outcome":"skipped","skip":{"reason":"not_applicable","detail":"d"},"counts":{},"duration_ms":0,
		"baseline":{"status":"unjudged","reason":"r"}}`
	if err := Validate(with(good)); err != nil {
		t.Errorf("a well-formed storyboard: %v", err)
	}
	notSelected := `{"id":"a","category":"c","outcome":"disabled","not_selected":{"reason":"run_mode_excluded","detail":"read-only run"},"counts":{},"duration_ms":0}`
	if err := Validate(with(notSelected)); err != nil {
		t.Errorf("a storyboard the run mode left out: %v", err)
	}
	for name, sb := range map[string]string{
		"no category":                    `{"id":"a","outcome":"passed","counts":{},"duration_ms":0}`,
		"a disabled storyboard, no why":  `{"id":"a","category":"c","outcome":"disabled","counts":{},"duration_ms":0}`,
		"a skipped one that passed":      `{"id":"a","category":"c","outcome":"passed","skip":{"reason":"no_phases","detail":"d"},"counts":{},"duration_ms":0}`,
		"a not-selected one that ran":    `{"id":"a","category":"c","outcome":"passed","not_selected":{"reason":"run_mode_excluded","detail":"d"},"counts":{},"duration_ms":0}`,
		"a not-selected one, bad reason": `{"id":"a","category":"c","outcome":"disabled","not_selected":{"reason":"nope","detail":"d"},"counts":{},"duration_ms":0}`,
		"an unknown member":              `{"id":"a","category":"c","outcome":"passed","counts":{},"duration_ms":0,"score":1}`,
		"a skip outside the vocabulary":  `{"id":"a","category":"c","outcome":"skipped","skip":{"reason":"nope","detail":"d"},"counts":{},"duration_ms":0}`,
	} {
		if err := Validate(with(sb)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestValidateReportsSyntaxErrors(t *testing.T) {
	if err := Validate([]byte("{")); err == nil || !strings.Contains(err.Error(), "results.json") {
		t.Fatalf("err = %v", err)
	}
}

func TestTheSchemaKnowsTheTargetKinds(t *testing.T) {
	with := func(member string) []byte {
		return []byte(strings.Replace(string(doc("")), `"target":"https://s.example/mcp",`, `"target":"https://s.example/mcp",`+member+`,`, 1))
	}
	for _, ok := range []string{`"target_kind":"seller"`, `"target_kind":"bundled_reference","face":"A2A 0.3"`} {
		if err := Validate(with(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if err := Validate(with(`"target_kind":"reference"`)); err == nil {
		t.Error("an unknown target_kind is accepted")
	}
}

func TestTheSchemaHoldsTheRelease(t *testing.T) {
	with := func(rel string) []byte {
		return []byte(strings.Replace(string(doc("")), `"tool":`, `"release":`+rel+`,"tool":`, 1))
	}
	if err := Validate(with(`{"version":"3.2.0-beta.5","chosen_by":"seller","reason":"r","advertised":["3.2-beta.5"],"mirror":"/m","available":["3.2.0-beta.5"]}`)); err != nil {
		t.Errorf("a chosen release: %v", err)
	}
	if err := Validate(with(`{"chosen_by":"seller","reason":"no release the seller speaks"}`)); err != nil {
		t.Errorf("no release: %v", err)
	}
	for name, rel := range map[string]string{
		"an unknown chooser": `{"version":"3.1.19","chosen_by":"guess","reason":"r"}`,
		"no reason":          `{"version":"3.1.19","chosen_by":"--release"}`,
		"an unknown field":   `{"version":"3.1.19","chosen_by":"--release","reason":"r","why":"x"}`,
	} {
		if err := Validate(with(rel)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
