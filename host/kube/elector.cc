#include "host/kube/elector.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <random>

#include "host/model/meta.h"
#include "host/model/uid_key.h"

namespace schedhost::kube {
namespace {

using Json = nlohmann::json;

// client-go's JitterFactor for a standby's retries: each waits retry_period × [1, 2.2).
constexpr double kJitterFactor = 1.2;

std::string StringField(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t IntField(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

LeaseRecord RecordOf(const Json& lease) {
  LeaseRecord record;
  auto spec = lease.find("spec");
  if (spec == lease.end() || !spec->is_object()) return record;
  record.holder = StringField(*spec, "holderIdentity");
  record.duration_seconds = IntField(*spec, "leaseDurationSeconds");
  record.acquire_time = StringField(*spec, "acquireTime");
  record.renew_time = StringField(*spec, "renewTime");
  record.transitions = IntField(*spec, "leaseTransitions");
  return record;
}

// WriteRecord puts `record` into the Lease's spec; the spec's other fields stay as they are.
void WriteRecord(Json& lease, const LeaseRecord& record) {
  Json& spec = lease["spec"];
  if (!spec.is_object()) spec = Json::object();
  if (record.holder.empty()) {
    spec.erase("holderIdentity");
  } else {
    spec["holderIdentity"] = record.holder;
  }
  spec["leaseDurationSeconds"] = record.duration_seconds;
  spec["acquireTime"] = record.acquire_time;
  spec["renewTime"] = record.renew_time;
  spec["leaseTransitions"] = record.transitions;
}

}  // namespace

std::string Hostname() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "schedhost";
  return name.data();
}

Decision Decide(const std::optional<LeaseRecord>& current, bool holder_valid,
                const std::string& identity, int64_t duration_seconds, const std::string& now) {
  Decision d;
  d.record.holder = identity;
  d.record.duration_seconds = duration_seconds;
  d.record.renew_time = now;
  if (!current) {  // no Lease: create it
    d.write = true;
    d.record.acquire_time = now;
    return d;
  }
  const bool leading = current->holder == identity;
  if (!current->holder.empty() && holder_valid && !leading) return d;  // held by another
  d.write = true;
  if (leading) {
    d.record.acquire_time = current->acquire_time;
    d.record.transitions = current->transitions;
  } else {
    d.record.acquire_time = now;
    d.record.transitions = current->transitions + 1;
  }
  return d;
}

std::string DefaultIdentity() {
  std::random_device rd;
  const uint64_t hi = (uint64_t{rd()} << 32) | rd();
  const uint64_t lo = (uint64_t{rd()} << 32) | rd();
  return Hostname() + "_" + model::FormatUuid(hi, lo);
}

LeaderElector::LeaderElector(ApiClient& client, ElectorOptions options)
    : client_(client), options_(std::move(options)) {}

LeaderElector::~LeaderElector() { Stop(); }

std::string LeaderElector::LeasePath() const {
  return "/apis/coordination.k8s.io/v1/namespaces/" + UrlEscape(options_.lease_namespace) +
         "/leases";
}

bool LeaderElector::Leading() const {
  const int64_t until = leading_until_.load(std::memory_order_acquire);
  return until != 0 && Clock::now().time_since_epoch().count() < until;
}

store::Leadership LeaderElector::Status() const {
  store::Leadership s;
  s.enabled = true;
  s.leading = Leading();
  s.identity = options_.identity;
  s.lease = options_.lease_namespace + "/" + options_.lease_name;
  std::lock_guard lock(mu_);
  if (observed_) {
    s.holder = observed_->holder;
    s.transitions = observed_->transitions;
  }
  s.last_error = last_error_;
  s.term_end_unix_ns = term_end_unix_ns_;
  return s;
}

void LeaderElector::Run(ElectorCallbacks callbacks) {
  callbacks_ = std::move(callbacks);
  spdlog::info("kubernetes: {} campaigns for lease {}/{}", options_.identity,
               options_.lease_namespace, options_.lease_name);
  thread_ = std::thread([this] { Loop(); });
}

bool LeaderElector::Sleep(std::chrono::nanoseconds d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stopping_; });
}

void LeaderElector::Fail(std::string why) {
  std::lock_guard lock(mu_);
  last_error_ = std::move(why);
}

void LeaderElector::Loop() {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0, kJitterFactor);
  for (;;) {  // as a standby
    if (TryAcquireOrRenew()) break;
    const auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(
        options_.retry_period * (1 + jitter(rng)));
    if (!Sleep(wait)) return;
  }
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
  }
  spdlog::info("kubernetes: {} leads (lease {}/{})", options_.identity, options_.lease_namespace,
               options_.lease_name);
  if (callbacks_.started) callbacks_.started();
  for (;;) {  // as the leader: renew every retry period until renew_deadline passes without one
    if (!Sleep(options_.retry_period)) return;
    for (;;) {
      if (TryAcquireOrRenew()) break;
      if (!Leading()) {
        {
          std::lock_guard lock(mu_);
          holds_ = false;
          if (stopping_) return;
        }
        const store::Leadership s = Status();
        spdlog::error("kubernetes: {} lost lease {} (no renewal within {} ms{}{})",
                      options_.identity, s.lease,
                      std::chrono::duration_cast<std::chrono::milliseconds>(options_.renew_deadline)
                          .count(),
                      s.last_error.empty() ? "" : "; last error: ", s.last_error);
        if (callbacks_.stopped) callbacks_.stopped();
        return;
      }
      const auto left = std::chrono::nanoseconds(leading_until_.load() -
                                                  Clock::now().time_since_epoch().count());
      if (!Sleep(std::min<std::chrono::nanoseconds>(options_.retry_period, left))) return;
    }
  }
}

bool LeaderElector::TryAcquireOrRenew() {
  const int64_t start_unix_ns = model::NowUnixNs();
  const std::string now = model::FormatMicroTime(start_unix_ns);
  const auto start = Clock::now();
  const int64_t duration_seconds =
      std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count();
  // The leader's fast path: update what it wrote last time without reading it first.
  std::optional<LeaseRecord> cached;
  std::string cached_version;
  {
    std::lock_guard lock(mu_);
    if (holds_ && observed_) {
      cached = observed_;
      cached_version = observed_version_;
    }
  }
  if (cached && Leading()) {
    LeaseRecord record = *cached;
    record.renew_time = now;
    record.duration_seconds = duration_seconds;
    if (Put(record, cached_version, start, start_unix_ns)) return true;
  }
  Response r;
  try {
    r = client_.Call("GET", LeasePath() + "/" + UrlEscape(options_.lease_name));
  } catch (const ApiError& e) {
    Fail(std::string("reading the lease: ") + e.what());
    return false;
  }
  std::optional<LeaseRecord> current;
  std::string version;
  bool holder_valid = false;
  if (r.status == 200) {
    Json lease = Json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    if (!lease.is_object()) {
      Fail("reading the lease: the API server answered with something that is not JSON");
      return false;
    }
    current = RecordOf(lease);
    version = StringField(lease.value("metadata", Json::object()), "resourceVersion");
    std::lock_guard lock(mu_);
    if (!observed_ || *observed_ != *current) {
      observed_ = current;
      observed_time_ = Clock::now();
    }
    observed_version_ = version;
    holder_valid = observed_time_ + std::chrono::seconds(current->duration_seconds) > Clock::now();
  } else if (r.status != 404) {
    Fail(ApiError::From(r, "reading lease " + options_.lease_namespace + "/" +
                               options_.lease_name)
             .what());
    return false;
  }
  const Decision d = Decide(current, holder_valid, options_.identity, duration_seconds, now);
  if (!d.write) {
    Fail("");  // nothing went wrong: another replica leads
    return false;
  }
  return Put(d.record, version, start, start_unix_ns);
}

bool LeaderElector::Put(const LeaseRecord& record, const std::string& resource_version,
                        Clock::time_point start, int64_t start_unix_ns) {
  Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata",
                 {{"name", options_.lease_name}, {"namespace", options_.lease_namespace}}}};
  if (!resource_version.empty()) lease["metadata"]["resourceVersion"] = resource_version;
  WriteRecord(lease, record);
  Response r;
  const std::string what = (resource_version.empty() ? "creating lease " : "updating lease ") +
                           options_.lease_namespace + "/" + options_.lease_name;
  try {
    r = resource_version.empty()
            ? client_.Call("POST", LeasePath(), lease.dump())
            : client_.Call("PUT", LeasePath() + "/" + UrlEscape(options_.lease_name),
                           lease.dump());
  } catch (const ApiError& e) {
    Fail(what + ": " + e.what());
    return false;
  }
  if (r.status != 200 && r.status != 201) {
    // 409: another replica wrote first; the next attempt reads what it wrote.
    Fail(ApiError::From(r, what).what());
    return false;
  }
  const Json written = Json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  std::string version;
  if (written.is_object()) {
    version = StringField(written.value("metadata", Json::object()), "resourceVersion");
  }
  std::lock_guard lock(mu_);
  observed_ = record;
  observed_version_ = std::move(version);
  observed_time_ = Clock::now();
  last_error_.clear();
  holds_ = record.holder == options_.identity;
  if (holds_) {
    leading_until_.store((start + options_.renew_deadline).time_since_epoch().count(),
                         std::memory_order_release);
    term_end_unix_ns_ = start_unix_ns + options_.renew_deadline.count();
  } else {
    leading_until_.store(0, std::memory_order_release);
  }
  return true;
}

void LeaderElector::Release() {
  std::optional<LeaseRecord> held;
  std::string version;
  {
    std::lock_guard lock(mu_);
    if (!holds_ || !observed_) return;
    held = observed_;
    version = observed_version_;
  }
  if (!Leading()) return;  // it ran out: another replica may hold it already
  const std::string now = model::FormatMicroTime(model::NowUnixNs());
  LeaseRecord released;
  released.duration_seconds = 1;
  released.acquire_time = now;
  released.renew_time = now;
  released.transitions = held->transitions;
  leading_until_.store(0, std::memory_order_release);  // nothing is written from here on
  if (Put(released, version, Clock::now(), model::NowUnixNs())) {
    spdlog::info("kubernetes: {} released lease {}/{}", options_.identity,
                 options_.lease_namespace, options_.lease_name);
  } else {
    spdlog::warn("kubernetes: {} could not release lease {}/{} ({}); a standby takes over when "
                 "it runs out",
                 options_.identity, options_.lease_namespace, options_.lease_name,
                 Status().last_error);
  }
}

void LeaderElector::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  Release();
  leading_until_.store(0, std::memory_order_release);
}

}  // namespace schedhost::kube
