package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/adcp-conform/adcp-conform/probes/wire"
	"github.com/adcp-conform/adcp-conform/report"
	"github.com/adcp-conform/adcp-conform/report/certify"
)

// runVerify checks a signed report folder: the signature of results.json
// against the public key, then every evidence hash results.json embeds,
// then says what the folder claims: its target, the target's kind (a seller
// or the bundled reference seller) and whether it is a seller's
// certification. Exit 0 when all match, 1 on any mismatch (a missing file
// included; a claimed certification of the bundled reference seller), 2
// on a usage error (a bad key, a missing folder); with
// --require-certification, 1 also when the folder is no publishable
// certification of a seller.
func runVerify(args []string, stdio Stdio) error {
	var pubPath string
	var requireCert bool
	fs := newFlagSet("verify", "verify --pubkey FILE [--require-certification] DIR", stdio.Err)
	fs.StringVar(&pubPath, "pubkey", "", "Ed25519 public key (PEM, from 'adcp-conform keygen')")
	fs.BoolVar(&requireCert, "require-certification", false, "also exit 1 unless the folder is a publishable certification of a seller (never of the bundled reference seller)")
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &UsageError{Msg: "want one report folder", ShowUsage: true}
	}
	if pubPath == "" {
		return &UsageError{Msg: "--pubkey FILE is required", ShowUsage: true}
	}
	pub, err := certify.ReadPublicKey(pubPath)
	if err != nil {
		return usagef("--pubkey: %v", err)
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("%s is not a report folder", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, FileSignature)); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, FileResults)); err == nil {
			fmt.Fprintf(stdio.Out, "FAIL %s is unsigned: it has no %s\n", wire.Sanitize(dir, 200), FileSignature)
			return &codeError{code: ExitNonConformant, msg: fmt.Sprintf("the report folder is unsigned (no %s): sign a run with 'adcp-conform run --sign-key FILE'", FileSignature)}
		}
	}
	if err := certify.VerifyDir(dir, pub); err != nil {
		var list interface{ Unwrap() []error }
		if errors.As(err, &list) {
			for _, e := range list.Unwrap() {
				fmt.Fprintf(stdio.Out, "FAIL %s\n", oneLine(e.Error()))
			}
		} else {
			fmt.Fprintf(stdio.Out, "FAIL %s\n", oneLine(err.Error()))
		}
		return &codeError{code: ExitNonConformant, msg: "the report folder does not match its signature and hashes"}
	}
	fmt.Fprintf(stdio.Out, "OK %s: the signature and every evidence hash match\n", dir)
	b, err := os.ReadFile(filepath.Join(dir, FileResults))
	if err != nil {
		return err
	}
	claim, err := certify.ReadClaim(b)
	if err != nil {
		return err
	}
	return showClaim(stdio, claim, requireCert)
}

// showClaim says what a verified folder claims: its target and what kind
// it is, its verdict, and whether it is a seller's certification — a run
// against the bundled reference seller is said to be none, whatever else
// it says. With require, anything but a publishable certification of a
// seller exits 1.
func showClaim(stdio Stdio, c certify.Claim, require bool) error {
	kind := string(c.TargetKind)
	switch c.TargetKind {
	case "":
		kind = "not recorded (a report from before adcp-conform recorded target_kind)"
	case report.TargetBundledReference:
		kind = "bundled_reference: the reference seller bundled with adcp-conform, not a seller"
	}
	fmt.Fprintf(stdio.Out, "target: %s\ntarget kind: %s\nverdict: %s\n", wire.Sanitize(c.Target, 500), wire.Sanitize(kind, 200), wire.Sanitize(string(c.Verdict), 40))
	why := c.SellerCertification()
	if why == "" {
		fmt.Fprintln(stdio.Out, "certification: a publishable certification of the seller above")
		return nil
	}
	fmt.Fprintf(stdio.Out, "certification: none — %s\n", wire.Sanitize(why, 300))
	if require {
		return &codeError{code: ExitNonConformant, msg: "not a seller's certification (--require-certification): " + wire.Sanitize(why, 300)}
	}
	return nil
}
