// ControlThread: the one thread a host runs plugin lifecycle calls on (docs/abi.md rule 9).
//
// Creating plugin instances (building a ProfileSet: negotiate, create) and destroying them
// (a replaced set's destroy callbacks, then dlclose) happen here, in the order they were asked
// for, so a plugin's create and destroy never race each other or run on a scheduling or binding
// thread. Run() executes a task here and waits for its result; Adopt() wraps a shared_ptr so
// that whichever thread lets go of the object last, the object itself is destroyed here.
//
// Thread-safe. The destructor runs what is queued, then joins. A task queued after the thread
// ended (an adopted object outliving the host) runs on the caller's thread instead.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

namespace schedhost::api {

class ControlThread : public std::enable_shared_from_this<ControlThread> {
 public:
  // Create makes one; it must be owned by a shared_ptr (Adopt's deleters keep it alive).
  static std::shared_ptr<ControlThread> Create();
  ~ControlThread();
  ControlThread(const ControlThread&) = delete;
  ControlThread& operator=(const ControlThread&) = delete;

  // Run executes f on the control thread and returns its result (or rethrows its exception).
  // Called on the control thread itself, it runs f inline (a task may run another).
  template <typename F>
  std::invoke_result_t<F> Run(F f) {
    using R = std::invoke_result_t<F>;
    if (OnThread()) return f();
    std::packaged_task<R()> task(std::move(f));
    std::future<R> result = task.get_future();
    Post([&task] { task(); });
    return result.get();  // the task lives on this stack until it has run
  }

  // Post queues f to run on the control thread and returns at once.
  void Post(std::function<void()> f);

  // Adopt returns a pointer to the same object whose last release destroys the object on the
  // control thread (the releasing thread only queues it).
  template <typename T>
  std::shared_ptr<T> Adopt(std::shared_ptr<T> owned) {
    T* raw = owned.get();
    std::shared_ptr<ControlThread> self = shared_from_this();
    return std::shared_ptr<T>(raw, [self, owned = std::move(owned)](T*) mutable {
      // The deleter may be copied, but only the copy inside the control block ever runs.
      self->Post([object = std::move(owned)]() mutable { object.reset(); });
    });
  }

  // OnThread is true on the control thread.
  bool OnThread() const { return std::this_thread::get_id() == id_; }
  std::thread::id id() const { return id_; }

 private:
  // State is shared with the thread, so the loop may outlive this object: when the last owner
  // lets go on the control thread itself, the destructor cannot join and detaches instead.
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;  // guarded by mu
    bool stopping = false;                    // guarded by mu
    bool ended = false;                       // guarded by mu: the loop has returned
  };

  ControlThread();
  static void Loop(const std::shared_ptr<State>& state);

  std::shared_ptr<State> state_;
  std::thread thread_;
  std::thread::id id_;
};

}  // namespace schedhost::api
