// Writes to objects of declared kinds, as the API server takes them (create, update with a
// resourceVersion precondition, JSON merge patch, the status subresource, delete), applied to
// the embedded store's ObjectStore. Kubernetes mode sends the same requests to the API server
// (kube::Writer); both report failures as StoreError with the API's classification.
//
//   store::WriteObject(store.objects(), kind, ObjectWriteOp::kMergePatchStatus, "team-a", "gang",
//                      R"({"status":{"phase":"Scheduled"}})");
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "host/store/object_store.h"

namespace schedhost::store {

// ObjectWriteOp is one kind of write; the values are the ABI's schedhost_write_op.
enum class ObjectWriteOp : int32_t {
  kCreate = 0,            // body: the object; kAlreadyExists when it exists
  kUpdate = 1,            // body: the object; metadata.resourceVersion, when set, a precondition
  kUpdateStatus = 2,      // body: the object; only its status is stored
  kMergePatch = 3,        // body: an RFC 7386 merge patch of the object
  kMergePatchStatus = 4,  // body: a merge patch; only its status is applied
  kDelete = 5,            // body: "" (or ignored)
};

// ValidWriteOp is true for the values ObjectWriteOp names.
constexpr bool ValidWriteOp(int32_t op) { return op >= 0 && op <= 5; }

// WriteObject applies `op` to the object `namespace_name`/`name` of `kind` in `objects` and
// returns the object as stored (its last state for a delete). The host owns identity (uid,
// resourceVersion, creationTimestamp), as for `schedctl apply`. Throws StoreError: kInvalid for
// a body that is not a JSON object or names another object, kNotFound, kAlreadyExists,
// kConflict (a stale resourceVersion).
std::shared_ptr<const StoredObject> WriteObject(ObjectStore& objects, const KindInfo& kind,
                                                ObjectWriteOp op, std::string_view namespace_name,
                                                std::string_view name, std::string_view body);

}  // namespace schedhost::store
