// Box<T>: an optional T kept on the heap. It reads like std::optional<T> (has_value, *, ->,
// emplace, reset, = std::nullopt) and copies deeply like it, but takes one pointer when empty.
// For members that are large and rarely set, in objects the host keeps one of per pod: a pod's
// affinity is 184 bytes inline as an optional, and most pods have none.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace schedhost::model {

template <class T>
class Box {
 public:
  Box() = default;
  Box(std::nullopt_t) {}  // NOLINT(google-explicit-constructor): as std::optional
  Box(T value)            // NOLINT(google-explicit-constructor): as std::optional
      : p_(std::make_unique<T>(std::move(value))) {}
  Box(std::optional<T> value) {  // NOLINT(google-explicit-constructor): as std::optional
    if (value) p_ = std::make_unique<T>(std::move(*value));
  }
  Box(const Box& other) : p_(other.p_ ? std::make_unique<T>(*other.p_) : nullptr) {}
  Box(Box&&) noexcept = default;
  Box& operator=(const Box& other) {
    if (this != &other) p_ = other.p_ ? std::make_unique<T>(*other.p_) : nullptr;
    return *this;
  }
  Box& operator=(Box&&) noexcept = default;
  Box& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }
  ~Box() = default;

  bool has_value() const noexcept { return p_ != nullptr; }
  explicit operator bool() const noexcept { return p_ != nullptr; }

  // The accessors require a value, as std::optional's do; value() throws without one.
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  const T& value() const {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }

  template <class... Args>
  T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }
  void reset() noexcept { p_.reset(); }

  // Two boxes are equal when both are empty or both hold equal values.
  friend bool operator==(const Box& a, const Box& b) {
    return a.has_value() == b.has_value() && (!a.has_value() || *a == *b);
  }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace schedhost::model
