package cli

import (
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/adcp-conform/adcp-conform/probes/extract"
)

const extractSynopsis = "extract [--transport mcp|a2a] [--jsonrpc] [FILE]"

func runExtract(args []string, stdio Stdio) error {
	fs := newFlagSet("extract", extractSynopsis, stdio.Err)
	transport := fs.String("transport", "mcp", "the transport the reply came over: mcp or a2a")
	jsonrpc := fs.Bool("jsonrpc", false, "the input is a whole JSON-RPC response, not the bare result")
	if err := parseFlags(fs, args, stdio.lookupenv); err != nil {
		return err
	}
	t, err := extract.ParseTransport(*transport)
	if err != nil {
		return usagef("--transport: %v", err)
	}
	if fs.NArg() > 1 {
		return usagef("at most one input file, got %d", fs.NArg())
	}
	input, err := readInput(fs.Arg(0), stdio.In, extract.MaxInputBytes)
	if err != nil {
		return err
	}
	out, err := extract.Describe(t, *jsonrpc, input)
	var inputErr *extract.InputError
	if errors.As(err, &inputErr) {
		return usagef("%s", inputErr.Error())
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdio.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// readInput reads a file (or stdin when name is "" or "-") up to max bytes;
// a larger input is a usage error, never read whole.
func readInput(name string, stdin io.Reader, max int) ([]byte, error) {
	r := stdin
	if name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usagef("%v", err)
		}
		defer f.Close()
		r = f
	}
	if r == nil {
		return nil, usagef("no input")
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, usagef("reading input: %v", err)
	}
	if len(b) > max {
		return nil, usagef("input is over %d bytes", max)
	}
	if len(b) == 0 {
		return nil, usagef("input is empty")
	}
	return b, nil
}
