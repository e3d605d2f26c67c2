package check

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/adcp-conform/adcp-conform/suites/storyboard/spec"
)

// checkFunc grades one validation of a step against its facts.
type checkFunc func(v spec.Validation, f Facts) spec.Result

// checks are the check kinds the engine grades: the single-response
// kinds (field.go) and the cross-step and cross-response kinds
// (cross.go).
var checks = func() map[string]checkFunc {
	m := map[string]checkFunc{}
	for _, part := range []map[string]checkFunc{fieldChecks, crossChecks} {
		for k, f := range part {
			if _, dup := m[k]; dup {
				panic("storyboard: check kind " + k + " registered twice")
			}
			m[k] = f
		}
	}
	return m
}()

// Grade grades one validation against its facts and returns its
// validation_result (runner-output-contract.yaml): id, check, description
// and severity copied from the storyboard, the verdict from the check.
//
//   - An unknown check kind grades not_applicable (passed, with a note),
//     never a failure: the contract's forward-compatibility clause. The
//     severity is then copied verbatim and severity_promoted_from_advisory
//     is absent (storyboard-schema.yaml, expires_after_version,
//     "Forward-compat ordering").
//   - An advisory validation with expires_after_version is promoted to
//     required when runnerVersion >= expires_after_version under semver
//     with pre-releases ("6.5.0-rc.3 < 6.5.0"); SeverityPromoted then says
//     whether it was. A malformed version on either side never promotes.
//   - A single-response kind on a step that observed nothing (nil Obs) or
//     whose call proved nothing about the seller (Obs.Failure) grades
//     not_applicable with the reason; the engine reports such a step as an
//     error, never a failure.
//
// Grade never panics: a check that would is reported not_applicable with
// the harness fault in the note.
func Grade(v spec.Validation, f Facts, runnerVersion string) (res spec.Result) {
	head := spec.Result{ID: v.ID, Check: v.Check, Description: v.Description, Severity: v.Severity}
	if head.Severity == "" {
		head.Severity = "required"
	}
	fn, ok := checks[v.Check]
	if !ok {
		head.Passed, head.NotApplicable = true, true
		head.Note = fmt.Sprintf("runner does not implement check type '%s' — graded as not_applicable to preserve forward compatibility", spec.Clip(v.Check, 200))
		return head
	}
	if v.Severity == "advisory" && v.ExpiresAfterVersion != "" {
		promoted := versionGTE(runnerVersion, v.ExpiresAfterVersion)
		head.SeverityPromoted = &promoted
		if promoted {
			head.Severity = "required"
		}
	}
	defer func() {
		res.ID, res.Check, res.Description, res.Severity, res.SeverityPromoted = head.ID, head.Check, head.Description, head.Severity, head.SeverityPromoted
	}()
	if _, single := fieldChecks[v.Check]; single {
		switch {
		case f.Obs == nil:
			return notApplicable("no response was observed for this step: the check needs one")
		case f.Obs.Failure != "":
			return notApplicable("the call proved nothing about the seller (" + spec.Clip(f.Obs.Failure, 300) + "): the check needs a response")
		}
	}
	defer func() {
		if r := recover(); r != nil {
			res = notApplicable(fmt.Sprintf("harness fault while grading (%v): graded not_applicable rather than judged", spec.Clip(fmt.Sprint(r), 300)))
		}
	}()
	return fn(v, f)
}

// versionGTE is semver.gte over versions written with or without a
// leading "v"; false when either is not a valid semver.
func versionGTE(have, want string) bool {
	h, w := "v"+strings.TrimPrefix(have, "v"), "v"+strings.TrimPrefix(want, "v")
	if !semver.IsValid(h) || !semver.IsValid(w) {
		return false
	}
	return semver.Compare(h, w) >= 0
}

// notApplicable is a result graded not_applicable with its reason.
func notApplicable(note string) spec.Result {
	return spec.Result{Passed: true, NotApplicable: true, Note: note}
}
