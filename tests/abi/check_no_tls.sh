#!/bin/sh
# Checks that plugin libraries have no thread-local storage of their own (no PT_TLS segment).
#
#   check_no_tls.sh READELF PATH...
#
# A dlopen'ed library with TLS gets a block in every thread that touches it, which glibc frees
# only lazily after dlclose, and the host loads and unloads libraries for its whole life (hot
# swap). LeakSanitizer's exit-time scan of dynamic TLS crashed once in this project's asan runs
# ("DTLS 10 at 0x787-...", a module loaded after startup). The SDK therefore carries a call's
# status sinks in its CycleState, not in a thread_local, and the builtin plugins keep none. Each PATH is a .so file or a directory whose
# *.so files are checked. Exits non-zero if any library has a TLS segment.
set -u
readelf=$1
shift
failed=0

check() {
  if "$readelf" -lW "$1" | awk '$1 == "TLS" { found = 1 } END { exit !found }'; then
    echo "FAIL $1: has a TLS segment (thread_local or __thread data)"
    echo "  fix: keep per-call state in the call's arguments or the instance, not in thread_local"
    failed=1
  else
    echo "ok   $1"
  fi
}

for path in "$@"; do
  if [ -d "$path" ]; then
    for lib in "$path"/*.so; do
      [ -e "$lib" ] || continue
      check "$lib"
    done
  elif [ -e "$path" ]; then
    check "$path"
  else
    echo "FAIL $path: no such file or directory"
    failed=1
  fi
done
exit "$failed"
