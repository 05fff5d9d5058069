package main

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// watcher is one watch apiServer serves. send never blocks (it runs under the clientset's lock,
// in the writer's request): events wait in an unbounded queue, and a goroutine of the watcher's
// own hands them to the reader in order, as kube-apiserver's watch cache buffers for a slow
// client (without ever closing it for being slow).
type watcher struct {
	namespace string
	onStop    func(*watcher)

	mu     sync.Mutex
	queue  []watch.Event
	wake   chan struct{}
	stop   chan struct{}
	once   sync.Once
	result chan watch.Event
}

var _ watch.Interface = (*watcher)(nil)

// newWatcher starts a watcher of namespace ("" for all); onStop runs once, when it stops.
func newWatcher(namespace string, onStop func(*watcher)) *watcher {
	w := &watcher{
		namespace: namespace,
		onStop:    onStop,
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		result:    make(chan watch.Event),
	}
	go w.run()
	return w
}

// send queues an event.
func (w *watcher) send(e watch.Event) {
	w.mu.Lock()
	w.queue = append(w.queue, e)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// run delivers the queue in batches until Stop, then closes the result channel (the reader's
// signal that the watch ended).
func (w *watcher) run() {
	defer close(w.result)
	var batch []watch.Event
	for {
		w.mu.Lock()
		batch, w.queue = w.queue, batch[:0]
		w.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-w.wake:
				continue
			case <-w.stop:
				return
			}
		}
		for i := range batch {
			select {
			case w.result <- batch[i]:
			case <-w.stop:
				return
			}
			batch[i] = watch.Event{} // the reader owns the object now
		}
	}
}

// Stop implements watch.Interface.
func (w *watcher) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.onStop(w)
	})
}

// ResultChan implements watch.Interface.
func (w *watcher) ResultChan() <-chan watch.Event {
	return w.result
}
