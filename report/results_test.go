package report

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/adcp-conform/adcp-conform/internal/golden"
	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report/schema"
)

// TestResultsJSONMatchesItsGoldenFileAndSchema pins results.json (the JSON
// of the model, as the run command writes it) over the synthetic run, and
// holds it to the shipped schema.
func TestResultsJSONMatchesItsGoldenFileAndSchema(t *testing.T) {
	for name, run := range map[string]*Run{"results.golden.json": syntheticRun(), "results_storyboards.golden.json": storyboardRun()} {
		t.Run(name, func(t *testing.T) { checkResults(t, name, run) })
	}
}

func checkResults(t *testing.T, name string, run *Run) {
	// What certify.Contract does to exchanges before results.json is
	// written (report/certify imports this package, so a test here cannot
	// call it): only allowlisted response headers, no request headers.
	for i := range run.Rules {
		for j := range run.Rules[i].Evidence {
			for k := range run.Rules[i].Evidence[j].Exchanges {
				x := &run.Rules[i].Evidence[j].Exchanges[k]
				x.ResponseHeaders, x.RequestHeaders = wire.ReportResponseHeaders(x.ResponseHeaders), nil
			}
		}
	}
	b, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if err := schema.Validate(b); err != nil {
		t.Errorf("the synthetic run's results.json does not match the schema: %v", err)
	}
	golden.Check(t, filepath.Join("testdata", name), b)
}
