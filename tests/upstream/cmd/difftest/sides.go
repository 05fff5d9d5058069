package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"

	"schedhost.test/upstream/oracle"
)

// Side explains one scenario file: it reads the manifests at path and returns the explain
// document. Both implementations are Sides, so the comparison and the shrinker can be tested
// with fakes.
type Side func(ctx context.Context, path string) (*oracle.Document, error)

// ToolError is a side that failed to produce a document: it crashed, refused the input or
// printed something that is not the document. It is not a difference; difftest reports it
// apart and exits 2.
type ToolError struct {
	Side string // "schedhost" or "upstream"
	Err  error
}

func (e *ToolError) Error() string { return e.Side + ": " + e.Err.Error() }
func (e *ToolError) Unwrap() error { return e.Err }

// schedctlSide runs `schedctl simulate --explain -o json -f FILE` as a process per scenario.
func schedctlSide(schedctl, pluginDir string, timeout time.Duration) Side {
	return func(ctx context.Context, path string) (*oracle.Document, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		args := []string{"simulate", "--explain", "-o", "json", "-f", path}
		if pluginDir != "" {
			args = append(args, "--plugin-dir", pluginDir)
		}
		cmd := exec.CommandContext(ctx, schedctl, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				err = fmt.Errorf("timed out after %v", timeout)
			}
			return nil, fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, indent(tail(stderr.String(), 4000)))
		}
		return decodeDocument(stdout.Bytes())
	}
}

// decodeDocument reads an explain document strictly: a field the Go types do not know means
// the two sides no longer print the same schema, which no field comparison would notice.
func decodeDocument(b []byte) (*oracle.Document, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var doc oracle.Document
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("output is not an explain document: %w: %s", err, tail(string(b), 400))
	}
	if dec.More() {
		return nil, errors.New("output has more than one JSON document")
	}
	return &doc, nil
}

// oracleSide runs upstream's framework in-process on the file, decoded by the oracle's own
// decoder so that it reads the bytes schedctl reads. A panic is the oracle's failure, not
// difftest's.
func oracleSide(ctx context.Context, path string) (doc *oracle.Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, indent(tail(string(debug.Stack()), 4000)))
		}
	}()
	objs, err := oracle.Decode([]string{path})
	if err != nil {
		return nil, err
	}
	return oracle.Explain(objs)
}

func tail(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func indent(s string) string {
	if s == "" {
		return "  (no output)"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
