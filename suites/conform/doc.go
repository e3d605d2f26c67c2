// Package conform runs AdCP conformance from Go: what `adcp-conform run`
// does, for a program — a seller's own tests — rather than a shell. The
// command line is a thin face over it: it turns its flags into a Config
// and prints what Run returns.
//
// From `go test`, start the seller, Run against it, and assert:
//
//	func TestConformance(t *testing.T) {
//		srv := httptest.NewServer(myseller.Handler()) // the seller under test
//		defer srv.Close()
//		run, err := conform.Run(t.Context(), conform.Config{
//			MCP:         srv.URL + "/mcp",
//			BearerToken: testToken,
//			Out:         t.TempDir(), // junit.xml, report.html, results.json, evidence.json
//		})
//		if err != nil {
//			t.Fatal(err)
//		}
//		gomega.NewWithT(t).Expect(run).To(conform.BeConformant())
//	}
//
// BeConformant's failure message names each failing rule and storyboard
// step with its first finding; FailExactly proves a known defect is
// caught and nothing else breaks. From a Ginkgo suite, use Describe
// instead of Run: it registers the rule specs and the storyboard steps
// into the caller's own suite (see below). docs/go-api.md is the guide.
//
// A Config's zero value is the command line's defaults but one: with no
// Storyboards (and no Schemas), the release the seller advertises decides
// them and they are fetched once into the user's cache from the published
// site. A hermetic test names local copies (Storyboards, Schemas, or a
// ReleaseMirror folder), or turns them "off".
//
// Run's error is a *ConfigError for a configuration refused before any
// probe (a Storyboards folder whose storyboards do not load: once they
// have, before the seller's discovery is used), another error when the
// harness could not run; a seller that
// breaks rules, or that cannot be reached, is no error: the report says so
// (report.Run.Verdict, HarnessError, ExitCode). Cancelling Run's context
// interrupts it; the reports are still written, and say why (the text of
// context.Cause: the command line cancels with "interrupted by SIGINT").
//
// What a caller must not do concurrently:
//
//   - Run while a Ginkgo suite runs in the same process, or in a test
//     binary whose tests include a Ginkgo suite: Run judges with Ginkgo
//     in-process (RunSpecs) and resets Ginkgo's global suite each time,
//     which would wipe the caller's tree. A Ginkgo suite uses Describe.
//   - Describe more than once in one suite: the spec names would repeat.
//   - Give two runs at once the same Out folder, or the same Log when it
//     is not safe for concurrent use (a bytes.Buffer).
//
// Several Runs may go on at once otherwise (Reference runs two): they
// probe side by side and take turns to judge, one Ginkgo suite at a time.
// A Config is a value: a copy per run is safe; its Header, Agents, TLS and
// Baseline are read, never written.
//
// Messages and reports name a setting by its command-line flag
// (--bearer-env, --storyboards, …), as the command line's users read them;
// each Config field says which flag it stands for.
package conform
