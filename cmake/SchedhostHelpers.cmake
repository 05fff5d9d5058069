# Helpers so every schedhost target is declared the same way (STYLE.md).
#
#   schedhost_cc_library(NAME model SRCS a.cc b.cc DEPS fmt::fmt [PUBLIC_DEPS ...])
#     -> static library schedhost_model, alias schedhost::model, include root = repo root.
#   schedhost_cc_test(NAME model_test SRCS model_test.cc DEPS schedhost::model)
#     -> GoogleTest binary registered with ctest (only when tests are built); its main
#        (cmake/test_main.cc, built once as schedhost_test_main) sets SCHEDHOST_PLUGIN_DIR and
#        SCHEDHOST_SOURCE_DIR.
#   schedhost_cc_binary(NAME schedctl SRCS main.cc DEPS ...)

# Warnings, Werror and sanitizers travel on this INTERFACE target, never as global flags.
add_library(schedhost_flags INTERFACE)
add_library(schedhost::flags ALIAS schedhost_flags)
target_compile_options(schedhost_flags INTERFACE -Wall -Wextra -Wno-missing-field-initializers)
if(SCHEDHOST_WERROR)
  target_compile_options(schedhost_flags INTERFACE -Werror)
endif()
if(SCHEDHOST_SANITIZE STREQUAL "address")
  target_compile_options(schedhost_flags INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                   -fno-sanitize-recover=undefined)
  target_link_options(schedhost_flags INTERFACE -fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # clang links its sanitizer runtime statically into executables only, so a plugin module
    # (linked with -Wl,--no-undefined) could not resolve it: every target links the shared
    # runtime instead, found through the rpath.
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-runtime-dir
                    OUTPUT_VARIABLE _runtime_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
    target_link_options(schedhost_flags INTERFACE -shared-libasan -Wl,-rpath,${_runtime_dir})
  endif()
elseif(SCHEDHOST_SANITIZE STREQUAL "thread")
  target_compile_options(schedhost_flags INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  # Asio orders handlers with its scheduler's mutex, which TSan sees; its extra fences TSan does
  # not model (-Wtsan), so leave them out of this build.
  target_compile_definitions(schedhost_flags INTERFACE BOOST_ASIO_DISABLE_FENCED_BLOCK)
  target_link_options(schedhost_flags INTERFACE -fsanitize=thread)
elseif(NOT SCHEDHOST_SANITIZE STREQUAL "")
  message(FATAL_ERROR "SCHEDHOST_SANITIZE must be '', address or thread, not '${SCHEDHOST_SANITIZE}'")
endif()
if(SCHEDHOST_FUZZ)
  target_compile_options(schedhost_flags INTERFACE -fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer)
  target_link_options(schedhost_flags INTERFACE -fsanitize=address)
endif()
if(SCHEDHOST_CLANG_TIDY)
  find_program(SCHEDHOST_CLANG_TIDY_EXE NAMES clang-tidy-14 clang-tidy REQUIRED)
endif()

# schedhost_tidy(<target>) puts a target's sources under clang-tidy: the `tidy` target
# (SCHEDHOST_CLANG_TIDY builds) checks every target recorded here, after the build, in one
# parallel pass (scripts/tidy.py) instead of one clang-tidy run beside every compile.
function(schedhost_tidy target)
  if(SCHEDHOST_CLANG_TIDY)
    set_property(GLOBAL APPEND PROPERTY SCHEDHOST_TIDY_TARGETS ${target})
  endif()
endfunction()

function(_schedhost_common target)
  cmake_parse_arguments(C "NO_TIDY" "" "" ${ARGN})
  target_link_libraries(${target} PRIVATE schedhost::flags)
  # clang-tidy checks the code that ships (libraries, binaries, plugins); tests are left out.
  if(NOT C_NO_TIDY)
    schedhost_tidy(${target})
  endif()
endfunction()

function(schedhost_cc_library)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(schedhost_${A_NAME} STATIC ${A_SRCS})
  add_library(schedhost::${A_NAME} ALIAS schedhost_${A_NAME})
  target_include_directories(schedhost_${A_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(schedhost_${A_NAME} PUBLIC ${A_PUBLIC_DEPS} ${A_DEPS})
  set_target_properties(schedhost_${A_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  _schedhost_common(schedhost_${A_NAME})
endfunction()

function(schedhost_cc_binary)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${A_NAME} ${A_SRCS})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS})
  _schedhost_common(${A_NAME})
endfunction()

# schedhost_test_main: main() of every test binary (cmake/test_main.cc), compiled once, and the
# owner of the precompiled gtest/gmock header the test sources reuse.
function(_schedhost_test_main)
  if(TARGET schedhost_test_main)
    return()
  endif()
  add_library(schedhost_test_main STATIC ${PROJECT_SOURCE_DIR}/cmake/test_main.cc)
  target_link_libraries(schedhost_test_main PUBLIC GTest::gtest GTest::gmock)
  # Every test source is compiled with -pthread (it defines _REENTRANT, which the standard
  # headers test): the gRPC tests get it from gRPC, and GCC refuses a PCH built without a macro
  # the including source defines (CMake adds -Winvalid-pch, an error under -Werror).
  target_compile_options(schedhost_test_main PUBLIC -pthread)
  target_link_options(schedhost_test_main PUBLIC -pthread)
  # The paths are the source's definitions, not the target's: GCC refuses a precompiled header
  # built with a macro the including source lacks.
  set_source_files_properties(${PROJECT_SOURCE_DIR}/cmake/test_main.cc PROPERTIES
    COMPILE_DEFINITIONS "SCHEDHOST_TEST_PLUGIN_DIR=\"${SCHEDHOST_PLUGIN_OUTPUT_DIR}\";SCHEDHOST_TEST_SOURCE_DIR=\"${PROJECT_SOURCE_DIR}\"")
  target_precompile_headers(schedhost_test_main PRIVATE <gtest/gtest.h> <gmock/gmock.h>)
  _schedhost_common(schedhost_test_main NO_TIDY)
endfunction()

function(schedhost_cc_test)
  if(NOT SCHEDHOST_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  _schedhost_test_main()
  add_executable(${A_NAME} ${A_SRCS})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} schedhost_test_main GTest::gtest GTest::gmock)
  # Every test source starts from the one precompiled gtest/gmock header (CI time: parsing them
  # was about two seconds of every test source's compile).
  target_precompile_headers(${A_NAME} REUSE_FROM schedhost_test_main)
  _schedhost_common(${A_NAME} NO_TIDY)
  set_target_properties(${A_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  # Paths reach the tests through test_main.cc; only labels travel as ctest properties.
  if(A_LABELS)
    gtest_discover_tests(${A_NAME} DISCOVERY_MODE PRE_TEST PROPERTIES LABELS "${A_LABELS}")
    # `concurrent_tests` builds just what `ctest -L concurrent` runs (the tsan preset).
    if("concurrent" IN_LIST A_LABELS)
      if(NOT TARGET concurrent_tests)
        add_custom_target(concurrent_tests)
      endif()
      add_dependencies(concurrent_tests ${A_NAME})
    endif()
  else()
    gtest_discover_tests(${A_NAME} DISCOVERY_MODE PRE_TEST)
  endif()
endfunction()

# schedhost_gxx_module(<target> SOURCE <file.cc> OUTPUT_DIRECTORY <dir>) builds a test fixture
# MODULE <dir>/<target>.so with g++ whatever compiles the tree: only g++ emits STB_GNU_UNIQUE
# symbols, which the loader must refuse. Sets <target>_FILE in the caller's scope to its path, or
# to "" (and defines no target) when no g++ is installed.
function(schedhost_gxx_module target)
  cmake_parse_arguments(A "" "SOURCE;OUTPUT_DIRECTORY" "" ${ARGN})
  get_filename_component(_source ${A_SOURCE} ABSOLUTE)
  set(_file ${A_OUTPUT_DIRECTORY}/${target}.so)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_library(${target} MODULE ${_source})
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/sdk/include)
    set_target_properties(${target} PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${A_OUTPUT_DIRECTORY})
  else()
    find_program(SCHEDHOST_GXX NAMES g++-12 g++)
    if(NOT SCHEDHOST_GXX)
      set(${target}_FILE "" PARENT_SCOPE)
      return()
    endif()
    add_custom_command(
      OUTPUT ${_file}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${A_OUTPUT_DIRECTORY}
      COMMAND ${SCHEDHOST_GXX} -std=c++20 -fPIC -shared -I${PROJECT_SOURCE_DIR}/sdk/include
              ${_source} -o ${_file}
      DEPENDS ${_source} ${PROJECT_SOURCE_DIR}/sdk/include/schedhost/plugin.h
      COMMENT "Building ${target}.so with g++ (GNU_UNIQUE needs g++)"
      VERBATIM)
    add_custom_target(${target} ALL DEPENDS ${_file})
  endif()
  set(${target}_FILE ${_file} PARENT_SCOPE)
endfunction()
