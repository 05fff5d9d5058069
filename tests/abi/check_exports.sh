#!/bin/sh
# Checks plugin libraries export only the entry symbol, carry no UNIQUE-bound symbol (docs/abi.md
# rules 10 and 12) and have no thread-local storage of their own (no PT_TLS segment): a
# dlopen'ed library's TLS gets a block in every thread that touches it, which glibc frees only
# lazily after dlclose, and the host loads and unloads libraries for its whole life (hot swap).
# LeakSanitizer's exit-time scan of dynamic TLS crashed once in this project's asan runs. The SDK
# carries a call's status sinks in its CycleState rather than in a thread_local for this reason.
#
#   check_exports.sh NM READELF PATH...
#
# Each PATH is a .so file or a directory whose *.so files are checked; a missing or empty
# directory is fine (builtin plugins may not exist yet). Linker-defined symbols (_init, _fini,
# __bss_start, _edata, _end) are ignored. Exits non-zero if any library fails.
set -u
nm=$1
readelf=$2
shift 2
entry=schedhost_plugin_library_v1
failed=0
checked=0

check() {
  lib=$1
  bad=0
  checked=$((checked + 1))
  if ! out=$("$nm" -D --defined-only "$lib" 2>&1); then
    echo "FAIL $lib: nm cannot read it: $out"
    failed=1
    return 0
  fi
  names=$(printf '%s\n' "$out" | awk 'NF >= 2 { print $NF }' | sed 's/@.*//')
  extra=$(printf '%s\n' "$names" |
          grep -v -x -e "$entry" -e _init -e _fini -e __bss_start -e _edata -e _end)
  if ! printf '%s\n' "$names" | grep -q -x "$entry"; then
    echo "FAIL $lib: does not export $entry"
    failed=1
    bad=1
  fi
  if [ -n "$extra" ]; then
    echo "FAIL $lib: exports more than $entry:"
    printf '%s\n' "$extra" | sed 's/^/    /'
    echo "  fix: build it with schedhost_add_plugin (hidden visibility and a version script)"
    failed=1
    bad=1
  fi
  unique=$("$readelf" -Ws "$lib" | awk '$5 == "UNIQUE" { print $8 }' | sort -u)
  if [ -n "$unique" ]; then
    echo "FAIL $lib: has UNIQUE-bound symbols (pin the library in memory):"
    printf '%s\n' "$unique" | sed 's/^/    /'
    echo "  fix: compile with -fno-gnu-unique or hidden visibility"
    failed=1
    bad=1
  fi
  # A Rust library (its manifest names rustc) carries std's TLS, which the Rust SDK touches
  # only when it catches a panic and gives no destructor (sdk/rust/schedhost-plugin/README.md):
  # its segment is allowed.
  rust=0
  if "$readelf" -p schedhost_manifest "$lib" 2>/dev/null | grep -q "compiler rustc "; then rust=1; fi
  if [ "$rust" -eq 0 ] && "$readelf" -lW "$lib" | awk '$1 == "TLS" { found = 1 } END { exit !found }'; then
    echo "FAIL $lib: has a TLS segment (thread_local or __thread data)"
    echo "  fix: keep per-call state in the call's arguments or the instance, not in thread_local"
    failed=1
    bad=1
  fi
  if [ "$bad" -eq 0 ]; then echo "ok   $lib"; fi
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
    case "$path" in
      *.so) echo "FAIL $path: missing (was it built?)"; failed=1 ;;
      *) echo "note: $path does not exist; no libraries there" ;;
    esac
  fi
done
echo "checked $checked libraries"
exit "$failed"
