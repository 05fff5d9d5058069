package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Startup budgets. kube-apiserver needs a few seconds on a loaded two-core machine; the
// caller (the C++ fixture) allows two minutes for the whole start.
const (
	etcdReadyTimeout      = 30 * time.Second
	apiserverReadyTimeout = 90 * time.Second
	pollInterval          = 100 * time.Millisecond
	portAttempts          = 3
)

// config is what the flags set.
type config struct {
	binDir    string
	dir       string
	keep      bool
	leaseName string
	user      string
	// apiserverArgs come after the defaults of apiserverArgs(), so they win.
	apiserverArgs []string
	// controllers, when set, are the kube-controller-manager controllers to run beside the API
	// server (e.g. persistentvolume-binder-controller for volume scheduling).
	controllers []string
	// kubeScheduler runs upstream kube-scheduler beside them (default profile, schedulerName
	// default-scheduler), for tests that compare it with schedhost on one control plane.
	kubeScheduler bool
}

// cluster is one running etcd and kube-apiserver, with the files made for them.
type cluster struct {
	cfg   config
	pki   *pki
	etcd  *component
	api   *component
	kcm   *component // kube-controller-manager, when cfg.controllers is set
	ks    *component // kube-scheduler, when cfg.kubeScheduler is set
	admin *kubernetes.Clientset

	etcdURL         string
	server          string
	apiPort         int
	adminKubeconfig string
	userKubeconfig  string
	readyClient     *http.Client // the admin's TLS identity, for /readyz
}

// readyLine is the JSON line printed once the control plane serves.
type readyLine struct {
	Server          string `json:"server"`
	Dir             string `json:"dir"`
	CA              string `json:"ca"`
	AdminKubeconfig string `json:"admin_kubeconfig"`
	UserKubeconfig  string `json:"user_kubeconfig"`
	Etcd            string `json:"etcd"`
	APIServerPID    int    `json:"apiserver_pid"`
	EtcdPID         int    `json:"etcd_pid"`
}

// startCluster makes the credentials, starts etcd and kube-apiserver, grants cfg.user the
// scheduler's permissions and returns once they are in effect. On error whatever started has
// been stopped.
func startCluster(ctx context.Context, cfg config) (_ *cluster, err error) {
	c := &cluster{
		cfg:             cfg,
		adminKubeconfig: filepath.Join(cfg.dir, "admin.kubeconfig"),
		userKubeconfig:  filepath.Join(cfg.dir, cfg.user+".kubeconfig"),
	}
	defer func() {
		if err != nil {
			c.stop(0)
		}
	}()
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(cfg.binDir, bin)); err != nil {
			return nil, fmt.Errorf("%s: %w (--bin-dir is %q)", bin, err, cfg.binDir)
		}
	}
	if c.pki, err = newPKI(cfg.dir, cfg.user); err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c.pki.ca.cert)
	adminTLS, err := tls.X509KeyPair(c.pki.admin.certPEM, c.pki.admin.keyPEM)
	if err != nil {
		return nil, fmt.Errorf("admin certificate: %w", err)
	}
	c.readyClient = &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, Certificates: []tls.Certificate{adminTLS}}},
	}

	if err := c.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := c.startAPIServer(ctx, 0); err != nil {
		return nil, err
	}
	if err := writeKubeconfig(c.adminKubeconfig, "admin", c.server, c.pki.ca, c.pki.admin); err != nil {
		return nil, fmt.Errorf("admin kubeconfig: %w", err)
	}
	if err := writeKubeconfig(c.userKubeconfig, cfg.user, c.server, c.pki.ca, c.pki.user); err != nil {
		return nil, fmt.Errorf("%s kubeconfig: %w", cfg.user, err)
	}
	restConfig, err := clientcmd.BuildConfigFromFlags("", c.adminKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("admin kubeconfig: %w", err)
	}
	if c.admin, err = kubernetes.NewForConfig(restConfig); err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	if err := grantScheduler(ctx, c.admin, cfg.user, cfg.leaseName); err != nil {
		return nil, fmt.Errorf("kube-apiserver: granting %s the scheduler's permissions: %w", cfg.user, err)
	}
	if len(cfg.controllers) > 0 {
		if err := c.startControllerManager(ctx); err != nil {
			return nil, err
		}
	}
	if cfg.kubeScheduler {
		c.ks = &component{
			name:    "kube-scheduler",
			path:    filepath.Join(cfg.binDir, "kube-scheduler"),
			logPath: filepath.Join(cfg.dir, "kube-scheduler.log"),
			args: []string{
				"--kubeconfig=" + c.adminKubeconfig,
				"--leader-elect=false",
				"--secure-port=0",
				"--v=2",
			},
		}
		if err := c.startAndSettle(ctx, c.ks); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// startAndSettle starts comp and waits until it has run for a moment (a bad flag or
// kubeconfig ends it at once).
func (c *cluster) startAndSettle(ctx context.Context, comp *component) error {
	if err := comp.start(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Second):
	}
	if !comp.running() {
		return comp.failure(comp.exitError())
	}
	return nil
}

// startControllerManager runs kube-controller-manager with cfg.controllers only, as the admin,
// without leader election or a serving port, and waits until it has run for a moment (a bad
// flag or kubeconfig ends it at once).
func (c *cluster) startControllerManager(ctx context.Context) error {
	c.kcm = &component{
		name:    "kube-controller-manager",
		path:    filepath.Join(c.cfg.binDir, "kube-controller-manager"),
		logPath: filepath.Join(c.cfg.dir, "kube-controller-manager.log"),
		args: []string{
			"--kubeconfig=" + c.adminKubeconfig,
			"--controllers=" + strings.Join(c.cfg.controllers, ","),
			"--leader-elect=false",
			"--secure-port=0",
			"--v=2",
		},
	}
	return c.startAndSettle(ctx, c.kcm)
}

// startEtcd starts a single-member etcd on two free loopback ports and waits for /health.
func (c *cluster) startEtcd(ctx context.Context) error {
	var lastErr error
	for range portAttempts {
		ports, err := freePorts(2)
		if err != nil {
			return fmt.Errorf("etcd: %w", err)
		}
		client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		c.etcd = &component{
			name:    "etcd",
			path:    filepath.Join(c.cfg.binDir, "etcd"),
			logPath: filepath.Join(c.cfg.dir, "etcd.log"),
			args: []string{
				"--name=controlplane",
				"--data-dir=" + filepath.Join(c.cfg.dir, "etcd-data"),
				"--listen-client-urls=" + client,
				"--advertise-client-urls=" + client,
				"--listen-peer-urls=" + peer,
				"--initial-advertise-peer-urls=" + peer,
				"--initial-cluster=controlplane=" + peer,
				"--unsafe-no-fsync",
				"--log-level=warn",
			},
		}
		if err := c.etcd.start(); err != nil {
			return err
		}
		err = c.waitReady(ctx, c.etcd, etcdReadyTimeout, func() bool {
			return etcdHealthy(ctx, client)
		})
		if err == nil {
			c.etcdURL = client
			return nil
		}
		lastErr = err
		inUse := c.etcd.addressInUse()
		c.etcd.stop(0)
		if !inUse {
			break
		}
		// A port was taken between freePorts and etcd's bind: the data dir may be half made.
		_ = os.RemoveAll(filepath.Join(c.cfg.dir, "etcd-data"))
	}
	return lastErr
}

// startAPIServer starts kube-apiserver on port (a free one when 0) and waits for /readyz.
func (c *cluster) startAPIServer(ctx context.Context, port int) error {
	attempts := portAttempts
	if port != 0 {
		attempts = 1 // a restart keeps its port: clients hold the address
	}
	var lastErr error
	for range attempts {
		p := port
		if p == 0 {
			ports, err := freePorts(1)
			if err != nil {
				return fmt.Errorf("kube-apiserver: %w", err)
			}
			p = ports[0]
		}
		c.api = &component{
			name:    "kube-apiserver",
			path:    filepath.Join(c.cfg.binDir, "kube-apiserver"),
			logPath: filepath.Join(c.cfg.dir, "kube-apiserver.log"),
			args:    c.apiserverArgs(p),
		}
		if err := c.api.start(); err != nil {
			return err
		}
		server := "https://127.0.0.1:" + strconv.Itoa(p)
		err := c.waitReady(ctx, c.api, apiserverReadyTimeout, func() bool {
			return c.apiserverReady(ctx, server)
		})
		if err == nil {
			c.server, c.apiPort = server, p
			return nil
		}
		lastErr = err
		inUse := c.api.addressInUse()
		c.api.stop(0)
		if !inUse {
			break
		}
	}
	return lastErr
}

// apiserverArgs is kube-apiserver's command line: defaults except what a lone loopback API
// server needs.
func (c *cluster) apiserverArgs(port int) []string {
	args := []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--etcd-servers=" + c.etcdURL,
		"--cert-dir=" + filepath.Join(c.cfg.dir, "apiserver-certs"),
		"--client-ca-file=" + c.pki.caFile,
		"--tls-cert-file=" + c.pki.apiserverCertFile,
		"--tls-private-key-file=" + c.pki.apiserverKeyFile,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + c.pki.saPublicKeyFile,
		"--service-account-signing-key-file=" + c.pki.saPrivateKeyFile,
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.96.0.0/16",
		// No controller-manager runs, so no namespace gets its default service account, which
		// this plugin would insist on for every pod.
		"--disable-admission-plugins=ServiceAccount",
		// Endpoints may not name a loopback address, so the reconciler of the `kubernetes`
		// service's endpoints would only log errors.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
	return append(args, c.cfg.apiserverArgs...)
}

// waitReady polls ready until it holds, comp exits, ctx ends or timeout passes.
func (c *cluster) waitReady(ctx context.Context, comp *component, timeout time.Duration, ready func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if ready() {
			return nil
		}
		select {
		case <-comp.exited:
			return comp.failure(comp.exitError())
		case <-ctx.Done():
			return comp.failure(fmt.Errorf("startup interrupted: %w", ctx.Err()))
		case <-deadline.C:
			return comp.failure(fmt.Errorf("not ready after %v", timeout))
		case <-tick.C:
		}
	}
}

// apiserverReady reports whether server's /readyz answers 200 to the admin.
func (c *cluster) apiserverReady(ctx context.Context, server string) bool {
	return httpOK(ctx, c.readyClient, server+"/readyz")
}

// etcdHealthy reports whether etcd's /health answers 200 (it answers 503 until it has a
// leader).
func etcdHealthy(ctx context.Context, url string) bool {
	return httpOK(ctx, &http.Client{Timeout: 2 * time.Second}, url+"/health")
}

func httpOK(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// restartAPIServer kills kube-apiserver outright (as a crash would) and starts it again on the
// same port.
func (c *cluster) restartAPIServer(ctx context.Context) error {
	c.api.stop(0)
	c.readyClient.CloseIdleConnections()
	return c.startAPIServer(ctx, c.apiPort)
}

// compact compacts etcd's history up to its current revision and returns that revision.
func (c *cluster) compact(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{c.etcdURL},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(), // its retries are not this program's news
	})
	if err != nil {
		return 0, fmt.Errorf("etcd: %w", err)
	}
	defer client.Close()
	resp, err := client.Get(ctx, "compact_rev_key", clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("etcd: reading the revision: %w", err)
	}
	rev := resp.Header.Revision
	if _, err := client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil &&
		!errors.Is(err, rpctypes.ErrCompacted) {
		return 0, fmt.Errorf("etcd: compacting at %d: %w", rev, err)
	}
	return rev, nil
}

// put writes value under key in etcd, behind kube-apiserver's back (no validation, no
// admission): what an object written by another version of the API server looks like to this
// one. Returns the revision of the write.
func (c *cluster) put(ctx context.Context, key, value string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{c.etcdURL},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return 0, fmt.Errorf("etcd: %w", err)
	}
	defer client.Close()
	resp, err := client.Put(ctx, key, value)
	if err != nil {
		return 0, fmt.Errorf("etcd: writing %s: %w", key, err)
	}
	return resp.Header.Revision, nil
}

// stop ends kube-apiserver, then etcd, each given grace to exit.
func (c *cluster) stop(grace time.Duration) {
	if c.ks != nil {
		c.ks.stop(grace)
	}
	if c.kcm != nil {
		c.kcm.stop(grace)
	}
	if c.api != nil {
		c.api.stop(grace)
	}
	if c.etcd != nil {
		c.etcd.stop(grace)
	}
}

// ready is the line announcing the running control plane.
func (c *cluster) ready() readyLine {
	return readyLine{
		Server:          c.server,
		Dir:             c.cfg.dir,
		CA:              c.pki.caFile,
		AdminKubeconfig: c.adminKubeconfig,
		UserKubeconfig:  c.userKubeconfig,
		Etcd:            c.etcdURL,
		APIServerPID:    c.api.pid(),
		EtcdPID:         c.etcd.pid(),
	}
}
