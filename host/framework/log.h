// Logging set-up shared by every host component that starts threads.
#pragma once

#include <spdlog/spdlog.h>

namespace schedhost::framework {

/// TouchLoggerBeforeThreads creates spdlog's registry (a function-local static inside the
/// uninstrumented libspdlog) on the calling thread. Call it before starting worker threads that
/// may log: the thread start then orders the registry's construction before every use, instead
/// of relying on the guard's inline fast path, which ThreadSanitizer cannot see through and
/// reports as a race.
inline void TouchLoggerBeforeThreads() { (void)spdlog::default_logger_raw(); }

}  // namespace schedhost::framework
