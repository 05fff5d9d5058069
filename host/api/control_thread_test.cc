#include "host/api/control_thread.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

namespace schedhost::api {
namespace {

using namespace std::chrono_literals;

// Probe reports the thread its destructor ran on.
struct Probe {
  explicit Probe(std::promise<std::thread::id>* destroyed) : destroyed(destroyed) {}
  ~Probe() { destroyed->set_value(std::this_thread::get_id()); }
  std::promise<std::thread::id>* destroyed;
};

TEST(ControlThreadTest, RunExecutesThereAndReturnsOrRethrows) {
  auto control = ControlThread::Create();
  EXPECT_NE(control->id(), std::this_thread::get_id());
  EXPECT_FALSE(control->OnThread());
  EXPECT_EQ(control->Run([] { return std::this_thread::get_id(); }), control->id());
  EXPECT_EQ(control->Run([] { return 41 + 1; }), 42);
  EXPECT_THROW(
      {
        try {
          control->Run([]() -> int { throw std::invalid_argument("bad args"); });
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "bad args");
          throw;
        }
      },
      std::invalid_argument);
  // A task may Run another without deadlocking: it runs inline.
  EXPECT_EQ(control->Run([&] { return control->Run([] { return std::this_thread::get_id(); }); }),
            control->id());
}

TEST(ControlThreadTest, TasksRunInTheOrderTheyWerePosted) {
  auto control = ControlThread::Create();
  std::vector<int> seen;  // only the control thread writes it
  for (int i = 0; i < 200; ++i) control->Post([&seen, i] { seen.push_back(i); });
  control->Run([] { return 0; });
  ASSERT_EQ(seen.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i);
}

TEST(ControlThreadTest, AnAdoptedObjectIsDestroyedThereWhoeverLetsGoLast) {
  auto control = ControlThread::Create();
  for (bool from_other_thread : {false, true}) {
    std::promise<std::thread::id> destroyed;
    std::future<std::thread::id> id = destroyed.get_future();
    std::shared_ptr<const Probe> probe = control->Adopt(std::make_shared<const Probe>(&destroyed));
    std::shared_ptr<const Probe> copy = probe;
    probe.reset();
    EXPECT_EQ(id.wait_for(50ms), std::future_status::timeout)
        << "destroyed while a copy still holds it";
    if (from_other_thread) {
      std::thread([copy = std::move(copy)]() mutable { copy.reset(); }).join();
    } else {
      copy.reset();
    }
    ASSERT_EQ(id.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(id.get(), control->id());
  }
}

TEST(ControlThreadTest, TheDestructorRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    auto control = ControlThread::Create();
    for (int i = 0; i < 20; ++i) {
      control->Post([&ran] {
        std::this_thread::sleep_for(1ms);
        ran.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(ran.load(), 20);
}

TEST(ControlThreadTest, AnAdoptedObjectKeepsTheThreadUntilItGoes) {
  std::promise<std::thread::id> destroyed;
  auto control = ControlThread::Create();
  const std::thread::id control_id = control->id();
  std::shared_ptr<Probe> probe = control->Adopt(std::make_shared<Probe>(&destroyed));
  control.reset();  // the host is gone; the object is not
  probe.reset();
  std::future<std::thread::id> id = destroyed.get_future();
  ASSERT_EQ(id.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(id.get(), control_id);
}

TEST(ControlThreadTest, TheLastOwnerMayLetGoOnTheControlThreadItself) {
  std::promise<std::thread::id> destroyed;
  std::promise<void> go;
  std::shared_future<void> start = go.get_future().share();
  auto control = ControlThread::Create();
  const std::thread::id control_id = control->id();
  std::shared_ptr<Probe> probe = control->Adopt(std::make_shared<Probe>(&destroyed));
  // The task holds the only reference once this thread has let go of both: releasing it there
  // queues the destroy and drops the last owner of the ControlThread on its own thread.
  control->Post([start, probe = std::move(probe)]() mutable {
    start.wait();
    probe.reset();
  });
  control.reset();  // Post's deleter keeps it alive through probe
  go.set_value();
  std::future<std::thread::id> id = destroyed.get_future();
  ASSERT_EQ(id.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(id.get(), control_id);
}

TEST(ControlThreadTest, ExceptionsOfPostedTasksAreLoggedAndTheThreadGoesOn) {
  auto control = ControlThread::Create();
  control->Post([] { throw std::runtime_error("destroy failed"); });
  control->Post([] { throw 7; });
  EXPECT_EQ(control->Run([] { return 1; }), 1);
}

}  // namespace
}  // namespace schedhost::api
