// Internal to host/store: per-kind admission hooks (Ops<T>) shared by the store's .cc files.
// Ops<T> knows a kind's data type, defaults, validation and the admission rules the API server
// applies on create and update; it is a friend of Store so it can read the other tables.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "host/model/validation.h"
#include "host/store/store.h"

namespace schedhost::store {

// Message renders a validation failure as "<path>: <reason>" (or just the reason).
inline std::string Message(const model::FieldError& error) {
  return error.path.empty() ? error.reason : error.path + ": " + error.reason;
}

template <class T>
struct Ops;

template <class T>
Store::TableKey Store::KeyIn(std::string_view namespace_name, std::string_view name) {
  if constexpr (!Namespaced(Ops<T>::kKind)) {
    return {{}, name};
  } else {
    return {namespace_name.empty() ? std::string_view("default") : namespace_name, name};
  }
}

template <class T>
Store::TableKey Store::Table<T>::Less::KeyOf(const std::shared_ptr<const T>& object) {
  return KeyIn<T>(object->namespace_name(), object->name());
}

template <>
struct Ops<model::Pod> {
  using Data = model::PodData;
  static constexpr Kind kKind = Kind::kPod;
  static void Default(Data& d) { model::ApplyPodDefaults(d); }
  static std::optional<model::FieldError> Validate(const Data& d) { return model::ValidatePod(d); }
  // AdmitCreate resolves the pod's priority from its PriorityClass (mu_ held).
  static void AdmitCreate(const Store& store, const std::string& what, Data& d);
  // AdmitUpdate keeps nodeName and the priority fields as stored, refusing changes.
  static void AdmitUpdate(const Store& store, const std::string& what, const model::Pod& current,
                          Data& d);
};

template <>
struct Ops<model::Node> {
  using Data = model::NodeData;
  static constexpr Kind kKind = Kind::kNode;
  static void Default(Data& d) { model::ApplyNodeDefaults(d); }
  static std::optional<model::FieldError> Validate(const Data& d) { return model::ValidateNode(d); }
  static void AdmitCreate(const Store&, const std::string&, Data&) {}
  static void AdmitUpdate(const Store&, const std::string&, const model::Node&, Data&) {}
};

template <>
struct Ops<model::PodDisruptionBudget> {
  using Data = model::PodDisruptionBudgetData;
  static constexpr Kind kKind = Kind::kPodDisruptionBudget;
  static void Default(Data& d) { model::ApplyPdbDefaults(d); }
  static std::optional<model::FieldError> Validate(const Data& d) { return model::ValidatePdb(d); }
  static void AdmitCreate(const Store&, const std::string&, Data&) {}
  static void AdmitUpdate(const Store&, const std::string&, const model::PodDisruptionBudget&,
                          Data&) {}
};

template <>
struct Ops<model::PriorityClass> {
  using Data = model::PriorityClassData;
  static constexpr Kind kKind = Kind::kPriorityClass;
  static void Default(Data& d) {
    d.metadata.namespace_name.clear();
    model::DefaultMeta(d.metadata);
  }
  static std::optional<model::FieldError> Validate(const Data& d) {
    return model::ValidatePriorityClass(d);
  }
  // AdmitCreate allows at most one globalDefault class.
  static void AdmitCreate(const Store& store, const std::string& what, Data& d);
  // AdmitUpdate keeps value and preemptionPolicy immutable and one globalDefault class.
  static void AdmitUpdate(const Store& store, const std::string& what,
                          const model::PriorityClass& current, Data& d);
};

template <>
struct Ops<model::Namespace> {
  using Data = model::NamespaceData;
  static constexpr Kind kKind = Kind::kNamespace;
  static void Default(Data& d) { model::ApplyNamespaceDefaults(d); }
  static std::optional<model::FieldError> Validate(const Data& d) {
    return model::ValidateNamespace(d);
  }
  // Pods may name a namespace without an object (the host has no namespace lifecycle), so
  // creating or deleting a Namespace touches nothing else.
  static void AdmitCreate(const Store&, const std::string&, Data&) {}
  static void AdmitUpdate(const Store&, const std::string&, const model::Namespace&, Data&) {}
};

}  // namespace schedhost::store
