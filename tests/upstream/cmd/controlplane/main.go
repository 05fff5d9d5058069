// Command controlplane starts and supervises a local Kubernetes control plane for schedhost's
// tests: one etcd and one kube-apiserver on loopback, fresh credentials, and a scheduler user
// with kube-scheduler's permissions. It prints one JSON line when the API server serves, then
// answers one JSON line per command read from stdin:
//
//	restart-apiserver   kill kube-apiserver and start it again on the same port
//	compact             compact etcd at its current revision ({"ok":true,"revision":N})
//	stop                stop everything and exit
//
// EOF on stdin, SIGTERM or SIGINT also stop it. The work dir is removed at exit unless --keep.
//
//	controlplane --bin-dir build/dev/upstream/bin [--dir DIR] [--keep] [--foreground]
//	             [--apiserver-arg=--FLAG=VALUE]...
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.SetPrefix("controlplane: ")
	log.SetOutput(os.Stderr)

	var cfg config
	var foreground bool
	flag.StringVar(&cfg.binDir, "bin-dir", "", "directory holding the etcd and kube-apiserver binaries (default: this program's directory)")
	flag.StringVar(&cfg.dir, "dir", "", "work directory for credentials, data and logs (default: a new temporary directory)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the work directory at exit")
	flag.StringVar(&cfg.leaseName, "lease-name", "schedhost", "leader-election lease in kube-system the user may take")
	flag.StringVar(&cfg.user, "user", "schedhost", "user name of the scheduler's client certificate")
	flag.Func("apiserver-arg", "one more kube-apiserver flag, after the defaults (a flag given twice takes the later value); repeatable", func(arg string) error {
		if !strings.HasPrefix(arg, "--") {
			return fmt.Errorf("%q is not a flag (--name=value)", arg)
		}
		cfg.apiserverArgs = append(cfg.apiserverArgs, arg)
		return nil
	})
	flag.Func("controllers", "kube-controller-manager controllers to run, comma-separated (default: no kube-controller-manager)", func(list string) error {
		for _, name := range strings.Split(list, ",") {
			if name = strings.TrimSpace(name); name != "" {
				cfg.controllers = append(cfg.controllers, name)
			}
		}
		return nil
	})
	flag.BoolVar(&cfg.kubeScheduler, "kube-scheduler", false, "run upstream kube-scheduler (default profile) beside the API server, as the admin")
	flag.BoolVar(&foreground, "foreground", false, "run until SIGINT or SIGTERM instead of reading commands from stdin")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "controlplane: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(cfg, foreground))
}

// run starts the control plane, serves until told to stop and cleans up; it returns the exit
// status.
func run(cfg config, foreground bool) int {
	// Before the work dir exists, so that no signal can leave it behind.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	// A reader that went away must not kill this program before it has cleaned up: writes to
	// a closed stdout or stderr fail instead.
	signal.Ignore(syscall.SIGPIPE)
	if err := resolveDirs(&cfg); err != nil {
		log.Printf("%v", err)
		return 1
	}
	defer func() {
		if cfg.keep {
			log.Printf("kept %s", cfg.dir)
			return
		}
		if err := os.RemoveAll(cfg.dir); err != nil {
			log.Printf("removing %s: %v", cfg.dir, err)
		}
	}()

	// A signal during startup cancels it; the watcher is stopped, and waited for, before the
	// command loop takes the signals over, so none is lost in between.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopWatching, watcherDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watcherDone)
		select {
		case <-signals:
			cancel()
		case <-stopWatching:
		}
	}()

	start := time.Now()
	c, err := startCluster(ctx, cfg)
	close(stopWatching)
	<-watcherDone
	if err != nil {
		if ctx.Err() != nil {
			log.Printf("interrupted while starting: stopped")
		} else {
			log.Printf("cannot start the control plane: %v", err)
		}
		return 1
	}
	// A kept work dir gets components that shut down cleanly; otherwise their data is about to
	// be removed, so they are killed at once.
	grace := time.Duration(0)
	if cfg.keep {
		grace = stopGrace
	}
	defer c.stop(grace)
	if ctx.Err() != nil {
		log.Printf("interrupted while starting: stopped")
		return 1
	}
	ctx = context.Background()
	log.Printf("ready in %.1fs: %s (etcd %s, work dir %s)", time.Since(start).Seconds(), c.server, c.etcdURL, cfg.dir)
	if err := writeJSON(c.ready()); err != nil {
		log.Printf("writing the ready line: %v", err)
		return 1
	}

	if foreground {
		sig := <-signals
		log.Printf("%v: stopping", sig)
		return 0
	}
	return serve(ctx, c, signals)
}

// resolveDirs fills in the defaults of --bin-dir and --dir and makes paths absolute, since the
// children and the ready line's readers run elsewhere.
func resolveDirs(cfg *config) error {
	if cfg.binDir == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("--bin-dir not given and this program's path is unknown: %w", err)
		}
		cfg.binDir = filepath.Dir(self)
	}
	binDir, err := filepath.Abs(cfg.binDir)
	if err != nil {
		return err
	}
	cfg.binDir = binDir
	if cfg.dir == "" {
		if cfg.dir, err = os.MkdirTemp("", "schedhost-controlplane-"); err != nil {
			return fmt.Errorf("work dir: %w", err)
		}
	} else if err := os.MkdirAll(cfg.dir, 0o700); err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	cfg.dir, err = filepath.Abs(cfg.dir)
	return err
}

// reply is the answer to one command.
type reply struct {
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`
	Revision int64  `json:"revision,omitempty"`
	Server   string `json:"server,omitempty"`
	PID      int    `json:"apiserver_pid,omitempty"`
}

// serve answers commands from stdin until "stop", EOF or a signal, and returns the exit status.
func serve(ctx context.Context, c *cluster, signals <-chan os.Signal) int {
	lines := make(chan string)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(os.Stdin)
		for scanner.Scan() {
			lines <- strings.TrimSpace(scanner.Text())
		}
	}()
	for {
		select {
		case sig := <-signals:
			log.Printf("%v: stopping", sig)
			return 0
		case line, ok := <-lines:
			if !ok {
				return 0 // EOF: the caller is gone or done
			}
			if line == "" {
				continue
			}
			r := execute(ctx, c, line)
			if err := writeJSON(r); err != nil {
				log.Printf("writing a reply: %v", err)
				return 1
			}
			if line == "stop" {
				return 0
			}
		}
	}
}

// execute runs one command.
func execute(ctx context.Context, c *cluster, command string) reply {
	if rest, ok := strings.CutPrefix(command, "etcd-put "); ok {
		key, value, ok := strings.Cut(rest, " ")
		if !ok || key == "" || value == "" {
			return reply{Error: "etcd-put takes a key and a value: etcd-put KEY VALUE"}
		}
		rev, err := c.put(ctx, key, value)
		if err != nil {
			return reply{Error: err.Error()}
		}
		return reply{OK: true, Revision: rev}
	}
	switch command {
	case "restart-apiserver":
		start := time.Now()
		if err := c.restartAPIServer(ctx); err != nil {
			log.Printf("restart-apiserver: %v", err)
			return reply{Error: err.Error()}
		}
		log.Printf("kube-apiserver restarted in %.1fs", time.Since(start).Seconds())
		return reply{OK: true, Server: c.server, PID: c.api.pid()}
	case "compact":
		rev, err := c.compact(ctx)
		if err != nil {
			return reply{Error: err.Error()}
		}
		return reply{OK: true, Revision: rev}
	case "stop":
		return reply{OK: true}
	default:
		return reply{Error: fmt.Sprintf("unknown command %q (restart-apiserver, compact, etcd-put KEY VALUE, stop)", command)}
	}
}

// writeJSON prints v as one line on stdout.
func writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(data, '\n'))
	return err
}
