// TicketGate: a test plugin that reads an API kind the host has never heard of. It declares
// example.schedhost.io/v1 Ticket (namespaced); a pod labelled ticket=<name> may run only on the
// nodes its Ticket lists in spec.nodes, and only while spec.approved is true. A pod without the
// label is not its business (PreFilter Skip). A Ticket added or updated wakes the pods that name
// it (a queueing hint on the Ticket event); other Tickets leave them parked. Once a pod is
// bound, PostBind records it in its Ticket's status (a merge patch of the status subresource:
// status.lastPod, status.lastNode), and a write the host refuses is logged with its reason.
#include <schedhost/plugin.hpp>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

using schedhost::Status;

// What PreFilter read from the pod's Ticket, for Filter.
struct TicketState {
  std::vector<std::string> nodes;
};

class TicketGate final : public schedhost::Plugin,
                         public schedhost::PreFilterPlugin,
                         public schedhost::FilterPlugin,
                         public schedhost::EnqueueExtensions,
                         public schedhost::PostBindPlugin {
 public:
  static constexpr std::string_view kName = "TicketGate";
  static constexpr std::string_view kVersion = "1.0.0";
  static constexpr std::array<schedhost::Kind, 1> kKinds = {
      {{"example.schedhost.io", "v1", "tickets", "Ticket", true}}};

  TicketGate(const schedhost::Host& host, const schedhost::Args&)
      : Plugin(host), label_(host.Intern("ticket")), state_key_(host.Intern("TicketGate")) {}

  Status PreFilter(schedhost::CycleState& state, const schedhost::Pod& pod,
                   schedhost::PreFilterResult&) override {
    const std::optional<schedhost::Id> ticket = pod.labels().Get(label_);
    if (!ticket) return Status::Skip();
    const std::string name(host().IdString(*ticket));
    int32_t rc = SCHEDHOST_OK;
    const schedhost::Args object = host().GetObject(state, 0, pod.namespace_name(), name, &rc);
    if (rc == SCHEDHOST_E_NOT_FOUND) {
      return Status::UnschedulableAndUnresolvable("ticket \"" + name + "\" not found");
    }
    if (rc != SCHEDHOST_OK) {
      std::string why;
      host().KindAvailable(0, &why);
      return Status::UnschedulableAndUnresolvable("cannot read tickets: " + why);
    }
    // A malformed Ticket is the ticket's fault, not the host's: the error names the object and
    // the field, and the pod waits for the Ticket to be fixed.
    auto value = std::make_unique<TicketState>();
    bool approved = false;
    try {
      schedhost::ArgsReader spec = schedhost::ArgsReader::Object(object["spec"], "spec");
      approved = spec.Bool("approved");
      value->nodes = spec.Strings("nodes");
    } catch (const schedhost::ArgsError& e) {
      return Status::UnschedulableAndUnresolvable(e.what());
    }
    if (!approved) {
      return Status::UnschedulableAndUnresolvable("ticket \"" + name + "\" is not approved");
    }
    state.Write(state_key_, std::move(value));
    return Status::Success();
  }

  std::span<const schedhost_event_registration> EventsToRegister() override;

  void PostBind(schedhost::CycleState&, const schedhost::Pod& pod,
                std::string_view node) override {
    const std::optional<schedhost::Id> ticket = pod.labels().Get(label_);
    if (!ticket) return;
    const std::string patch = std::string(R"({"status":{"lastPod":")") +
                              std::string(pod.namespace_name()) + "/" + std::string(pod.name()) +
                              R"(","lastNode":")" + std::string(node) + R"("}})";
    std::string why;
    const int32_t rc = host().WriteObject(0, SCHEDHOST_WRITE_MERGE_PATCH_STATUS,
                                          pod.namespace_name(), host().IdString(*ticket), patch,
                                          &why);
    if (rc != SCHEDHOST_OK) {
      host().Log(SCHEDHOST_LOG_WARN, "TicketGate: recording pod " + std::string(pod.name()) +
                                         " in its ticket failed (" + std::to_string(rc) +
                                         "): " + why);
    }
  }

  // OnTicket queues the pod only when the Ticket it names changed.
  schedhost::QueueingHint OnTicket(const schedhost::Pod& pod, const schedhost_cluster_event& event,
                                   const schedhost::EventObject&,
                                   const schedhost::EventObject& new_obj) const {
    if (event.resource != SCHEDHOST_KIND_EVENT(0)) return schedhost::QueueingHint::kQueue;
    const schedhost::Args ticket = new_obj.object(host());
    const std::optional<schedhost::Id> wanted = pod.labels().Get(label_);
    if (!wanted || !ticket.present()) return schedhost::QueueingHint::kSkip;
    const bool same = ticket["metadata"]["name"].String("") == host().IdString(*wanted) &&
                      ticket["metadata"]["namespace"].String("default") == pod.namespace_name();
    return same ? schedhost::QueueingHint::kQueue : schedhost::QueueingHint::kSkip;
  }

  Status Filter(const schedhost::CycleState& state, const schedhost::Pod&,
                const schedhost::NodeInfo& node) override {
    const TicketState* ticket = state.Read<TicketState>(state_key_);
    if (ticket == nullptr) return Status::Error("TicketGate: PreFilter state missing");
    const std::string_view name = node.node().name();
    if (std::find(ticket->nodes.begin(), ticket->nodes.end(), name) != ticket->nodes.end()) {
      return Status::Success();
    }
    return Status::UnschedulableAndUnresolvable("node(s) not on the pod's ticket");
  }

 private:
  static const schedhost_event_registration kEvents[];
  schedhost::Id label_;
  schedhost::Id state_key_;
};

constexpr schedhost_event_registration TicketGate::kEvents[] = {
    schedhost::OnEvent<&TicketGate::OnTicket>(SCHEDHOST_KIND_EVENT(0),
                                              SCHEDHOST_ACTION_ADD | SCHEDHOST_ACTION_UPDATE)};

std::span<const schedhost_event_registration> TicketGate::EventsToRegister() { return kEvents; }

}  // namespace

SCHEDHOST_PLUGIN_LIBRARY(TicketGate)
