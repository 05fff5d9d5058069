#include "host/model/pod_pack.h"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace schedhost::model::internal {
namespace {

// Each struct's fields are listed once, in Fields, and both archives walk that list: a field
// missing there is lost on the way through a made Pod. The size checks below catch a field
// added to a struct without being added here (on the 64-bit libstdc++ the host is built with).
static_assert(sizeof(void*) != 8 || sizeof(PodSpec) == 312, "PodSpec changed: update Fields");
static_assert(sizeof(void*) != 8 || sizeof(PodNeed) == 128, "PodNeed changed: update Fields");
static_assert(sizeof(void*) != 8 || sizeof(PodStatus) == 40, "PodStatus changed: update Fields");
static_assert(sizeof(void*) != 8 || sizeof(Container) == 168, "Container changed: update Fields");
static_assert(sizeof(void*) != 8 || sizeof(ContainerPort) == 80,
              "ContainerPort changed: update Fields");
static_assert(sizeof(void*) != 8 || sizeof(TopologySpreadConstraint) == 152,
              "TopologySpreadConstraint changed: update Fields");
static_assert(sizeof(void*) != 8 || sizeof(Toleration) == 96, "Toleration changed: update Fields");
static_assert(sizeof(void*) != 8 || sizeof(PodAffinityTerm) == 216,
              "PodAffinityTerm changed: update Fields");
static_assert(sizeof(void*) != 8 || sizeof(SelectorRequirement) == 64,
              "SelectorRequirement changed: update Fields");
static_assert(sizeof(void*) != 8 || sizeof(Affinity) == 176, "Affinity changed: update Fields");

template <class T, class U>
concept Is = std::same_as<std::remove_const_t<T>, U>;

template <class A, Is<PodStatus> T>
void Fields(A& a, T& s) {
  a(s.nominated_node_name, s.terminating_by_preemption);
}
template <class A, Is<ContainerPort> T>
void Fields(A& a, T& p) {
  a(p.name, p.container_port, p.host_port, p.protocol, p.host_ip);
}
template <class A, Is<Container> T>
void Fields(A& a, T& c) {
  a(c.name, c.image, c.resources.requests, c.resources.limits, c.ports, c.restart_policy);
}
template <class A, Is<SelectorRequirement> T>
void Fields(A& a, T& r) {
  a(r.key, r.op, r.values);
}
template <class A, Is<LabelSelector> T>
void Fields(A& a, T& s) {
  a(s.match_labels, s.match_expressions);
}
template <class A, Is<TopologySpreadConstraint> T>
void Fields(A& a, T& c) {
  a(c.max_skew, c.topology_key, c.when_unsatisfiable, c.label_selector, c.min_domains,
    c.node_affinity_policy, c.node_taints_policy, c.match_label_keys);
}
template <class A, Is<Toleration> T>
void Fields(A& a, T& t) {
  a(t.key, t.op, t.value, t.effect, t.toleration_seconds);
}
template <class A, Is<NodeSelectorTerm> T>
void Fields(A& a, T& t) {
  a(t.match_expressions, t.match_fields);
}
template <class A, Is<NodeSelector> T>
void Fields(A& a, T& s) {
  a(s.node_selector_terms);
}
template <class A, Is<PreferredSchedulingTerm> T>
void Fields(A& a, T& t) {
  a(t.weight, t.preference);
}
template <class A, Is<NodeAffinity> T>
void Fields(A& a, T& n) {
  a(n.required, n.preferred);
}
template <class A, Is<PodAffinityTerm> T>
void Fields(A& a, T& t) {
  a(t.label_selector, t.namespaces, t.topology_key, t.namespace_selector, t.match_label_keys,
    t.mismatch_label_keys);
}
template <class A, Is<WeightedPodAffinityTerm> T>
void Fields(A& a, T& t) {
  a(t.weight, t.pod_affinity_term);
}
template <class A, Is<PodAffinity> T>
void Fields(A& a, T& p) {
  a(p.required, p.preferred);
}
template <class A, Is<Affinity> T>
void Fields(A& a, T& x) {
  a(x.node_affinity, x.pod_affinity, x.pod_anti_affinity);
}
template <class A, Is<PodNeed> T>
void Fields(A& a, T& n) {
  a(n.part, n.path, n.what, n.source);
}
template <class A, Is<PodSpec> T>
void Fields(A& a, T& s) {
  a(s.scheduler_name, s.node_name, s.priority, s.priority_class_name, s.preemption_policy,
    s.node_selector, s.affinity, s.tolerations, s.topology_spread_constraints, s.containers,
    s.init_containers, s.overhead, s.scheduling_gates, s.needs);
}

template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsOptional<Box<T>> : std::true_type {};
template <class T>
struct IsFlatMap : std::false_type {};
template <class K, class V, class C>
struct IsFlatMap<boost::container::flat_map<K, V, C>> : std::true_type {};
template <class T>
struct IsPair : std::false_type {};
template <class K, class V>
struct IsPair<std::pair<K, V>> : std::true_type {};

using Wide = unsigned __int128;

// Resource names most requests and limits use, packed as one byte; any other name is packed
// as its length (past these codes) and text.
constexpr std::string_view kResourceNames[] = {"cpu", "memory", "ephemeral-storage", "pods"};
constexpr size_t kResourceNameCodes = std::size(kResourceNames);

// Quantities are packed as nano = mantissa * 10^exponent with the exponent as large as it
// goes: requests are round numbers ("100m", "500Mi", "2"), which take two to five bytes so
// instead of up to nine.
constexpr int kMaxExponent = 38;  // 10^38 < 2^127

// Packer appends values to a byte string.
class Packer {
 public:
  explicit Packer(std::string& out) : out_(out) {}

  template <class... T>
  void operator()(const T&... values) {
    (Item(values), ...);
  }

 private:
  void Varint(Wide v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(static_cast<uint8_t>(v) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void Signed(__int128 v) {  // zigzag: small magnitudes of either sign stay short
    Varint((static_cast<Wide>(v) << 1) ^ static_cast<Wide>(v >> 127));
  }

  template <class T>
  void Item(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      Varint(v.size());
      out_.append(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      Varint(v ? 1 : 0);
    } else if constexpr (std::is_enum_v<T>) {
      Signed(static_cast<std::underlying_type_t<T>>(v));
    } else if constexpr (std::is_integral_v<T>) {
      Signed(v);
    } else if constexpr (std::is_same_v<T, Quantity>) {
      __int128 mantissa = v.nano();
      int exponent = 0;
      while (mantissa != 0 && mantissa % 10 == 0 && exponent < kMaxExponent) {
        mantissa /= 10;
        ++exponent;
      }
      Signed(mantissa);
      Varint(static_cast<Wide>(exponent) * 4 + static_cast<uint8_t>(v.format()));
    } else if constexpr (std::is_same_v<T, ResourceList>) {
      Varint(v.size());
      for (const auto& [name, q] : v) {
        const auto* known = std::find(std::begin(kResourceNames), std::end(kResourceNames), name);
        if (known != std::end(kResourceNames)) {
          Varint(static_cast<Wide>(known - std::begin(kResourceNames)));
        } else {
          Varint(kResourceNameCodes + name.size());
          out_.append(name);
        }
        Item(q);
      }
    } else if constexpr (IsOptional<T>::value) {
      Varint(v.has_value() ? 1 : 0);
      if (v.has_value()) Item(*v);
    } else if constexpr (IsPair<T>::value) {
      Item(v.first);
      Item(v.second);
    } else if constexpr (IsVector<T>::value || IsFlatMap<T>::value) {
      Varint(v.size());
      for (const auto& e : v) Item(e);
    } else {
      Fields(*this, v);
    }
  }

  std::string& out_;
};

// Unpacker reads values back in the order Packer wrote them.
class Unpacker {
 public:
  explicit Unpacker(std::string_view in) : in_(in) {}

  template <class... T>
  void operator()(T&... values) {
    (Item(values), ...);
  }

  void ExpectEnd() const {
    if (pos_ != in_.size()) Corrupt();
  }
  size_t position() const { return pos_; }

 private:
  [[noreturn]] static void Corrupt() {
    throw std::logic_error("a pod's packed state is corrupt (a schedhost bug)");
  }
  Wide Varint() {
    Wide v = 0;
    for (int shift = 0; shift < 128; shift += 7) {
      if (pos_ >= in_.size()) Corrupt();
      const auto byte = static_cast<uint8_t>(in_[pos_++]);
      v |= static_cast<Wide>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    Corrupt();
  }
  __int128 Signed() {
    const Wide v = Varint();
    return static_cast<__int128>((v >> 1) ^ (~(v & 1) + 1));
  }
  size_t Count() {
    const Wide n = Varint();
    if (n > in_.size() - pos_) Corrupt();  // every element takes at least one byte
    return static_cast<size_t>(n);
  }

  template <class T>
  void Item(T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      const size_t n = Count();
      v.assign(in_.substr(pos_, n));
      pos_ += n;
    } else if constexpr (std::is_same_v<T, bool>) {
      v = Varint() != 0;
    } else if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(static_cast<std::underlying_type_t<T>>(Signed()));
    } else if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(Signed());
    } else if constexpr (std::is_same_v<T, Quantity>) {
      __int128 nano = Signed();
      const Wide tail = Varint();
      const auto format = static_cast<Quantity::Format>(tail % 4);
      if (tail / 4 > kMaxExponent) Corrupt();
      for (Wide e = tail / 4; e > 0; --e) nano *= 10;
      v = Quantity::FromNano(nano, format);
    } else if constexpr (std::is_same_v<T, ResourceList>) {
      v.clear();
      const size_t n = Count();
      v.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        const Wide code = Varint();
        std::string name;
        if (code < kResourceNameCodes) {
          name = kResourceNames[static_cast<size_t>(code)];
        } else {
          const Wide length = code - kResourceNameCodes;
          if (length > in_.size() - pos_) Corrupt();
          name.assign(in_.substr(pos_, static_cast<size_t>(length)));
          pos_ += static_cast<size_t>(length);
        }
        Quantity q;
        Item(q);
        v.emplace_hint(v.end(), std::move(name), q);  // written in name order
      }
    } else if constexpr (IsOptional<T>::value) {
      if (Varint() == 0) {
        v.reset();
      } else {
        Item(v.emplace());
      }
    } else if constexpr (IsPair<T>::value) {
      Item(v.first);
      Item(v.second);
    } else if constexpr (IsVector<T>::value) {
      v.clear();
      v.resize(Count());
      for (auto& e : v) Item(e);
    } else if constexpr (IsFlatMap<T>::value) {
      v.clear();
      const size_t n = Count();
      v.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        typename T::key_type key;
        typename T::mapped_type value;
        Item(key);
        Item(value);
        v.emplace_hint(v.end(), std::move(key), std::move(value));  // written in key order
      }
    } else {
      Fields(*this, v);
    }
  }

  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace

std::string PackPodState(const PodSpec& spec, const PodStatus& status,
                         const std::vector<OwnerReference>& owners) {
  std::string out;
  Packer packer(out);
  std::vector<std::string> api_versions;
  api_versions.reserve(owners.size());
  for (const OwnerReference& owner : owners) api_versions.push_back(owner.api_version);
  packer(api_versions, spec, status);
  return out;
}

void UnpackPodState(std::string_view bytes, PodSpec& spec, PodStatus& status,
                    std::vector<OwnerReference>& owners) {
  Unpacker unpacker(bytes);
  std::vector<std::string> api_versions;
  unpacker(api_versions, spec, status);
  unpacker.ExpectEnd();
  owners.resize(api_versions.size());
  for (size_t i = 0; i < owners.size(); ++i) owners[i].api_version = std::move(api_versions[i]);
}

std::string_view PackedOwnerPart(std::string_view bytes) {
  Unpacker unpacker(bytes);
  std::vector<std::string> api_versions;
  unpacker(api_versions);
  return bytes.substr(0, unpacker.position());
}

}  // namespace schedhost::model::internal
