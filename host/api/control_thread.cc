#include "host/api/control_thread.h"

#include <spdlog/spdlog.h>

#include <exception>

namespace schedhost::api {

std::shared_ptr<ControlThread> ControlThread::Create() {
  return std::shared_ptr<ControlThread>(new ControlThread());
}

ControlThread::ControlThread()
    : state_(std::make_shared<State>()),
      thread_([state = state_] { Loop(state); }),
      id_(thread_.get_id()) {}

ControlThread::~ControlThread() {
  {
    std::lock_guard lock(state_->mu);
    state_->stopping = true;
  }
  state_->cv.notify_all();
  if (OnThread()) {
    thread_.detach();  // the loop finishes the queue after this task and ends by itself
  } else {
    thread_.join();
  }
}

void ControlThread::Post(std::function<void()> f) {
  {
    std::lock_guard lock(state_->mu);
    if (!state_->ended) {
      state_->queue.push_back(std::move(f));
      state_->cv.notify_one();
      return;
    }
  }
  f();  // the thread is gone: nothing else can run lifecycle calls any more
}

void ControlThread::Loop(const std::shared_ptr<State>& state) {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(state->mu);
      state->cv.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
      if (state->queue.empty()) {
        state->ended = true;
        return;
      }
      task = std::move(state->queue.front());
      state->queue.pop_front();
    }
    // Run() tasks carry their exceptions to the caller; a posted task has no caller left, so
    // what escapes it (a destroy that threw past the ABI's guard) is logged, not fatal.
    try {
      task();
    } catch (const std::exception& e) {
      spdlog::error("control thread: a task failed: {}", e.what());
    } catch (...) {
      spdlog::error("control thread: a task failed with an unknown exception");
    }
    task = nullptr;  // what the task captured goes here too, not after the next wait
  }
}

}  // namespace schedhost::api
