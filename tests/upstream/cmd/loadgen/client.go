package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// clientFlags are the connection flags every subcommand that talks to the API server takes.
type clientFlags struct {
	kubeconfig string
	context    string
}

func (f *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (required; the admin's: loadgen creates nodes and reads /metrics)")
	fs.StringVar(&f.context, "context", "", "kubeconfig context (default: its current-context)")
}

// restConfig loads the kubeconfig with the client rate limit lifted and protobuf on the wire,
// as kube-scheduler's own client uses.
func (f *clientFlags) restConfig() (*rest.Config, error) {
	if f.kubeconfig == "" {
		return nil, errors.New("--kubeconfig is required")
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: f.kubeconfig}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", f.kubeconfig, err)
	}
	cfg.QPS = -1 // no client-side rate limiter
	cfg.Burst = 0
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = "loadgen"
	return cfg, nil
}

// clientset is restConfig's typed client.
func (f *clientFlags) clientset() (*kubernetes.Clientset, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// retryAttempts bounds the tries of one request that fails transiently.
const retryAttempts = 8

// transient reports whether err is worth retrying: the API server throttled, timed out or was
// briefly unavailable, or the connection broke.
func transient(err error) bool {
	var netErr net.Error
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsInternalError(err) || errors.As(err, &netErr)
}

// withRetry runs call until it succeeds, fails for good or retryAttempts tries have failed,
// backing off from 50 ms.
func withRetry(ctx context.Context, call func(context.Context) error) error {
	delay := 50 * time.Millisecond
	var err error
	for attempt := 0; attempt < retryAttempts; attempt++ {
		if err = call(ctx); err == nil || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 2*time.Second)
	}
	return err
}

// forEach calls fn(i) for every i in [0, n) on `parallel` goroutines and returns the first
// error; after an error no new index starts.
func forEach(ctx context.Context, n, parallel int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range max(1, min(parallel, n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		// The caller's context ended (cancel above only runs after an error).
		first = ctx.Err()
	}
	return first
}
