// Package suites holds the judges: one Ginkgo spec per rule per transport
// that reads a recorded evidence store and decides, doing no I/O.
//
//	store := ... // filled by the probe phase, or read back from store.json
//	suites.Register(store, suites.Options{})
//	RunSpecs(t, "AdCP conformance")
//
// Every judge is a pure function of the store (Check.Judge), so a recorded
// run can be judged again without Ginkgo and without the seller:
//
//	for _, v := range suites.Judge(store, suites.Options{}) {
//		fmt.Println(v.Rule, v.Outcome, v.Message)
//	}
//
// A judge reaches one of four outcomes. It fails with a short, stable
// message naming the rule, the probe and the JSON pointer
// ("ENV-02: mcp/get_products/valid: /result/structuredContent/payload nests
// body fields"); it skips with a reason when its probes did not run or when
// nothing it judges was observed (it never passes vacuously); it reports a
// harness error when the calls it needs failed on the harness's side; and it
// passes otherwise.
//
// # Report entries
//
// The Ginkgo specs attach their evidence with AddReportEntry, for the report
// model to read:
//
//   - EntryExchange ("exchange"): one wire.Exchange of an offending call,
//     visibility FailureOrVerbose, on failed and errored specs only;
//   - EntryFindings ("findings"): every problem found, one line each, on
//     failed specs;
//   - EntryExamined ("examined"): the probe IDs a passing judge examined, so
//     a pass is never silent about what it rests on;
//   - EntryHarnessError ("harness_error"): set, with visibility Always, on a
//     spec that could not judge because the harness or the network failed.
//     Ginkgo knows no fourth outcome, so such a spec also fails, with a
//     message starting "<rule>: harness error"; the report model turns a
//     failed spec carrying this entry into an error, never a seller failure.
//
// # Pointers
//
// A finding's JSON pointer (RFC 6901) points into the JSON-RPC response of
// the call; "#" then steps into a text item parsed as JSON
// (/result/content/0/text#/adcp_error). For a streaming call it points into
// the stream seen as {"events": [response, …]}: /events/2/result/task/….
//
// # Where the spec disagrees with itself
//
// Each judge's comment block states the policy it follows where the spec's
// pages read differently; a seller is never failed for a
// reading the spec allows.
package suites
