#!/usr/bin/env bash
# The packages test (issue 8), on a machine where installing packages is fine (CI, a throwaway
# VM or container; needs root):
#   1. builds the .deb and .rpm of `schedhost`, `schedhost-sdk-dev` and `schedhost-sdk-testing`
#      from an already built tree (cpack only, no compile) and checks that they list the
#      expected files;
#   2. lintian on the .debs: no error and no warning (accepted ones are overridden, with the
#      reason, in packaging/lintian/);
#   3. installs the .debs, builds sdk/examples/node-pool against the installed SDK only and runs
#      its tests (through the installed libschedhost-testing.so); builds the plugin once more
#      with only pkg-config's flags;
#   4. shows that the plugin takes part in decisions: `schedctl simulate` with and without it,
#      then the installed schedhostd on a temporary socket, `schedctl apply`, `get pods`,
#      `explain`, `reload` and SIGHUP (each a hot swap: a new generation);
#   5. upgrades to a second package version and checks that an edited
#      /etc/schedhost/schedhost.toml is kept (the .deb installed; the .rpm in a scratch rpm
#      root without its scriptlets); then purges everything.
#
#   scripts/test-packages.sh [BUILD_DIR]      # default build/ci (scripts/test.sh builds it)
#
# It refuses to run when schedhost is already installed (it would purge it at the end), unless
# SCHEDHOST_TEST_PURGE_INSTALLED=1 lets it purge the leftovers first (.ci/run sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=$(realpath -m "${1:-build/ci}")
start=$SECONDS

step() { printf '\n=== packages: %s\n' "$*"; }
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}
ok() { printf '  ok: %s\n' "$*"; }

[ "$(id -u)" -eq 0 ] || fail "run as root: the test installs and purges packages"
[ -f "$build/CPackConfig.cmake" ] ||
  fail "$build/CPackConfig.cmake is missing: configure and build that tree first (cmake --workflow --preset ci)"
for tool in cpack dpkg-deb rpm rpmbuild lintian apt-get cmake ninja pkg-config; do
  command -v "$tool" >/dev/null || fail "$tool is missing: run scripts/install-deps.sh"
done
# A machine where an earlier run was cut off mid-test still has the packages installed. CI
# machines are throwaway, so .ci/run sets SCHEDHOST_TEST_PURGE_INSTALLED=1 and the leftovers are
# purged first; anywhere else the test refuses rather than purge somebody's installation.
for p in schedhost-contrib schedhost-sdk-testing schedhost-sdk-dev schedhost; do
  if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" == *" installed" ]]; then
    [ "${SCHEDHOST_TEST_PURGE_INSTALLED:-0}" = 1 ] ||
      fail "$p is already installed; this test purges it at the end, so remove it first (dpkg --purge $p), or set SCHEDHOST_TEST_PURGE_INSTALLED=1"
    printf 'packages: purging %s left installed by an earlier run (SCHEDHOST_TEST_PURGE_INSTALLED=1)\n' "$p"
    dpkg --purge "$p" >/dev/null
  fi
done

work=$(mktemp -d /tmp/schedhost-packages.XXXXXX)
daemon_pid=""
installed=0
cleanup() {
  local rc=$?
  if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
  fi
  if [ "$installed" -eq 1 ]; then
    dpkg --purge schedhost-sdk-testing schedhost schedhost-sdk-dev >/dev/null 2>&1 || true
    rm -rf /run/schedhost
  fi
  if [ "$rc" -ne 0 ] && [ -f "$work/daemon.log" ]; then
    echo "--- schedhostd log:" >&2
    tail -n 40 "$work/daemon.log" >&2 || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

# --- 1. build and list -----------------------------------------------------------------------
step "cpack (from $build)"
cpack --config "$build/CPackConfig.cmake" -B "$work/v1" >"$work/cpack-v1.log" 2>&1 ||
  { tail -n 30 "$work/cpack-v1.log" >&2; fail "cpack failed"; }
version=$(dpkg-deb -f "$work"/v1/schedhost_*_amd64.deb Version)
deb_host=$(ls "$work"/v1/schedhost_*.deb)
deb_sdk=$(ls "$work"/v1/schedhost-sdk-dev_*_all.deb)
rpm_host=$(ls "$work"/v1/schedhost-[0-9]*.x86_64.rpm)
rpm_sdk=$(ls "$work"/v1/schedhost-sdk-dev-[0-9]*.noarch.rpm)
deb_testing=$(ls "$work"/v1/schedhost-sdk-testing_*_amd64.deb)
rpm_testing=$(ls "$work"/v1/schedhost-sdk-testing-[0-9]*.x86_64.rpm)
for f in "$deb_host" "$deb_sdk" "$deb_testing" "$rpm_host" "$rpm_sdk" "$rpm_testing"; do
  ok "built $(basename "$f")"
done

# The builtin plugins are one per folder of plugins/builtin (<name>.so in <build>/plugins); the
# contrib ones (plugins/contrib) land in the same build directory but ship in schedhost-contrib.
mapfile -t plugins < <(find "$root/plugins/builtin" -mindepth 1 -maxdepth 1 -type d -printf '%f.so\n' | sort)
mapfile -t contrib < <(find "$root/plugins/contrib" -mindepth 1 -maxdepth 1 -type d -printf '%f.so\n' | sort)
# The contrib plugins written in Rust (sdk/rust), built by cargo when the tree found it.
rust_contrib=0
# The cargo the tree was built with (CMake finds rustup's in ~/.cargo/bin off the PATH too).
cargo=$(sed -n 's/^SCHEDHOST_CARGO:FILEPATH=//p' "$build/CMakeCache.txt")
if [ -f "$build/plugins/target_load_packing.so" ]; then
  contrib+=(target_load_packing.so)
  rust_contrib=1
fi
((${#plugins[@]} > 0)) || fail "no builtin plugins in $root/plugins/builtin"
for p in "${plugins[@]}" "${contrib[@]}"; do
  [ -f "$build/plugins/$p" ] || fail "$build/plugins/$p is missing: build that tree first"
done
host_files=(/usr/bin/schedhostd /usr/bin/schedctl /etc/schedhost/schedhost.toml
  /usr/lib/systemd/system/schedhost.service /usr/share/man/man8/schedhostd.8.gz
  /usr/share/man/man1/schedctl.1.gz /usr/share/doc/schedhost/copyright
  /usr/share/schedhost/ui/index.html /usr/share/schedhost/ui/app.js /usr/share/schedhost/ui/app.css)
for p in "${plugins[@]}"; do host_files+=("/usr/lib/schedhost/plugins/$p"); done
sdk_files=(/usr/share/cmake/schedhost-sdk/schedhost-sdk-config.cmake
  /usr/share/cmake/schedhost-sdk/schedhost-sdk-config-version.cmake
  /usr/share/cmake/schedhost-sdk/schedhost-sdk-targets.cmake
  /usr/share/cmake/schedhost-sdk/SchedhostPlugin.cmake /usr/share/pkgconfig/schedhost-sdk.pc
  /usr/share/schedhost-sdk/plugin.map /usr/share/schedhost-sdk/template/CMakeLists.txt
  /usr/share/schedhost-sdk/template/src/node_pool.cc
  /usr/share/schedhost-sdk/template/test/node_pool_test.cc)
# Every header of sdk/include, whatever its name (the sdk component installs the directory), but
# testing.hpp, which ships with its library in schedhost-sdk-testing.
mapfile -t headers < <(cd "$root/sdk/include" && find . -type f \( -name '*.h' -o -name '*.hpp' \) \
  ! -name testing.hpp ! -name testing.h | sed 's|^\./|/usr/include/|' | sort)
((${#headers[@]} > 0)) || fail "no headers in $root/sdk/include"
sdk_files+=("${headers[@]}")
testing_files=(/usr/lib/schedhost/testing/libschedhost-testing.so /usr/include/schedhost/testing.hpp
  /usr/include/schedhost/testing.h
  /usr/share/cmake/schedhost-sdk/schedhost-sdk-testing-targets.cmake
  /usr/share/doc/schedhost-sdk-testing/copyright)

# expect_files LISTING NAME FILE...: every FILE is in LISTING (one path per line).
expect_files() {
  local listing=$1 name=$2
  shift 2
  for f in "$@"; do
    grep -qxF "$f" "$listing" || fail "$name does not contain $f"
  done
  ok "$name contains the $# expected files"
}
dpkg-deb -c "$deb_host" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' >"$work/deb-host.txt"
dpkg-deb -c "$deb_sdk" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' >"$work/deb-sdk.txt"
rpm -qlp "$rpm_host" >"$work/rpm-host.txt" 2>/dev/null
rpm -qlp "$rpm_sdk" >"$work/rpm-sdk.txt" 2>/dev/null
dpkg-deb -c "$deb_testing" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' >"$work/deb-testing.txt"
rpm -qlp "$rpm_testing" >"$work/rpm-testing.txt" 2>/dev/null
expect_files "$work/deb-host.txt" "$(basename "$deb_host")" "${host_files[@]}"
expect_files "$work/deb-sdk.txt" "$(basename "$deb_sdk")" "${sdk_files[@]}"
expect_files "$work/rpm-host.txt" "$(basename "$rpm_host")" "${host_files[@]}"
expect_files "$work/rpm-sdk.txt" "$(basename "$rpm_sdk")" "${sdk_files[@]}"
expect_files "$work/deb-testing.txt" "$(basename "$deb_testing")" "${testing_files[@]}"
expect_files "$work/rpm-testing.txt" "$(basename "$rpm_testing")" "${testing_files[@]}"
if grep -E '^/usr/(bin|lib/schedhost/plugins)' "$work/deb-testing.txt"; then
  fail "schedhost-sdk-testing ships host files (above)"
fi
testing_depends=$(dpkg-deb -f "$deb_testing" Depends)
for d in "schedhost (= $version)" "schedhost-sdk-dev (= $version)" libspdlog libyaml-cpp; do
  [[ "$testing_depends" == *"$d"* ]] || fail "schedhost-sdk-testing Depends lacks $d: $testing_depends"
done
ok "schedhost-sdk-testing Depends: $testing_depends"
if grep -E '^/usr/(bin|lib/schedhost)' "$work/deb-sdk.txt"; then
  fail "schedhost-sdk-dev ships host files (above)"
fi
if grep -E '^/usr/include' "$work/deb-host.txt"; then fail "schedhost ships headers (above)"; fi
if ((${#contrib[@]} > 0)); then
  deb_contrib=$(ls "$work"/v1/schedhost-contrib_*.deb)
  dpkg-deb -c "$deb_contrib" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' >"$work/deb-contrib.txt"
  contrib_files=()
  for p in "${contrib[@]}"; do contrib_files+=("/usr/lib/schedhost/plugins/$p"); done
  expect_files "$work/deb-contrib.txt" "$(basename "$deb_contrib")" "${contrib_files[@]}"
  for p in "${contrib[@]}"; do
    if grep -qxF "/usr/lib/schedhost/plugins/$p" "$work/deb-host.txt"; then
      fail "schedhost ships the contrib plugin $p"
    fi
  done
fi

# Control data: conffile, dependencies computed by dpkg-shlibdeps, maintainer scripts.
# (Pipelines end in grep without -q: an early exit would SIGPIPE the writer under pipefail.)
control=$(dpkg-deb --ctrl-tarfile "$deb_host" | tar -t)
conffiles=$(dpkg-deb --ctrl-tarfile "$deb_host" | tar -xO ./conffiles)
grep -qxF /etc/schedhost/schedhost.toml <<<"$conffiles" ||
  fail "schedhost does not mark /etc/schedhost/schedhost.toml as a conffile"
depends=$(dpkg-deb -f "$deb_host" Depends)
for d in adduser 'libgrpc++1' libprotobuf libspdlog libc6 libstdc++6; do
  [[ "$depends" == *"$d"* ]] || fail "schedhost Depends lacks $d: $depends"
done
ok "schedhost: conffile marked; Depends (dpkg-shlibdeps + adduser): $depends"
for s in postinst prerm postrm; do
  grep -qx "./$s" <<<"$control" || fail "schedhost has no $s"
done
rpm -qp --queryformat '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$rpm_host" >"$work/rpm-flags.txt" 2>/dev/null
grep -qx '/etc/schedhost/schedhost.toml cn' "$work/rpm-flags.txt" ||
  fail "the schedhost rpm does not mark the config %config(noreplace)"
requires=$(rpm -qp --requires "$rpm_host" 2>/dev/null | grep -v -e '^rpmlib(' -e '^/bin/sh$' |
  sort -u | tr '\n' ' ')
for r in grpc-cpp protobuf spdlog shadow-utils systemd; do
  [[ " $requires " == *" $r "* ]] || fail "the schedhost rpm does not require $r: $requires"
done
rpm -qp --scripts "$rpm_host" >"$work/rpm-scripts.txt" 2>/dev/null
grep -q useradd "$work/rpm-scripts.txt" || fail "the rpm %post creates no user"
ok "schedhost rpm: %config(noreplace), Requires: $requires"

# Stripped, and the plugin manifests survived strip (the host reads them before dlopen).
mkdir -p "$work/x" && dpkg-deb -x "$deb_host" "$work/x"
[[ "$(file "$work/x/usr/bin/schedhostd")" == *", stripped"* ]] || fail "schedhostd is not stripped"
for p in "${plugins[@]}"; do
  [[ "$(readelf -p schedhost_manifest "$work/x/usr/lib/schedhost/plugins/$p")" == *"schedhost-manifest 1"* ]] ||
    fail "$p lost its schedhost_manifest section"
done
ok "binaries stripped, ${#plugins[@]} plugin manifests intact"

# An install under another prefix finds its plugins relative to the binary
# (<prefix>/bin/../lib/schedhost/plugins); nothing is in /usr/lib/schedhost/plugins yet.
[ ! -e /usr/lib/schedhost/plugins ] || fail "/usr/lib/schedhost/plugins exists without the package"
DESTDIR="$work/destdir" cmake --install "$build" --prefix /opt/schedhost --component host \
  >"$work/install-prefix.log" 2>&1 || { cat "$work/install-prefix.log" >&2; fail "cmake --install failed"; }
"$work/destdir/opt/schedhost/bin/schedctl" simulate -f "$root/config/examples/demo-cluster.yaml" \
  >"$work/sim-prefix.txt" 2>&1 || { cat "$work/sim-prefix.txt" >&2; fail "schedctl under /opt/schedhost found no plugins"; }
ok "an install under /opt/schedhost finds its plugins in /opt/schedhost/lib/schedhost/plugins"
"$work/destdir/opt/schedhost/bin/schedctl" simulate -f "$root/config/examples/demo-cluster.yaml" \
  --html "$work/report.html" >"$work/sim-html.txt" 2>&1 ||
  { cat "$work/sim-html.txt" >&2; fail "schedctl under /opt/schedhost found no web UI pages for --html"; }
grep -q 'SCHEDHOST_REPORT' "$work/report.html" || fail "the --html report carries no data"
ok "an install under /opt/schedhost finds its web UI pages in /opt/schedhost/share/schedhost/ui"
# No install rule ignores the prefix: the config follows it too.
outside=$(cd "$work/destdir" && find . ! -type d ! -path './opt/schedhost/*')
[ -z "$outside" ] || fail "cmake --install --prefix /opt/schedhost wrote outside the prefix: $outside"
[ -f "$work/destdir/opt/schedhost/etc/schedhost/schedhost.toml" ] ||
  fail "cmake --install --prefix /opt/schedhost did not write /opt/schedhost/etc/schedhost/schedhost.toml"
ok "everything, the config included, is under /opt/schedhost"

# --- 2. lintian -----------------------------------------------------------------------------
step "lintian"
# --fail-on error,warning: a new warning fails too; accept one only with an override and its
# reason in packaging/lintian/<package>.
if ! lintian --fail-on error,warning "$deb_host" "$deb_sdk" "$deb_testing" >"$work/lintian.txt" 2>&1; then
  cat "$work/lintian.txt" >&2
  fail "lintian reports errors or warnings (above)"
fi
grep -v 'running with root privileges' "$work/lintian.txt" || true
ok "lintian: no errors, no warnings"

# --- 3. install; build the example against the installed SDK only ---------------------------
step "install $(basename "$deb_host") $(basename "$deb_sdk") $(basename "$deb_testing")"
# The machine's state directory belongs to the package from here on. A test suite run as root
# before this must not have made one: a root-owned /var/lib/schedhost/plugins
# would keep the service user from writing its shadow copies.
[ ! -e /var/lib/schedhost ] ||
  fail "/var/lib/schedhost exists before the package is installed (a test run as root used the default state_dir): $(ls -la /var/lib/schedhost)"
installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$deb_host" "$deb_sdk" "$deb_testing" \
  >"$work/apt.log" 2>&1 || { tail -n 20 "$work/apt.log" >&2; fail "installing the debs failed"; }
getent passwd schedhost >/dev/null || fail "postinst did not create the schedhost user"
[ "$(stat -c '%U:%G %a' /etc/schedhost/schedhost.toml)" = "root:schedhost 640" ] ||
  fail "/etc/schedhost/schedhost.toml is $(stat -c '%U:%G %a' /etc/schedhost/schedhost.toml), not root:schedhost 640"
ok "installed $version; user schedhost; config root:schedhost 0640"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify /usr/lib/systemd/system/schedhost.service >"$work/verify.log" 2>&1 ||
    { cat "$work/verify.log" >&2; fail "systemd-analyze verify schedhost.service"; }
  ok "systemd-analyze verify schedhost.service"
fi

step "the packaged config, as the service user (what schedhost.service runs)"
# systemd would make these (RuntimeDirectory=, StateDirectory=); this machine may have no systemd.
install -d -o schedhost -g schedhost -m 0755 /run/schedhost
install -d -o schedhost -g schedhost -m 0750 /var/lib/schedhost
setpriv --reuid=schedhost --regid=schedhost --clear-groups \
  /usr/bin/schedhostd --config /etc/schedhost/schedhost.toml \
  >"$work/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
  [ -S /run/schedhost/schedhost.sock ] && break
  kill -0 "$daemon_pid" 2>/dev/null ||
    fail "schedhostd exited with the packaged config as user schedhost (is 127.0.0.1:10259 taken?)"
  sleep 0.2
done
[ "$(stat -c '%U %a' /run/schedhost/schedhost.sock)" = "schedhost 600" ] ||
  fail "the API socket is not schedhost-owned 0600: $(stat -c '%U %a' /run/schedhost/schedhost.sock)"
/usr/bin/schedctl profiles >"$work/profiles.txt" ||
  fail "schedctl cannot reach the packaged daemon on its default socket"
grep -q default-scheduler "$work/profiles.txt" || fail "no default-scheduler profile: $(cat "$work/profiles.txt")"
/usr/bin/schedctl plugins >"$work/plugins-default.txt"
for p in "${plugins[@]}"; do
  grep -qF "/usr/lib/schedhost/plugins/$p" "$work/plugins-default.txt" ||
    fail "the packaged daemon did not load /usr/lib/schedhost/plugins/$p"
done
# Libraries load from content-addressed copies in <state_dir>/plugins (hot swap at one path).
ls /var/lib/schedhost/plugins/*.so >/dev/null 2>&1 ||
  fail "the packaged daemon wrote no shadow copies to /var/lib/schedhost/plugins: $(cat "$work/daemon.log")"
[ "$(stat -c %U /var/lib/schedhost/plugins)" = schedhost ] ||
  fail "/var/lib/schedhost/plugins is not owned by schedhost"
grep -q '^Library versions:' "$work/plugins-default.txt" ||
  fail "schedctl plugins lists no library versions: $(cat "$work/plugins-default.txt")"
kill -TERM "$daemon_pid"
rc=0
wait "$daemon_pid" || rc=$?
daemon_pid=""
[ "$rc" -eq 0 ] || fail "schedhostd (packaged config) exited $rc on SIGTERM"
rm -rf /run/schedhost
ok "user schedhost runs the packaged config: socket schedhost 0600, ${#plugins[@]} builtin plugins loaded, clean stop"

step "build sdk/examples/node-pool against the installed SDK"
diff -r -x build -x README.md "$root/sdk/examples/node-pool" /usr/share/schedhost-sdk/template \
  >/dev/null || fail "/usr/share/schedhost-sdk/template differs from sdk/examples/node-pool"
# The README differs only in its links to the docs, which point where the package puts them.
sed 's|](\.\./\.\./\.\./docs/|](../../doc/schedhost-sdk-dev/|g' "$root/sdk/examples/node-pool/README.md" |
  diff - /usr/share/schedhost-sdk/template/README.md >/dev/null ||
  fail "the template's README differs from sdk/examples/node-pool's beyond its doc links"
for doc in plugin-authoring.md abi.md; do
  [ -f "/usr/share/doc/schedhost-sdk-dev/$doc" ] || fail "schedhost-sdk-dev lacks the $doc its template links to"
done
cp -r "$root/sdk/examples/node-pool" "$work/example"
rm -rf "$work/example/build"
ex="$work/example"
# A clean environment: no prefix path or include path that could reach the source tree.
env -u CMAKE_PREFIX_PATH -u CPATH -u CPLUS_INCLUDE_PATH \
  cmake -S "$ex" -B "$ex/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/example-configure.log" 2>&1 ||
  { cat "$work/example-configure.log" >&2; fail "configuring the example failed"; }
grep -qx 'schedhost-sdk_DIR:PATH=/usr/share/cmake/schedhost-sdk' "$ex/build/CMakeCache.txt" ||
  fail "find_package(schedhost-sdk) did not find the installed package: $(grep schedhost-sdk_DIR "$ex/build/CMakeCache.txt")"
nice cmake --build "$ex/build" >"$work/example-build.log" 2>&1 ||
  { tail -n 40 "$work/example-build.log" >&2; fail "building the example failed"; }
if grep -F "$root" "$ex/build/compile_commands.json"; then
  fail "the example build reached into the source tree (above)"
fi
ok "node_pool.so built with schedhost-sdk from /usr/share/cmake/schedhost-sdk, no path into $root"
(cd "$ex/build" && ctest --output-on-failure) >"$work/example-test.log" 2>&1 ||
  { cat "$work/example-test.log" >&2; fail "the example's test failed"; }
ok "example test: $(grep -E 'tests passed' "$work/example-test.log")"
exports=$(nm -D --defined-only "$ex/build/node_pool.so" | awk '{print $3}' |
  grep -vxE '_init|_fini|__bss_start|_edata|_end' | tr '\n' ' ')
[ "$exports" = "schedhost_plugin_library_v1 " ] || fail "node_pool.so exports: $exports"
ok "node_pool.so exports only schedhost_plugin_library_v1"

# The same plugin with pkg-config's flags only (no CMake).
read -r -a cflags <<<"$(pkg-config --cflags schedhost-sdk) $(pkg-config --variable=plugin_cflags schedhost-sdk)"
read -r -a ldflags <<<"$(pkg-config --variable=plugin_ldflags schedhost-sdk)"
if ! g++ -std=c++20 -O1 "${cflags[@]}" -c "$ex/src/node_pool.cc" -o "$work/node_pool_pc.o" ||
  ! g++ -o "$work/node_pool_pc.so" "$work/node_pool_pc.o" "${ldflags[@]}"; then
  fail "building the plugin with pkg-config's flags failed"
fi
pc_exports=$(nm -D --defined-only "$work/node_pool_pc.so" | awk '{print $3}' |
  grep -vxE '_init|_fini|__bss_start|_edata|_end' | tr '\n' ' ')
[ "$pc_exports" = "schedhost_plugin_library_v1 " ] || fail "node_pool_pc.so exports: $pc_exports"
ok "pkg-config build: node_pool_pc.so exports only schedhost_plugin_library_v1"

if [ "$rust_contrib" = 1 ]; then
  step "build the Rust template against the installed SDK"
  rex="$work/rust-example"
  cp -r /usr/share/schedhost-sdk/template-rust "$rex"
  grep -q 'path = "/usr/share/schedhost-sdk/rust/schedhost-plugin"' "$rex/Cargo.toml" ||
    fail "the Rust template does not depend on the installed crate: $(grep path "$rex/Cargo.toml")"
  (cd "$rex" && env -u SCHEDHOST_TESTING_LIBRARY -u SCHEDHOST_PLUGIN_DIR \
     CARGO_TARGET_DIR="$rex/target" "$cargo" build --release --quiet) >"$work/rust-build.log" 2>&1 ||
    { tail -n 40 "$work/rust-build.log" >&2; fail "building the Rust template failed"; }
  rexports=$(nm -D --defined-only "$rex/target/release/libtarget_load_packing.so" | awk '{print $3}' |
    grep -vxE '_init|_fini|__bss_start|_edata|_end' | tr '\n' ' ')
  [ "$rexports" = "schedhost_plugin_library_v1 " ] || fail "the Rust template exports: $rexports"
  # Its tests in the installed harness (libschedhost-testing.so of schedhost-sdk-testing, the
  # builtin plugins of schedhost), found without an environment variable.
  (cd "$rex" && env -u SCHEDHOST_TESTING_LIBRARY -u SCHEDHOST_PLUGIN_DIR \
     CARGO_TARGET_DIR="$rex/target" "$cargo" test --release --quiet) >"$work/rust-test.log" 2>&1 ||
    { tail -n 60 "$work/rust-test.log" >&2; fail "the Rust template's tests failed"; }
  ok "Rust template built and tested against the installed SDK: $(grep -c 'test result: ok' "$work/rust-test.log") test binaries passed"
fi

# --- 4. the plugin in decisions --------------------------------------------------------------
step "schedctl simulate with and without NodePool"
/usr/bin/schedctl simulate -f "$ex/example/cluster.yaml" >"$work/sim-without.txt"
/usr/bin/schedctl simulate --config "$ex/example/schedhost.toml" -f "$ex/example/cluster.yaml" \
  >"$work/sim-with.txt"
echo "  without NodePool:" && sed 's/^/    /' "$work/sim-without.txt"
echo "  with NodePool:" && sed 's/^/    /' "$work/sim-with.txt"
grep -qE '^default +web +Bound +gpu-1 ' "$work/sim-without.txt" ||
  fail "without NodePool web should land on the roomier gpu-1"
grep -qE '^default +web +Bound +general-1 ' "$work/sim-with.txt" ||
  fail "with NodePool web should land on general-1 (Score)"
grep -qE '^default +analytics +Pending .*2 node\(s\) not in pool batch' "$work/sim-with.txt" ||
  fail "with NodePool analytics should be Pending: not in pool batch (Filter)"
ok "NodePool changes placement: web gpu-1 -> general-1, analytics unschedulable"

step "the installed schedhostd with NodePool on a temporary socket"
mkdir -p "$work/run" "$work/state"
socket="unix://$work/run/schedhost.sock"
cat >"$work/daemon.toml" <<EOF
[host]
libraries = [{ path = "$ex/build/node_pool.so" }]
state_dir = "$work/state"
[api]
listen = "$socket"
[metrics]
listen = "127.0.0.1:0"
[[profile]]
name = "default-scheduler"
[profile.plugins.multi_point]
enabled = [{ name = "NodePool", weight = 5 }]
[profile.plugin_config.NodePool]
label = "example.com/pool"
EOF
/usr/bin/schedhostd --config "$work/daemon.toml" >"$work/daemon.log" 2>&1 &
daemon_pid=$!
sctl() { /usr/bin/schedctl --server "$socket" --request-timeout 10 "$@"; }
for _ in $(seq 100); do
  sctl get nodes >/dev/null 2>&1 && break
  kill -0 "$daemon_pid" 2>/dev/null || fail "schedhostd exited at start-up"
  sleep 0.2
done
sctl get nodes >/dev/null 2>"$work/probe.err" ||
  { cat "$work/probe.err" >&2; fail "schedhostd does not answer on $socket"; }
ok "schedhostd (pid $daemon_pid) serves $socket"
sctl plugins >"$work/plugins.txt"
grep -q 'NodePool' "$work/plugins.txt" || { cat "$work/plugins.txt"; fail "schedctl plugins does not list NodePool"; }
sctl apply -f "$ex/example/cluster.yaml" | sed 's/^/  /'
for _ in $(seq 100); do
  sctl get pods -o wide >"$work/pods.txt"
  grep -qE '^trainer .*gpu-1' "$work/pods.txt" && grep -qE '^web .*general-1' "$work/pods.txt" && break
  sleep 0.2
done
sed 's/^/  /' "$work/pods.txt"
grep -qE '^trainer .*gpu-1' "$work/pods.txt" || fail "trainer is not on gpu-1"
grep -qE '^web .*general-1' "$work/pods.txt" || fail "web is not on general-1"
sctl explain pod web >"$work/explain-web.txt"
sctl explain pod analytics >"$work/explain-analytics.txt"
sed 's/^/  /' "$work/explain-web.txt"
sed 's/^/  /' "$work/explain-analytics.txt"
grep -q 'NodePool' "$work/explain-web.txt" || fail "explain pod web shows no NodePool score"
grep -q 'not in pool batch' "$work/explain-analytics.txt" ||
  fail "explain pod analytics shows no NodePool verdict"
ok "NodePool took part: it scored web's nodes and filtered analytics out of every node"

sctl reload >"$work/reload.txt" || true
sed 's/^/  /' "$work/reload.txt"
grep -q 'generation 2 is live' "$work/reload.txt" || fail "schedctl reload did not swap in generation 2"
kill -HUP "$daemon_pid"
for _ in $(seq 50); do grep -q 'SIGHUP:' "$work/daemon.log" && break; sleep 0.2; done
grep -q 'SIGHUP: .*generation 3 is live' "$work/daemon.log" || fail "SIGHUP did not swap in generation 3"
kill -0 "$daemon_pid" 2>/dev/null || fail "schedhostd died on SIGHUP"
sctl profiles >"$work/profiles.txt"
grep -q 'generation: 3' "$work/profiles.txt" ||
  { cat "$work/profiles.txt"; fail "schedctl profiles does not show generation 3"; }
ok "schedctl reload and SIGHUP swapped in generations 2 and 3; daemon still serving"
kill -TERM "$daemon_pid"
rc=0
wait "$daemon_pid" || rc=$?
daemon_pid=""
[ "$rc" -eq 0 ] || fail "schedhostd exited $rc on SIGTERM"
ok "schedhostd stopped cleanly on SIGTERM"

# --- 5. upgrade keeps an edited config; purge -----------------------------------------------
step "upgrade keeps an edited /etc/schedhost/schedhost.toml"
v2="${version}+upgradetest"
cpack --config "$build/CPackConfig.cmake" -G "DEB;RPM" -B "$work/v2" -D "CPACK_PACKAGE_VERSION=$v2" \
  >"$work/cpack-v2.log" 2>&1 || { tail -n 20 "$work/cpack-v2.log" >&2; fail "cpack (v2) failed"; }
sed -i 's/^parallelism = 16$/parallelism = 7/' /etc/schedhost/schedhost.toml
echo "# edited by test-packages.sh" >>/etc/schedhost/schedhost.toml
cp /etc/schedhost/schedhost.toml "$work/edited.toml"
grep -qx 'parallelism = 7' "$work/edited.toml" || fail "could not edit the config (no 'parallelism = 16' line)"
# schedhost-sdk-testing pins schedhost and schedhost-sdk-dev to its own version, fixed when the
# tree was configured: the v2 repack (CPACK_PACKAGE_VERSION overridden) keeps 0.1.0 there, so it
# goes before the upgrade, which is about the host's conffile.
DEBIAN_FRONTEND=noninteractive apt-get purge -y schedhost-sdk-testing >"$work/apt-v2.log" 2>&1 ||
  { tail -n 20 "$work/apt-v2.log" >&2; fail "removing schedhost-sdk-testing before the upgrade failed"; }
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  "$work/v2/schedhost_${v2}_amd64.deb" "$work/v2/schedhost-sdk-dev_${v2}_all.deb" \
  >>"$work/apt-v2.log" 2>&1 || { tail -n 20 "$work/apt-v2.log" >&2; fail "upgrading to $v2 failed"; }
[ "$(dpkg-query -W -f='${Version}' schedhost)" = "$v2" ] || fail "schedhost is not at $v2 after the upgrade"
cmp -s "$work/edited.toml" /etc/schedhost/schedhost.toml || {
  diff "$work/edited.toml" /etc/schedhost/schedhost.toml >&2
  fail "the upgrade changed the edited /etc/schedhost/schedhost.toml"
}
[ "$(stat -c '%U:%G %a' /etc/schedhost/schedhost.toml)" = "root:schedhost 640" ] ||
  fail "the upgrade changed the config's owner or mode"
/usr/bin/schedctl config check --config /etc/schedhost/schedhost.toml >/dev/null ||
  fail "the edited config does not pass schedctl config check after the upgrade"
ok "upgraded $version -> $v2; the edited config is kept byte for byte and still valid"

step "rpm upgrade keeps an edited config (in a scratch rpm root, without scripts or dependencies)"
# Debian cannot run the rpm's scriptlets or resolve its Requires; the payload and %config
# handling are what this checks.
rr="$work/rpmroot"
mkdir -p "$rr"
rpm --root "$rr" --initdb
rpm_v2=$(ls "$work"/v2/schedhost-[0-9]*.x86_64.rpm)
rpm --root "$rr" -i --nodeps --noscripts "$rpm_host" >"$work/rpm-i.log" 2>&1 ||
  { cat "$work/rpm-i.log" >&2; fail "rpm -i into $rr failed"; }
if [ ! -x "$rr/usr/bin/schedhostd" ] || [ ! -f "$rr/usr/lib/schedhost/plugins/${plugins[0]}" ]; then
  fail "the rpm payload lacks schedhostd or the plugins"
fi
echo "# edited by test-packages.sh" >>"$rr/etc/schedhost/schedhost.toml"
cp "$rr/etc/schedhost/schedhost.toml" "$work/rpm-edited.toml"
rpm --root "$rr" -U --nodeps --noscripts "$rpm_v2" >"$work/rpm-u.log" 2>&1 ||
  { cat "$work/rpm-u.log" >&2; fail "rpm -U to $(basename "$rpm_v2") failed"; }
[ "$(rpm --root "$rr" -q --queryformat '%{VERSION}' schedhost)" = "$v2" ] ||
  fail "the rpm root is not at $v2 after rpm -U"
cmp -s "$work/rpm-edited.toml" "$rr/etc/schedhost/schedhost.toml" ||
  fail "rpm -U changed the edited /etc/schedhost/schedhost.toml"
ok "rpm -U $(basename "$rpm_host") -> $(basename "$rpm_v2") keeps the edited config"

step "purge"
dpkg --purge schedhost-sdk-testing schedhost schedhost-sdk-dev >"$work/purge.log" 2>&1 ||
  { cat "$work/purge.log" >&2; fail "dpkg --purge failed"; }
installed=0
[ ! -e /usr/bin/schedhostd ] || fail "/usr/bin/schedhostd is left after purge"
[ ! -e /etc/schedhost ] || fail "/etc/schedhost is left after purge"
! getent passwd schedhost >/dev/null || fail "the schedhost user is left after purge"
ok "purged: binaries, config, user gone"

printf '\npackages: all checks passed in %ss\n' "$((SECONDS - start))"
