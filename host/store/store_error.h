// StoreError: why the store refused a request, as a code a caller can branch on (not found,
// already exists, conflict, invalid, limit exceeded) plus a message that names the object, e.g.
//
//   Pod default/web-1: resource version 7 is stale (current 9); read the pod again and retry
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace schedhost::store {

// ErrorCode classifies a refused store request the way the Kubernetes API does.
enum class ErrorCode {
  kNotFound,       // The object does not exist.
  kAlreadyExists,  // Create of a key that is taken.
  kConflict,       // Optimistic-concurrency or precondition failure; re-read and retry.
  kInvalid,        // The object or the request is malformed or breaks a rule.
  kLimitExceeded,  // A sized limit of the store (Store::Limits) would be exceeded.
  // The object moved on without the caller (bound by someone else, being deleted, re-created):
  // drop the request and do not retry; the watch brings the object's new state.
  kSuperseded,
  kUnavailable,  // The cluster did not answer or failed (Kubernetes mode); worth a retry later.
  kForbidden,    // The credentials may not do this (Kubernetes mode: RBAC).
};

// ToString names an error code ("NotFound", "AlreadyExists", ...).
std::string_view ToString(ErrorCode code);

// StoreError is thrown by every store operation that refuses a request; the store is unchanged.
class StoreError : public std::runtime_error {
 public:
  // StoreError carries `code` and a message naming the object and the reason.
  StoreError(ErrorCode code, const std::string& message);

  // code returns the classification of the failure.
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace schedhost::store
