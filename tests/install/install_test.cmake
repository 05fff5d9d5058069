# tests/install: what a plugin author and an operator get without packages, one check per MODE.
#
#   cmake -DMODE=<mode> -DSOURCE_DIR=<repo> -DBUILD_DIR=<schedhost build> -DWORK=<scratch dir>
#         [-DPREFIX=... -DCXX=... ...] -P install_test.cmake
#
# MODE (the variables each one reads are set by tests/install/CMakeLists.txt):
#   sdk-install   `cmake --install BUILD --component sdk --prefix PREFIX` (a fresh PREFIX): every
#                 header of sdk/include, the CMake package, the .pc and the template are there;
#                 then `--component testing`: libschedhost-testing.so, testing.hpp, the
#                 component's targets and the builtin plugins in PREFIX/lib/schedhost/plugins
#                 (nothing of the host component is installed); under the prefix /usr (the
#                 packages', DESTDIR) the component leaves the plugins to the schedhost package
#   find-install  the template installed in PREFIX, configured with CMAKE_PREFIX_PATH=PREFIX:
#                 find_package(schedhost-sdk 1.4 COMPONENTS testing) finds PREFIX's package,
#                 nothing comes from the source tree's sdk/; its tests build against PREFIX's
#                 libschedhost-testing.so and run (the builtin plugins the testing component
#                 installed found beside it)
#   find-build    sdk/examples/node-pool with CMAKE_PREFIX_PATH=BUILD: the build tree's package;
#                 its tests build against BUILD's libschedhost-testing.so and run
#   subdirectory  a project doing add_subdirectory(<repo>/sdk) and then schedhost_add_plugin(),
#                 with no module path or package of its own
#   pkg-config    node_pool.cc compiled and linked by CXX with only pkg-config's flags, from
#                 PKG_CONFIG_PATH=<PREFIX's pkgconfig dir>
#   tsan          tests/install/tsan (the Probe plugin and a harness test whose Score runs on
#                 the host's helper threads) built by CXX (g++) with -fsanitize=thread against
#                 BUILD's uninstrumented libschedhost-testing.so, run with halt_on_error: the
#                 advice of docs/plugin-authoring.md holds without suppressions
#   doc-links     every component installed in a fresh WORK/prefix: each relative link of every
#                 installed Markdown file (the docs, the template's README) resolves there, its
#                 #fragment to a heading (check_doc_links.py, run by PYTHON)
#   config-prefix the host's config install rule (install-config.cmake) writes under the prefix
#                 it is given, /etc for /usr; no generated install rule has an absolute
#                 destination
# Each plugin built must export only the entry symbol (tests/abi/check_exports.sh). A failure
# ends in FATAL_ERROR with what went wrong; build logs are in WORK.
cmake_minimum_required(VERSION 3.25)

function(fail)
  list(JOIN ARGN "" msg)
  message(FATAL_ERROR "FAIL (${MODE}): ${msg}")
endfunction()

# run(<log name> COMMAND...): runs a command with its output in WORK/<log name>.log, printed on
# failure.
function(run name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  file(WRITE ${WORK}/${name}.log "${out}")
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " cmd)
    fail("${name} failed (${rc}): ${cmd}\n${out}")
  endif()
endfunction()

# configure_and_build(<source dir> <cmake args>...): configures and builds a plugin project in
# WORK/build with this build's generator and compiler, in an environment that cannot reach the
# schedhost tree by itself.
function(configure_and_build src)
  set(launcher "")
  if(LAUNCHER)
    set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
  endif()
  run(configure ${CMAKE_COMMAND} -E env --unset=CMAKE_PREFIX_PATH --unset=CPATH
      --unset=CPLUS_INCLUDE_PATH --unset=CMAKE_MODULE_PATH
      ${CMAKE_COMMAND} -S ${src} -B ${WORK}/build -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
      ${launcher} -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
      -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF ${ARGN})
  run(build ${CMAKE_COMMAND} --build ${WORK}/build)
endfunction()

# expect_package_dir(<dir>): find_package(schedhost-sdk) took the package in <dir>.
function(expect_package_dir dir)
  file(STRINGS ${WORK}/build/CMakeCache.txt found REGEX "^schedhost-sdk_DIR:")
  if(NOT found STREQUAL "schedhost-sdk_DIR:PATH=${dir}")
    fail("find_package(schedhost-sdk) should use ${dir}, not: ${found}")
  endif()
endfunction()

# expect_plugin(<.so>): it was built and exports only the entry symbol.
function(expect_plugin lib)
  if(NOT EXISTS ${lib})
    fail("${lib} was not built")
  endif()
  run(exports sh ${CHECK_EXPORTS} ${NM} ${READELF} ${lib})
  message(STATUS "ok: ${lib} exports only schedhost_plugin_library_v1")
endfunction()

# run_example_tests(): runs the tests of the plugin project built in WORK/build, with no
# SCHEDHOST_PLUGIN_DIR: the harness library must find the host's plugins beside itself.
function(run_example_tests)
  run(test ${CMAKE_COMMAND} -E env --unset=SCHEDHOST_PLUGIN_DIR
      ${CTEST} --test-dir ${WORK}/build --output-on-failure)
  file(STRINGS ${WORK}/test.log passed REGEX "tests passed")
  if(NOT passed MATCHES "100% tests passed")
    fail("the example's tests did not all pass: ${passed}")
  endif()
  message(STATUS "ok: the example's tests ran against the harness library: ${passed}")
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

# Under a sanitizer build the harness library is instrumented, and an author's test executable,
# built without the sanitizer, cannot load it (the ASan runtime must come first). There the
# example is built without its tests; the unsanitized builds run them (this test in a dev tree,
# and scripts/test-packages.sh against the installed packages).
set(example_tests ON)
if(SANITIZE)
  set(example_tests OFF)
  message(STATUS "note: a ${SANITIZE}-sanitized build: the example's tests are not built here")
endif()

if(MODE STREQUAL "sdk-install")
  file(REMOVE_RECURSE ${PREFIX})
  run(install ${CMAKE_COMMAND} --install ${BUILD_DIR} --component sdk --prefix ${PREFIX})
  file(GLOB_RECURSE headers RELATIVE ${SOURCE_DIR}/sdk/include ${SOURCE_DIR}/sdk/include/*.h
       ${SOURCE_DIR}/sdk/include/*.hpp)
  # the testing component's (testing.hpp and its C API testing.h), checked below
  list(REMOVE_ITEM headers schedhost/testing.hpp schedhost/testing.h)
  if(NOT headers)
    fail("no headers in ${SOURCE_DIR}/sdk/include")
  endif()
  set(expected ${PACKAGE_DIR}/schedhost-sdk-config.cmake
               ${PACKAGE_DIR}/schedhost-sdk-config-version.cmake
               ${PACKAGE_DIR}/schedhost-sdk-targets.cmake ${PACKAGE_DIR}/SchedhostPlugin.cmake
               ${PKG_CONFIG_DIR}/schedhost-sdk.pc ${TEMPLATE}/CMakeLists.txt
               ${TEMPLATE}/src/node_pool.cc ${TEMPLATE}/test/node_pool_test.cc)
  foreach(h IN LISTS headers)
    list(APPEND expected ${PREFIX}/include/${h})
  endforeach()
  foreach(f IN LISTS expected)
    if(NOT EXISTS ${f})
      fail("the sdk component did not install ${f}")
    endif()
  endforeach()
  # Every relative link of the installed template's README leads to an installed file.
  file(READ ${TEMPLATE}/README.md readme)
  string(REGEX MATCHALL "\\(\\.\\./[^)#]*" links "${readme}")
  if(NOT links)
    fail("${TEMPLATE}/README.md links to no installed document")
  endif()
  foreach(link IN LISTS links)
    string(SUBSTRING "${link}" 1 -1 target)
    if(NOT EXISTS ${TEMPLATE}/${target})
      fail("${TEMPLATE}/README.md links to ${target}, which the sdk component did not install")
    endif()
  endforeach()
  # Nothing outside the prefix (cmake --install prints every file it writes).
  file(STRINGS ${WORK}/install.log written REGEX "^-- (Installing|Up-to-date): ")
  foreach(line IN LISTS written)
    string(REGEX REPLACE "^-- [A-Za-z-]+: " "" path "${line}")
    string(FIND "${path}" "${PREFIX}/" at)
    if(NOT at EQUAL 0)
      fail("the sdk component wrote outside the prefix: ${path}")
    endif()
  endforeach()
  list(LENGTH headers n)
  message(STATUS "ok: ${PREFIX} has the ${n} headers of sdk/include, the CMake package, "
                 "the .pc and the template")
  # testing.hpp ships with the library (component testing), not with the sdk component.
  if(EXISTS ${PREFIX}/include/schedhost/testing.hpp)
    fail("the sdk component installed testing.hpp, which belongs to the testing component")
  endif()
  # Without the testing component, asking for it fails find_package and says what to install.
  file(WRITE ${WORK}/no-testing/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(no_testing LANGUAGES CXX)
find_package(schedhost-sdk REQUIRED COMPONENTS testing)
")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK}/no-testing -B ${WORK}/no-testing/build
                          -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${PREFIX}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "schedhost-sdk-testing")
    fail("find_package(schedhost-sdk COMPONENTS testing) without the component (${rc}):\n${out}")
  endif()
  run(install-testing ${CMAKE_COMMAND} --install ${BUILD_DIR} --component testing
      --prefix ${PREFIX})
  foreach(f ${PREFIX}/lib/schedhost/testing/libschedhost-testing.so ${PREFIX}/include/schedhost/testing.hpp
            ${PACKAGE_DIR}/schedhost-sdk-testing-targets.cmake)
    if(NOT EXISTS ${f})
      fail("the testing component did not install ${f}")
    endif()
  endforeach()
  file(STRINGS ${WORK}/install-testing.log written REGEX "^-- (Installing|Up-to-date): ")
  foreach(line IN LISTS written)
    string(REGEX REPLACE "^-- [A-Za-z-]+: " "" path "${line}")
    string(FIND "${path}" "${PREFIX}/" at)
    if(NOT at EQUAL 0)
      fail("the testing component wrote outside the prefix: ${path}")
    endif()
  endforeach()
  # The library exports its facade (the C++ API and the C API of testing.h) and nothing of the
  # host it carries.
  execute_process(COMMAND sh -c "${NM} -D -C --defined-only \"$1\" | grep -v -e 'schedhost::testing::' -e ' schedhost_testing_' -e ' _init$' -e ' _fini$' -e ' _edata$' -e ' _end$' -e ' __bss_start$'"
                          sh ${PREFIX}/lib/schedhost/testing/libschedhost-testing.so
                  OUTPUT_VARIABLE leaked RESULT_VARIABLE rc)
  if(NOT rc EQUAL 1)
    fail("libschedhost-testing.so exports more than schedhost::testing and schedhost_testing_* (grep ${rc}):\n${leaked}")
  endif()
  # The builtin plugins the library loads come with it under a prefix of its own (the host
  # component is not installed here); under /usr the schedhost package owns them.
  file(GLOB plugins RELATIVE ${PREFIX}/lib/schedhost/plugins ${PREFIX}/lib/schedhost/plugins/*.so)
  foreach(p priority_sort.so default_binder.so)
    if(NOT p IN_LIST plugins)
      fail("the testing component did not install the builtin plugin ${p} in "
           "${PREFIX}/lib/schedhost/plugins: ${plugins}")
    endif()
  endforeach()
  run(install-testing-usr ${CMAKE_COMMAND} -E env DESTDIR=${WORK}/destdir
      ${CMAKE_COMMAND} --install ${BUILD_DIR} --component testing --prefix /usr)
  file(GLOB_RECURSE usr_plugins ${WORK}/destdir/usr/lib/schedhost/plugins/*)
  if(usr_plugins)
    fail("the testing component installed plugins under /usr, the schedhost package's: "
         "${usr_plugins}")
  endif()
  list(LENGTH plugins n)
  message(STATUS "ok: the testing component: the library (only schedhost::testing exported), "
                 "its header and targets, ${n} builtin plugins beside it")

elseif(MODE STREQUAL "find-install")
  # The template as an author copies it from the installed SDK.
  configure_and_build(${TEMPLATE} -DCMAKE_PREFIX_PATH=${PREFIX}
                      -DNODE_POOL_BUILD_TESTS=${example_tests})
  expect_package_dir(${PACKAGE_DIR})
  file(READ ${WORK}/build/compile_commands.json commands)
  string(FIND "${commands}" "${SOURCE_DIR}/sdk/" at)
  if(NOT at EQUAL -1)
    fail("the build reached into the source tree's sdk/:\n${commands}")
  endif()
  string(FIND "${commands}" "${PREFIX}/include" at)
  if(at EQUAL -1)
    fail("the build does not use ${PREFIX}/include:\n${commands}")
  endif()
  expect_plugin(${WORK}/build/node_pool.so)
  if(example_tests)
    file(READ ${WORK}/build/build.ninja ninja)
    string(FIND "${ninja}" "${PREFIX}/lib/schedhost/testing/libschedhost-testing.so" at)
    if(at EQUAL -1)
      fail("the example's test does not link ${PREFIX}/lib/schedhost/testing/libschedhost-testing.so")
    endif()
    run_example_tests()
  endif()

elseif(MODE STREQUAL "find-build")
  configure_and_build(${SOURCE_DIR}/sdk/examples/node-pool -DCMAKE_PREFIX_PATH=${BUILD_DIR}
                      -DNODE_POOL_BUILD_TESTS=${example_tests})
  expect_package_dir(${PACKAGE_DIR})
  expect_plugin(${WORK}/build/node_pool.so)
  if(example_tests)
    run_example_tests()
  endif()

elseif(MODE STREQUAL "subdirectory")
  file(WRITE ${WORK}/src/CMakeLists.txt "cmake_minimum_required(VERSION 3.25)
project(sdk_subdirectory_test LANGUAGES CXX)
add_subdirectory(\"${SOURCE_DIR}/sdk\" schedhost-sdk)
if(NOT SCHEDHOST_SDK_VERSION)
  message(FATAL_ERROR \"add_subdirectory(sdk) did not set SCHEDHOST_SDK_VERSION\")
endif()
schedhost_add_plugin(node_pool SOURCES \"${SOURCE_DIR}/sdk/examples/node-pool/src/node_pool.cc\")
")
  configure_and_build(${WORK}/src)
  expect_plugin(${WORK}/build/node_pool.so)

elseif(MODE STREQUAL "pkg-config")
  set(ENV{PKG_CONFIG_PATH} ${PKG_CONFIG_DIR})
  set(ENV{PKG_CONFIG_LIBDIR} ${PKG_CONFIG_DIR})  # not the system's: only PREFIX's .pc
  foreach(q cflags plugin_cflags plugin_ldflags includedir)
    if(q STREQUAL "cflags")
      set(arg --cflags)
    else()
      set(arg --variable=${q})
    endif()
    execute_process(COMMAND ${PKG_CONFIG} ${arg} schedhost-sdk RESULT_VARIABLE rc
                    OUTPUT_VARIABLE ${q} ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      fail("pkg-config ${arg} schedhost-sdk: ${err}")
    endif()
    separate_arguments(${q} UNIX_COMMAND "${${q}}")
  endforeach()
  # Relocated: the include directory is PREFIX's, wherever PREFIX is.
  file(REAL_PATH "${includedir}" includedir)
  if(NOT includedir STREQUAL "${PREFIX}/include")
    fail("schedhost-sdk.pc's includedir is ${includedir}, not ${PREFIX}/include")
  endif()
  run(compile ${CXX} -std=c++20 ${cflags} ${plugin_cflags} -c ${TEMPLATE}/src/node_pool.cc
      -o ${WORK}/node_pool.o)
  run(link ${CXX} -o ${WORK}/node_pool.so ${WORK}/node_pool.o ${plugin_ldflags})
  expect_plugin(${WORK}/node_pool.so)

elseif(MODE STREQUAL "tsan")
  if(SANITIZE)
    message(STATUS "note: a ${SANITIZE}-sanitized build: its harness library cannot load into a "
                   "ThreadSanitizer process; nothing to check here")
    return()
  endif()
  configure_and_build(${SOURCE_DIR}/tests/install/tsan -DCMAKE_PREFIX_PATH=${BUILD_DIR}
                      -DPROBE_SOURCE=${SOURCE_DIR}/host/testing/testdata/probe_plugin.cc)
  expect_package_dir(${PACKAGE_DIR})
  run(tsan-test ${CMAKE_COMMAND} -E env --unset=SCHEDHOST_PLUGIN_DIR
      TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1
      ${WORK}/build/tsan_harness_test)
  message(STATUS "ok: a ThreadSanitizer test of a plugin reports nothing in the harness")

elseif(MODE STREQUAL "doc-links")
  foreach(component host contrib sdk testing)
    run(install-${component} ${CMAKE_COMMAND} --install ${BUILD_DIR} --component ${component}
        --prefix ${WORK}/prefix)
  endforeach()
  run(doc-links ${PYTHON} ${SOURCE_DIR}/tests/install/check_doc_links.py ${WORK}/prefix)
  file(READ ${WORK}/doc-links.log summary)
  string(STRIP "${summary}" summary)
  message(STATUS "ok: ${summary}")

elseif(MODE STREQUAL "config-prefix")
  # The rule cpack and `cmake --install` run, alone: under a prefix, and under /usr (DESTDIR).
  run(install-prefix ${CMAKE_COMMAND} -DCMAKE_INSTALL_PREFIX=${WORK}/prefix -P ${CONFIG_SCRIPT})
  if(NOT EXISTS ${WORK}/prefix/etc/schedhost/schedhost.toml)
    fail("--prefix ${WORK}/prefix did not write ${WORK}/prefix/etc/schedhost/schedhost.toml")
  endif()
  run(install-usr ${CMAKE_COMMAND} -E env DESTDIR=${WORK}/destdir
      ${CMAKE_COMMAND} -DCMAKE_INSTALL_PREFIX=/usr -P ${CONFIG_SCRIPT})
  file(GLOB_RECURSE written RELATIVE ${WORK}/destdir ${WORK}/destdir/*)
  if(NOT written STREQUAL "etc/schedhost/schedhost.toml")
    fail("the prefix /usr should give /etc/schedhost/schedhost.toml (the packages' conffile), "
         "not: ${written}")
  endif()
  # An absolute DESTINATION would ignore --prefix; relative ones are written as
  # "${CMAKE_INSTALL_PREFIX}/..." in the install scripts (the projects these tests build in
  # WORK's siblings are not schedhost's).
  file(GLOB_RECURSE all_scripts ${BUILD_DIR}/cmake_install.cmake)
  set(scripts "")
  foreach(s IN LISTS all_scripts)
    string(FIND "${s}" "${TESTS_DIR}/" at)
    if(NOT at EQUAL 0)
      list(APPEND scripts ${s})
    endif()
  endforeach()
  foreach(s IN LISTS scripts)
    file(STRINGS ${s} absolute REGEX "file\\(INSTALL DESTINATION \"/")
    if(absolute)
      fail("${s} installs to an absolute destination, which ignores --prefix: ${absolute}")
    endif()
  endforeach()
  list(LENGTH scripts n)
  message(STATUS "ok: config under the prefix, /etc for /usr; ${n} install scripts, "
                 "no absolute destination")

else()
  fail("unknown MODE '${MODE}'")
endif()
