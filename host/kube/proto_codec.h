// The Kubernetes API's protobuf encoding (application/vnd.kubernetes.protobuf), as client-go
// speaks it for the built-in kinds: an object is the magic "k8s\0" and a runtime.Unknown whose
// typeMeta names the kind and whose raw bytes are the kind's message; a watch stream is
// metav1.WatchEvent messages, each after its length (4 bytes, big-endian), whose object is an
// enveloped object again.
//
// The message types are those of the .proto files of the pinned k8s.io/api and
// k8s.io/apimachinery release (third_party/kubernetes-api), compiled by protoc into a descriptor
// set the host embeds; no C++ is generated for them. Decoding walks the wire format with the
// descriptors and builds the JSON the API server would have sent for the same object, so that
// one decoder (model::DecodeApiObject, the value trees of declared kinds) reads both:
// - field names are the JSON names (go-to-protobuf names fields after their json tags), except
//   for embedded structs that JSON inlines (Volume's VolumeSource; inline_fields.txt), whose
//   fields are merged into the enclosing object;
// - Quantity is its string, Time and MicroTime are RFC 3339 (null when zero), Duration is Go's
//   duration string, IntOrString an integer or a string, RawExtension and FieldsV1 the JSON
//   they carry, bytes base64, maps objects;
// - scalar fields the sender wrote with their zero value (Go's protobuf writes every
//   non-pointer field) appear with it, where JSON's omitempty leaves them out: the decoders
//   treat an empty value and an absent one alike, as the API does.
// Unknown field numbers are skipped (a newer server's fields). Kinds without a message here
// (custom resources, groups not kept) are not offered protobuf: JSON serves them.
//
//   if (proto::Supports("v1", "Pod")) { ... Accept: proto::kAccept ... }
//   nlohmann::json list = proto::DecodeObject(response.body);   // {"kind": "PodList", ...}
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace schedhost::kube::proto {

inline constexpr std::string_view kContentType = "application/vnd.kubernetes.protobuf";
// kAccept asks for protobuf and takes JSON where the server has no protobuf for the kind.
inline constexpr std::string_view kAccept =
    "application/vnd.kubernetes.protobuf, application/json";

// ProtoError is bytes that are not a well-formed object of a known kind.
class ProtoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Supports says whether `kind` of `api_version` ("v1", "storage.k8s.io/v1") has a message here.
bool Supports(std::string_view api_version, std::string_view kind);

// IsProtobuf says whether a Content-Type names the protobuf encoding.
bool IsProtobuf(std::string_view content_type);

// DecodeObject reads one enveloped object (a response body) as the API server's JSON for it,
// apiVersion and kind included. Throws ProtoError.
nlohmann::json DecodeObject(std::string_view bytes);

// EncodeObject writes `object` (JSON with apiVersion and kind, as the API server would read it)
// in the envelope. Throws ProtoError when its kind has no message here or a field has no place
// in it (nothing is dropped silently).
std::string EncodeObject(const nlohmann::json& object);

// WatchStream splits a protobuf watch stream into its events, as JSON watch events
// ({"type": "ADDED", "object": {...}}), whatever the pieces the bytes arrive in.
class WatchStream {
 public:
  // Feed appends bytes received.
  void Feed(std::string_view bytes) { buffer_.append(bytes); }
  // Next takes the next whole event; false when none is complete yet. Throws ProtoError for a
  // frame that does not decode, or one larger than kMaxFrame.
  bool Next(nlohmann::json* event);

  static constexpr size_t kMaxFrame = size_t{256} * 1024 * 1024;

 private:
  std::string buffer_;
  size_t offset_ = 0;
};

}  // namespace schedhost::kube::proto
