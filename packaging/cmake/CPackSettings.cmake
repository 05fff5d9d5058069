# CPack settings for the `schedhost`, `schedhost-contrib`, `schedhost-sdk-dev` and
# `schedhost-sdk-testing` packages (DEB and RPM), included
# by packaging/CMakeLists.txt after the install rules.
#
# SCHEDHOST_PACKAGE_VERSION and SCHEDHOST_PACKAGE_CONTACT are set in packaging/CMakeLists.txt.

set(CPACK_PACKAGE_NAME schedhost)
set(CPACK_PACKAGE_VENDOR "schedhost")
set(CPACK_PACKAGE_VERSION "${SCHEDHOST_PACKAGE_VERSION}")
set(CPACK_PACKAGE_CONTACT "${SCHEDHOST_PACKAGE_CONTACT}")
# The first line of a component's description is its summary. CPackDeb puts
# CPACK_PACKAGE_DESCRIPTION_SUMMARY in front of every description unless it is CPack's own
# default, so it is set to exactly that.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_GENERATOR "DEB;RPM")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Strip what ships (the RelWithDebInfo `ci` tree carries debug info); the plugins' manifest
# section is allocated, so strip keeps it.
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL host contrib sdk testing)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_RPM_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING IGNORE)

set(_host_summary "Kubernetes scheduling framework as a native plugin host")
# Extended descriptions: lines of at most 80 columns once dpkg indents them.
set(_host_long "schedhost runs the Kubernetes scheduling framework (kube-scheduler's
extension points, profiles and scheduling queue) as a daemon whose plugins are
shared libraries on a stable C ABI. This package ships the daemon schedhostd
with its systemd unit, the schedctl client and the builtin plugins (upstream's
default profile) in /usr/lib/schedhost/plugins.")
set(_sdk_summary "plugin SDK for schedhost")
set(_sdk_long "Headers (the C ABI plugin.h and the C++ wrapper plugin.hpp), the CMake
package schedhost-sdk with schedhost_add_plugin(), a pkg-config file and a
plugin template project for writing schedhost plugins out of tree.")
set(CPACK_COMPONENT_HOST_DESCRIPTION "${_host_summary}
${_host_long}")
set(CPACK_COMPONENT_SDK_DESCRIPTION "${_sdk_summary}
${_sdk_long}")
set(_testing_summary "plugin test harness for schedhost (the host in-process)")
set(_testing_long "libschedhost-testing.so and the header schedhost/testing.hpp (CMake:
the component testing of schedhost-sdk, target schedhost::testing): the host's
own loader, framework and simulation in-process, so the tests of a plugin load
the built plugin and run each extension point, its queueing hints and whole
simulations from GoogleTest.")
set(CPACK_COMPONENT_TESTING_DESCRIPTION "${_testing_summary}
${_testing_long}")
set(_contrib_summary "contrib plugins for schedhost (gang scheduling, elastic quotas)")
set(_contrib_long "Plugins beyond kube-scheduler's default profile, built against the
schedhost SDK only: Coscheduling (gang scheduling of pods labelled
scheduling.x-k8s.io/pod-group) and CapacityScheduling (elastic quotas per namespace,
with borrowing reclaimed by preemption). They install beside the builtin plugins in
/usr/lib/schedhost/plugins; a profile enables them by name.")
set(CPACK_COMPONENT_CONTRIB_DESCRIPTION "${_contrib_summary}
${_contrib_long}")

# --- DEB ---------------------------------------------------------------------------------
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_DEBIAN_HOST_PACKAGE_NAME schedhost)
set(CPACK_DEBIAN_HOST_PACKAGE_SECTION admin)
# dpkg-shlibdeps computes the runtime libraries (libgrpc++, libprotobuf, libspdlog, ...) from
# the binaries; the maintainer scripts add adduser.
set(CPACK_DEBIAN_HOST_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_HOST_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_HOST_PACKAGE_SUGGESTS "schedhost-sdk-dev")
set(CPACK_DEBIAN_HOST_PACKAGE_CONTROL_EXTRA
    "${_pkg}/deb/conffiles;${_pkg}/deb/postinst;${_pkg}/deb/prerm;${_pkg}/deb/postrm")
set(CPACK_DEBIAN_CONTRIB_PACKAGE_NAME schedhost-contrib)
set(CPACK_DEBIAN_CONTRIB_PACKAGE_SECTION admin)
# The plugins link only libc and the C++ runtime (dpkg-shlibdeps) and need the host's ABI.
set(CPACK_DEBIAN_CONTRIB_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_CONTRIB_PACKAGE_DEPENDS "schedhost (= ${SCHEDHOST_PACKAGE_VERSION})")
set(CPACK_DEBIAN_SDK_PACKAGE_NAME schedhost-sdk-dev)
set(CPACK_DEBIAN_SDK_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_SDK_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_SDK_PACKAGE_RECOMMENDS "g++ (>= 4:12), cmake (>= 3.25), pkg-config")
set(CPACK_DEBIAN_SDK_PACKAGE_SUGGESTS "schedhost, libgtest-dev")
# The library links the host's runtime libraries (dpkg-shlibdeps) and finds the builtin
# plugins of the schedhost package beside itself.
set(CPACK_DEBIAN_TESTING_PACKAGE_NAME schedhost-sdk-testing)
set(CPACK_DEBIAN_TESTING_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_TESTING_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_TESTING_PACKAGE_DEPENDS
    "schedhost (= ${SCHEDHOST_PACKAGE_VERSION}), schedhost-sdk-dev (= ${SCHEDHOST_PACKAGE_VERSION})")
set(CPACK_DEBIAN_TESTING_PACKAGE_SUGGESTS "libgtest-dev, libgmock-dev")

# --- RPM ---------------------------------------------------------------------------------
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_RELOCATABLE OFF)
set(CPACK_RPM_PACKAGE_LICENSE "Unspecified")
set(CPACK_RPM_PACKAGE_GROUP "System Environment/Daemons")
set(CPACK_RPM_PACKAGE_URL "https://kubernetes.io/docs/concepts/scheduling-eviction/scheduling-framework/")
set(CPACK_RPM_CONTRIB_PACKAGE_NAME schedhost-contrib)
set(CPACK_RPM_CONTRIB_PACKAGE_SUMMARY "${_contrib_summary}")
set(CPACK_RPM_CONTRIB_PACKAGE_DESCRIPTION "${_contrib_long}")
set(CPACK_RPM_CONTRIB_PACKAGE_AUTOREQ OFF)
set(CPACK_RPM_CONTRIB_PACKAGE_AUTOPROV OFF)
set(CPACK_RPM_CONTRIB_PACKAGE_REQUIRES
    "schedhost = ${SCHEDHOST_PACKAGE_VERSION}, libstdc++, glibc")
set(CPACK_RPM_HOST_PACKAGE_NAME schedhost)
set(CPACK_RPM_HOST_PACKAGE_SUMMARY "${_host_summary}")
set(CPACK_RPM_HOST_PACKAGE_DESCRIPTION "${_host_long}")
# Explicit requirements, by the package names RPM distributions use for what dpkg-shlibdeps
# finds on Debian (Fedora: grpc-cpp, protobuf, spdlog, fmt, yaml-cpp, tomlplusplus, abseil-cpp,
# openssl-libs, c-ares, re2, zlib); automatic soname requirements are off because these
# binaries link Debian 12's sonames, which an RPM distribution names differently.
set(CPACK_RPM_HOST_PACKAGE_AUTOREQ OFF)
set(CPACK_RPM_HOST_PACKAGE_AUTOPROV OFF)
set(CPACK_RPM_HOST_PACKAGE_REQUIRES
    "grpc-cpp, protobuf, spdlog, fmt, yaml-cpp, tomlplusplus, abseil-cpp, openssl-libs, c-ares, re2, zlib, libstdc++, glibc, systemd")
set(CPACK_RPM_HOST_PACKAGE_REQUIRES_PRE "shadow-utils")
set(CPACK_RPM_HOST_POST_INSTALL_SCRIPT_FILE "${_pkg}/rpm/post.sh")
set(CPACK_RPM_HOST_PRE_UNINSTALL_SCRIPT_FILE "${_pkg}/rpm/preun.sh")
set(CPACK_RPM_HOST_POST_UNINSTALL_SCRIPT_FILE "${_pkg}/rpm/postun.sh")
# rpm keeps an edited config and writes the new default beside it as .rpmnew. The config is in
# /etc because cpack installs with the prefix /usr (cmake/install-config.cmake.in).
set(CPACK_RPM_HOST_USER_FILELIST "%config(noreplace) /etc/schedhost/schedhost.toml")
set(CPACK_RPM_SDK_PACKAGE_NAME schedhost-sdk-dev)
set(CPACK_RPM_SDK_PACKAGE_SUMMARY "${_sdk_summary}")
set(CPACK_RPM_SDK_PACKAGE_DESCRIPTION "${_sdk_long}")
set(CPACK_RPM_SDK_PACKAGE_ARCHITECTURE noarch)
set(CPACK_RPM_SDK_PACKAGE_AUTOREQPROV OFF)
set(CPACK_RPM_SDK_PACKAGE_REQUIRES "gcc-c++ >= 12")
set(CPACK_RPM_TESTING_PACKAGE_NAME schedhost-sdk-testing)
set(CPACK_RPM_TESTING_PACKAGE_SUMMARY "${_testing_summary}")
set(CPACK_RPM_TESTING_PACKAGE_DESCRIPTION "${_testing_long}")
set(CPACK_RPM_TESTING_PACKAGE_AUTOREQ OFF)
set(CPACK_RPM_TESTING_PACKAGE_AUTOPROV OFF)
set(CPACK_RPM_TESTING_PACKAGE_REQUIRES
    "schedhost = ${SCHEDHOST_PACKAGE_VERSION}, schedhost-sdk-dev = ${SCHEDHOST_PACKAGE_VERSION}, spdlog, fmt, yaml-cpp, tomlplusplus, libstdc++, glibc")
# Directories other packages own: listed in no schedhost RPM.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    /usr/lib/systemd /usr/lib/systemd/system /usr/share/cmake /usr/share/pkgconfig
    /usr/share/lintian /usr/share/lintian/overrides /usr/share/man /usr/share/man/man1
    /usr/share/man/man8)
# No /usr/lib/.build-id links: debug info is stripped and not shipped in a -debuginfo package.
set(CPACK_RPM_SPEC_MORE_DEFINE "%define _build_id_links none")

include(CPack)
cpack_add_component(host DISPLAY_NAME "schedhost" DESCRIPTION "${_host_summary}
${_host_long}")
cpack_add_component(sdk DISPLAY_NAME "schedhost-sdk-dev" DESCRIPTION "${_sdk_summary}
${_sdk_long}")
cpack_add_component(testing DISPLAY_NAME "schedhost-sdk-testing" DESCRIPTION "${_testing_summary}
${_testing_long}")
