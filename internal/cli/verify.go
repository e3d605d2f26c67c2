package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/adcp-conform/adcp-conform/probes/wire"

	"github.com/adcp-conform/adcp-conform/report/certify"
)

// runVerify checks a signed report folder: the signature of results.json
// against the public key, then every evidence hash results.json embeds.
// Exit 0 when all match, 1 on any mismatch (a missing file included), 2 on
// a usage error (a bad key, a missing folder).
func runVerify(args []string, stdio Stdio) error {
	var pubPath string
	fs := newFlagSet("verify", "verify --pubkey FILE DIR", stdio.Err)
	fs.StringVar(&pubPath, "pubkey", "", "Ed25519 public key (PEM, from 'adcp-conform keygen')")
	if err := parseFlags(fs, args, stdio.getenv); err != nil {
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
	return nil
}
