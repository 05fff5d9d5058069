package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
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

// schedctlBatch explains scenarios with `schedctl simulate --explain -o json --batch`
// processes, each explaining scenario after scenario: one path written to its stdin, one line
// read back, the explain document or {"error": ...}. Starting schedctl, loading its plugin
// libraries and its config cost more than explaining a small scenario, and a process pays for
// them once instead of once per scenario; schedctl gives every scenario a fresh host all the
// same. A process serves one scenario at a time, so there are as many as scenarios explained
// at once (--parallel). One that dies, answers with something that is not one line of JSON or
// overruns the timeout is killed and its scenario is a ToolError, as a failed run was; the
// next scenario starts a new process.
type schedctlBatch struct {
	args    []string // the command line, schedctl first
	timeout time.Duration

	mu   sync.Mutex
	idle []*batchProcess
}

func newSchedctlBatch(schedctl, pluginDir string, timeout time.Duration) *schedctlBatch {
	args := []string{schedctl, "simulate", "--explain", "-o", "json", "--batch"}
	if pluginDir != "" {
		args = append(args, "--plugin-dir", pluginDir)
	}
	return &schedctlBatch{args: args, timeout: timeout}
}

// batchProcess is one running `schedctl simulate --batch`.
type batchProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailWriter
	lines  chan []byte   // stdout, a line at a time, from read
	quit   chan struct{} // closed by kill: read stops handing lines over
	done   chan struct{} // closed by read once the process has exited
	err    error         // how it exited; set before done is closed
}

// Explain is the schedhost Side.
func (b *schedctlBatch) Explain(ctx context.Context, path string) (*oracle.Document, error) {
	p, err := b.take()
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s, given %s: %s", strings.Join(b.args, " "), path, fmt.Sprintf(format, args...))
	}
	if _, err := io.WriteString(p.stdin, path+"\n"); err != nil {
		p.kill()
		<-p.done
		return nil, fail("%v (%v)\n%s", p.err, err, indent(p.stderr.tail()))
	}
	timer := time.NewTimer(b.timeout)
	defer timer.Stop()
	select {
	case line := <-p.lines:
		if !json.Valid(line) {
			// Whatever printed it, the next line may belong to this scenario: the process
			// cannot be trusted with another one.
			p.kill()
			return nil, fail("the answer is not one line of JSON: %s", tail(string(line), 400))
		}
		b.put(p)
		var answer struct {
			Error *string `json:"error"`
		}
		if err := json.Unmarshal(line, &answer); err == nil && answer.Error != nil {
			return nil, fail("refused\n%s", indent(*answer.Error))
		}
		doc, err := decodeDocument(line)
		if err != nil {
			return nil, fail("%v", err)
		}
		return doc, nil
	case <-p.done:
		return nil, fail("%v\n%s", p.err, indent(p.stderr.tail()))
	case <-timer.C:
		p.kill()
		return nil, fail("timed out after %v", b.timeout)
	case <-ctx.Done():
		p.kill()
		return nil, fail("%v", ctx.Err())
	}
}

// take returns an idle process, or starts one.
func (b *schedctlBatch) take() (*batchProcess, error) {
	b.mu.Lock()
	if n := len(b.idle); n > 0 {
		p := b.idle[n-1]
		b.idle = b.idle[:n-1]
		b.mu.Unlock()
		return p, nil
	}
	b.mu.Unlock()
	cmd := exec.Command(b.args[0], b.args[1:]...)
	p := &batchProcess{
		cmd:    cmd,
		stderr: &tailWriter{max: 8000},
		lines:  make(chan []byte),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(b.args, " "), err)
	}
	p.stdin = stdin
	go p.read(stdout)
	return p, nil
}

// put makes p available to the next scenario.
func (b *schedctlBatch) put(p *batchProcess) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.idle = append(b.idle, p)
}

// Close ends the idle processes: their stdin closes, which ends a batch. One that has not
// exited after a few seconds is killed.
func (b *schedctlBatch) Close() {
	b.mu.Lock()
	idle := b.idle
	b.idle = nil
	b.mu.Unlock()
	for _, p := range idle {
		p.stdin.Close()
	}
	deadline := time.After(5 * time.Second)
	for _, p := range idle {
		select {
		case <-p.done:
		case <-deadline:
			p.kill()
		}
	}
}

// read hands the process's stdout over a line at a time until it ends, then waits for the
// process. A last line without its newline is an answer cut short, not an answer.
func (p *batchProcess) read(stdout io.Reader) {
	defer close(p.done)
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		select {
		case p.lines <- line:
		case <-p.quit:
		}
	}
	p.err = p.cmd.Wait()
}

// kill ends the process without waiting for it; read reaps it.
func (p *batchProcess) kill() {
	select {
	case <-p.quit:
		return
	default:
	}
	close(p.quit)
	p.cmd.Process.Kill()
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	if len(w.buf) > w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
	}
	return len(b), nil
}

func (w *tailWriter) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return tail(string(w.buf), 4000)
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
