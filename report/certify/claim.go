package certify

import (
	"encoding/json"
	"fmt"

	"github.com/adcp-conform/adcp-conform/report"
)

// Claim is what a signed results.json says it is: what the run tested, its
// verdict, and whether it is a certification a registry may publish. It is
// inside what is signed, so a registry reads it from a verified folder.
type Claim struct {
	Target      string            `json:"target"`
	TargetKind  report.TargetKind `json:"target_kind"`
	Verdict     report.Verdict    `json:"verdict"`
	Certify     bool              `json:"certify"`
	Publishable bool              `json:"publishable"`
}

// ReadClaim reads the claim of a results.json document.
func ReadClaim(results []byte) (Claim, error) {
	var c Claim
	if err := json.Unmarshal(results, &c); err != nil {
		return Claim{}, fmt.Errorf("%w: %s: %v", ErrMismatch, ResultsFile, err)
	}
	return c, nil
}

// Check returns an error wrapping ErrMismatch when the claim contradicts
// itself: a publishable certification of anything but a seller — the
// bundled reference seller proves the harness, never a seller, and the
// harness never marks its run publishable, so such a claim was not written
// by it. A report written before target_kind was recorded carries none;
// it is read as it is (a publishable one was over HTTPS, which the
// bundled seller never is).
func (c Claim) Check() error {
	if c.Publishable && c.TargetKind != "" && c.TargetKind != report.TargetSeller {
		return fmt.Errorf("%w: %s claims a publishable certification of a %q target: only a seller is ever certified", ErrMismatch, ResultsFile, c.TargetKind)
	}
	return nil
}

// SellerCertification says whether the claim is a seller's certification
// a registry may publish: "" when it is, else why not.
func (c Claim) SellerCertification() string {
	switch {
	case c.TargetKind == report.TargetBundledReference:
		return "the run tested the bundled reference seller (it proves the harness, never a seller)"
	case c.TargetKind != "" && c.TargetKind != report.TargetSeller:
		return fmt.Sprintf("the run's target kind is %q, not a seller", c.TargetKind)
	case !c.Certify:
		return "not a certification run (--certify)"
	case !c.Publishable:
		return "the certification run is not publishable (its results.json says why: publishable_reason)"
	}
	return ""
}
