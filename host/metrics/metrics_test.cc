// The text exposition format (exact output), label checks, callbacks, and adds from many threads.
#include "host/metrics/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "host/metrics/scheduler_metrics.h"

namespace schedhost::metrics {
namespace {

TEST(MetricsRender, CounterWithoutLabels) {
  Registry r;
  Counter& c = r.AddCounter("jobs_total", "Jobs done.", {}).With({});
  c.Inc();
  c.Inc(41);
  EXPECT_EQ(r.Render(),
            "# HELP jobs_total Jobs done.\n"
            "# TYPE jobs_total counter\n"
            "jobs_total 42\n");
}

TEST(MetricsRender, LabelledGaugeSortedByLabelValues) {
  Registry r;
  GaugeFamily& g =
      r.AddGauge("temp_celsius", "Temperature.\nSecond line \\ here.", {"room", "floor"});
  g.With({"kitchen", "1"}).Set(21.5);
  g.With({"bath", "2"}).Set(-3);
  g.With({"bath", "2"}).Add(1);
  EXPECT_EQ(r.Render(),
            "# HELP temp_celsius Temperature.\\nSecond line \\\\ here.\n"
            "# TYPE temp_celsius gauge\n"
            "temp_celsius{room=\"bath\",floor=\"2\"} -2\n"
            "temp_celsius{room=\"kitchen\",floor=\"1\"} 21.5\n");
}

TEST(MetricsRender, HistogramBucketsAreCumulativeWithInfSumAndCountAndEscapedLabels) {
  Registry r;
  HistogramFamily& h = r.AddHistogram("wait_seconds", "Waits.", {"who"}, {0.001, 0.5, 2});
  Histogram& odd = h.With({"a \"quoted\" \\ name\nx"});
  odd.Observe(0.001);  // on a bound: counted in le=0.001 (upper bounds are inclusive)
  odd.Observe(0.25);
  odd.Observe(0.25);
  odd.Observe(100);  // only +Inf
  EXPECT_EQ(r.Render(),
            "# HELP wait_seconds Waits.\n"
            "# TYPE wait_seconds histogram\n"
            "wait_seconds_bucket{who=\"a \\\"quoted\\\" \\\\ name\\nx\",le=\"0.001\"} 1\n"
            "wait_seconds_bucket{who=\"a \\\"quoted\\\" \\\\ name\\nx\",le=\"0.5\"} 3\n"
            "wait_seconds_bucket{who=\"a \\\"quoted\\\" \\\\ name\\nx\",le=\"2\"} 3\n"
            "wait_seconds_bucket{who=\"a \\\"quoted\\\" \\\\ name\\nx\",le=\"+Inf\"} 4\n"
            "wait_seconds_sum{who=\"a \\\"quoted\\\" \\\\ name\\nx\"} 100.501\n"
            "wait_seconds_count{who=\"a \\\"quoted\\\" \\\\ name\\nx\"} 4\n");
}

TEST(MetricsFamily, ForEachVisitsEveryChildInLabelOrder) {
  Registry r;
  HistogramFamily& h = r.AddHistogram("step_seconds", "Steps.", {"step"}, {1});
  h.With({"b"}).Observe(0.5);
  h.With({"a"}).Observe(2);
  h.With({"a"}).Observe(3);
  std::vector<std::string> seen;
  h.ForEach([&](const LabelValues& labels, const Histogram& child) {
    const HistogramSnapshot snap = child.Snapshot();
    seen.push_back(labels[0] + ":" + std::to_string(snap.count()) + ":" +
                   FormatValue(snap.sum));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"a:2:5", "b:1:0.5"}));
}

TEST(MetricsRender, FamiliesInRegistrationOrderAndEmptyFamilyKeepsItsHeader) {
  Registry r;
  r.AddCounter("b_total", "B.", {"x"});
  r.AddGauge("a", "A.", {}).With({}).Set(1);
  EXPECT_EQ(r.Render(),
            "# HELP b_total B.\n# TYPE b_total counter\n"
            "# HELP a A.\n# TYPE a gauge\na 1\n");
}

TEST(MetricsRender, GaugeCallbackRunsAtScrapeAndGoesAwayWithItsRegistration) {
  Registry r;
  double v = 1;
  {
    Registry::Registration reg = r.AddGaugeCallback("pending", "Pending.", {"queue"}, [&] {
      return std::vector<GaugeSample>{{{"b"}, v}, {{"a"}, 2 * v}};
    });
    v = 3;
    EXPECT_EQ(r.Render(),
              "# HELP pending Pending.\n# TYPE pending gauge\n"
              "pending{queue=\"a\"} 6\npending{queue=\"b\"} 3\n");
  }
  EXPECT_EQ(r.Render(), "");
}

TEST(MetricsRender, Values) {
  EXPECT_EQ(FormatValue(0.00001), "1e-05");
  EXPECT_EQ(FormatValue(16.384), "16.384");
  EXPECT_EQ(FormatValue(3), "3");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

TEST(MetricsRegistry, RefusesBadNamesDuplicatesWrongArityAndUnsortedBounds) {
  Registry r;
  r.AddCounter("ok_total", "x", {"a"});
  EXPECT_THROW(r.AddCounter("ok_total", "x", {}), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("9lives", "x", {}), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("has space", "x", {}), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("g", "x", {"le"}), std::invalid_argument);
  EXPECT_THROW(r.AddGauge("g", "x", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(r.AddHistogram("h", "x", {}, {1, 1}), std::invalid_argument);
  CounterFamily& f = r.AddCounter("two_total", "x", {"a", "b"});
  EXPECT_THROW(f.With({"only one"}), std::invalid_argument);
  EXPECT_EQ(&f.With({"1", "2"}), &f.With({"1", "2"}));  // one child per label set
}

TEST(MetricsBuckets, UpstreamExponentialBuckets) {
  const std::vector<double> b = ExponentialBuckets(0.001, 2, 15);
  ASSERT_EQ(b.size(), 15u);
  EXPECT_DOUBLE_EQ(b.front(), 0.001);
  EXPECT_DOUBLE_EQ(b.back(), 16.384);
}

TEST(MetricsConcurrent, IncrementsAndObservationsFromManyThreadsAllCount) {
  Registry r;
  Counter& c = r.AddCounter("n_total", "x", {}).With({});
  Histogram& h = r.AddHistogram("h", "x", {}, {0.5}).With({});
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        c.Inc();
        h.Observe(t % 2 == 0 ? 0.25 : 1.0);
        if (i % 5000 == 0) (void)r.Render();  // scrapes race the adds
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(c.Value(), uint64_t{kThreads} * kPerThread);
  const HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.count(), uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s.cumulative[0], uint64_t{kThreads / 2} * kPerThread);
  EXPECT_DOUBLE_EQ(s.sum, (kThreads / 2) * kPerThread * 1.25);
}

TEST(SchedulerMetrics, IncomingPodsAndReloadsCountOnlyWhatHappened) {
  CountIncomingPod("active", "PodAdd");
  CountIncomingPod("active", "PodAdd");
  CountIncomingPod("backoff", "SomeNewEvent");
  CountConfigReload(false);
  const std::string text = DefaultRegistry().Render();
  EXPECT_NE(text.find("scheduler_queue_incoming_pods_total{queue=\"active\",event=\"PodAdd\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{queue=\"backoff\",event=\"SomeNewEvent\"} 1\n"), std::string::npos);
  EXPECT_EQ(text.find("event=\"NodeAdd\""), std::string::npos);
  EXPECT_NE(text.find("schedhost_config_reloads_total{result=\"failure\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE scheduler_plugin_execution_duration_seconds histogram\n"),
            std::string::npos);
}

TEST(SchedulerMetrics, SamplesAboutOneCycleInTen) {
  int sampled = 0;
  for (int i = 0; i < 10000; ++i) sampled += SamplePluginMetrics() ? 1 : 0;
  EXPECT_GT(sampled, 700);
  EXPECT_LT(sampled, 1300);
}

}  // namespace
}  // namespace schedhost::metrics
