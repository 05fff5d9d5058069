// What the files of libschedhost-testing share: the Harness's state, the conversion of host
// statuses into the facade's Result, decoding of one object, and the guard that turns every
// host exception into schedhost::testing::Error.
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <schedhost/testing.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "host/framework/status.h"
#include "host/framework/testing/harness.h"
#include "host/model/decode.h"

namespace schedhost::testing {

/// Harness::Impl is the host's own test harness (a real framework over a real snapshot) and the
/// cluster's generation, which ends the cycles started before a change.
struct Harness::Impl {
  framework::testing::Harness host{/*load_builtin=*/false};
  uint64_t generation = 0;
};

namespace internal {

/// ToResult copies a host status into a Result.
Result ToResult(const framework::Status& status);

/// ResolvePluginDir returns `given`, else $SCHEDHOST_PLUGIN_DIR, else the builtin plugin
/// directory beside libschedhost-testing.so; throws Error naming where it looked.
std::filesystem::path ResolvePluginDir(const std::string& given);

/// DecodeOne returns the only object of kind T in `yaml`; throws Error otherwise.
template <class T>
std::shared_ptr<const T> DecodeOne(std::string_view yaml, std::string_view what) {
  std::shared_ptr<const T> found;
  for (model::Object& obj : model::DecodeManifests(yaml, what)) {
    if (auto* p = std::get_if<std::shared_ptr<const T>>(&obj)) {
      if (found) throw Error(std::string(what) + ": more than one object of that kind");
      found = *p;
    }
  }
  if (!found) throw Error(std::string(what) + ": no object of the expected kind in the manifest");
  return found;
}

/// WithUid returns `pod`, or a copy with a uid made from its namespace and name when it has
/// none (the API server gives every pod one; manifests for tests rarely do).
inline std::shared_ptr<const model::Pod> WithUid(std::shared_ptr<const model::Pod> pod) {
  if (!pod->uid().empty()) return pod;
  model::PodData data = pod->data();
  data.metadata.uid = "uid-" + data.metadata.namespace_name + "-" + data.metadata.name;
  return model::Pod::Make(std::move(data));
}

/// DecodePod is DecodeOne<model::Pod> with a uid.
inline std::shared_ptr<const model::Pod> DecodePod(std::string_view yaml, std::string_view what) {
  return WithUid(DecodeOne<model::Pod>(yaml, what));
}

/// Guard runs `f`, rethrowing any host exception as Error with `context` in front.
template <class F>
auto Guard(std::string_view context, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(std::string(context) + ": " + e.what());
  }
}

}  // namespace internal
}  // namespace schedhost::testing
