package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a component gets to exit after SIGTERM before it is killed.
const stopGrace = 5 * time.Second

// logTailBytes bounds the part of a component's log quoted in an error.
const logTailBytes = 4096

// component is one supervised child process: its command line, its log file and, while it
// runs, the process and a channel closed when it has exited.
type component struct {
	name    string
	path    string
	args    []string
	logPath string

	cmd    *exec.Cmd
	exited chan struct{}
	err    error // the exit status, valid once exited is closed
}

// start runs the component with its output appended to its log. The child gets its own
// process group and dies with this process (SIGKILL), so an aborted run leaves nothing behind.
func (c *component) start() error {
	logFile, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "=== controlplane: starting %s %s\n", c.path, strings.Join(c.args, " "))

	cmd := exec.Command(c.path, c.args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	onSpawnerThread(func() { err = cmd.Start() })
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	c.cmd = cmd
	c.exited = make(chan struct{})
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return nil
}

// pid is the running process's id, 0 when not started.
func (c *component) pid() int {
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// running reports whether the component was started and has not exited.
func (c *component) running() bool {
	if c.cmd == nil {
		return false
	}
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// spawnRequests feeds the one goroutine that starts children. Linux sends a child its death
// signal when the thread that forked it exits, not the process; that goroutine holds its
// thread for the program's lifetime, so the signal comes only when this program ends.
var spawnRequests = make(chan func())

func init() {
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the program
		for f := range spawnRequests {
			f()
		}
	}()
}

// onSpawnerThread runs f on the spawning thread and returns when it is done.
func onSpawnerThread(f func()) {
	done := make(chan struct{})
	spawnRequests <- func() {
		defer close(done)
		f()
	}
	<-done
}

// stop ends the component's process group: SIGTERM, then SIGKILL after grace (at once when
// grace is 0). It returns once the process has been reaped.
func (c *component) stop(grace time.Duration) {
	if c.cmd == nil {
		return
	}
	defer func() { c.cmd = nil }()
	if !c.running() {
		return
	}
	pgid := -c.cmd.Process.Pid
	if grace > 0 {
		_ = syscall.Kill(pgid, syscall.SIGTERM)
		select {
		case <-c.exited:
			return
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	<-c.exited
}

// failure wraps err with the component's name and the end of its log.
func (c *component) failure(err error) error {
	return fmt.Errorf("%s: %w\n--- last lines of its log (%s) ---\n%s", c.name, err, filepath.Base(c.logPath), c.logTail())
}

// exitError describes how the component ended, for a start that failed.
func (c *component) exitError() error {
	if c.err != nil {
		return fmt.Errorf("exited during startup (%v)", c.err)
	}
	return errors.New("exited during startup with status 0")
}

// logTail returns the last logTailBytes of the log, cut at a line start.
func (c *component) logTail() string {
	data, err := os.ReadFile(c.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read the log: %v)", err)
	}
	if len(data) > logTailBytes {
		data = data[len(data)-logTailBytes:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return string(data)
}

// addressInUse reports whether the component's log says a port it wanted was taken, which a
// retry on other ports can fix.
func (c *component) addressInUse() bool {
	return strings.Contains(c.logTail(), "address already in use")
}

// freePorts returns n distinct loopback ports that were free a moment ago. Another process
// may take one before the component binds it; callers retry on "address already in use".
func freePorts(n int) ([]int, error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
