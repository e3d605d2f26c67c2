package cli

import (
	"fmt"

	"github.com/adcp-conform/adcp-conform/report/certify"
)

// runKeygen writes a new Ed25519 key pair: PREFIX.key (PEM PKCS #8, mode
// 0600) and PREFIX.pub (PEM PKIX). It never overwrites a file.
func runKeygen(args []string, stdio Stdio) error {
	var prefix string
	fs := newFlagSet("keygen", "keygen --out PREFIX", stdio.Err)
	fs.StringVar(&prefix, "out", "", "write `PREFIX`.key (private, mode 0600) and PREFIX.pub (public), both PEM")
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if prefix == "" {
		return &UsageError{Msg: "--out PREFIX is required", ShowUsage: true}
	}
	if _, err := certify.WriteKeyPair(prefix); err != nil {
		return usagef("%v", err)
	}
	fmt.Fprintf(stdio.Out, "private key: %s (keep it secret)\npublic key:  %s\n", prefix+certify.PrivateSuffix, prefix+certify.PublicSuffix)
	return nil
}
