// ObjectReader: the benchmark's reader of a declared kind. It declares
// example.schedhost.io/v1 Ticket; for a pod labelled ticket=<name> it reads that Ticket of the
// pod's namespace in PreFilter, one object_get per scheduling attempt, and admits the pod only
// while spec.approved is true. A pod without the label is not its business (Skip).
#include <schedhost/plugin.hpp>

#include <array>
#include <optional>
#include <string>

namespace {

using schedhost::Status;

class ObjectReader final : public schedhost::Plugin, public schedhost::PreFilterPlugin {
 public:
  static constexpr std::string_view kName = "ObjectReader";
  static constexpr std::string_view kVersion = "1.0.0";
  static constexpr std::array<schedhost::Kind, 1> kKinds = {
      {{"example.schedhost.io", "v1", "tickets", "Ticket", true}}};

  ObjectReader(const schedhost::Host& host, const schedhost::Args& args)
      : Plugin(host), label_(host.Intern("ticket")) {
    args.ExpectNone(kName);
  }

  Status PreFilter(schedhost::CycleState& state, const schedhost::Pod& pod,
                   schedhost::PreFilterResult&) override {
    const std::optional<schedhost::Id> ticket = pod.labels().Get(label_);
    if (!ticket) return Status::Skip();
    int32_t rc = SCHEDHOST_OK;
    const schedhost::Args object =
        host().GetObject(state, 0, pod.namespace_name(), host().IdString(*ticket), &rc);
    if (rc != SCHEDHOST_OK) {
      return Status::UnschedulableAndUnresolvable("ticket " + std::string(host().IdString(*ticket)) +
                                                  " not readable (" + std::to_string(rc) + ")");
    }
    if (!object["spec"]["approved"].Bool(false)) {
      return Status::UnschedulableAndUnresolvable("ticket not approved");
    }
    return Status::Success();
  }

 private:
  schedhost::Id label_;
};

}  // namespace

SCHEDHOST_PLUGIN_LIBRARY(ObjectReader)
