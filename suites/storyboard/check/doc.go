// Package check grades a storyboard step's validations: the check kinds of
// universal/runner-output-contract.yaml (field presence, values, patterns,
// status and error codes, response schemas, the cross-step and
// cross-response kinds, upstream traffic, A2A, the OAuth metadata graph),
// each a small pure function of the validation and the Facts the engine
// gathered (Grade), and the invariants a storyboard declares across its
// steps (Invariants). It does no I/O: the engine sends, fetches and polls;
// check judges what it recorded, so a recorded run is graded again the
// same.
//
//	res := check.Grade(v, check.Facts{Obs: obs, Context: ctx}, "3.1.19")
//	if !res.Passed {
//		fmt.Println(res.Check, res.Message) // field_present media_buy_id is missing
//	}
package check
