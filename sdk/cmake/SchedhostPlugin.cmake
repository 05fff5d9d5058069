# schedhost_add_plugin(<target> SOURCES ... [OUTPUT_NAME name] [OUTPUT_DIRECTORY dir] [LINK ...])
#
# Builds a schedhost plugin library as a MODULE: hidden visibility, a version script exporting
# only the entry symbol schedhost_plugin_library_v1, -Wl,--no-undefined, linked only to the SDK.
# The boundary of docs/abi.md rule 10 is enforced by the build: a plugin cannot reach host code.

set(_SCHEDHOST_PLUGIN_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(schedhost_add_plugin target)
  cmake_parse_arguments(A "" "OUTPUT_NAME;OUTPUT_DIRECTORY" "SOURCES;LINK" ${ARGN})
  add_library(${target} MODULE ${A_SOURCES})
  set(_vs ${CMAKE_CURRENT_BINARY_DIR}/${target}.map)
  file(WRITE ${_vs} "{\n  global: schedhost_plugin_library_v1;\n  local: *;\n};\n")
  if(TARGET schedhost::sdk)
    target_link_libraries(${target} PRIVATE schedhost::sdk)
  endif()
  if(A_LINK)
    target_link_libraries(${target} PRIVATE ${A_LINK})
  endif()
  if(TARGET schedhost::flags)
    target_link_libraries(${target} PRIVATE schedhost::flags)
  endif()
  # In the schedhost tree, clang-tidy checks the plugins that ship (scripts/tidy.py; test
  # plugins name an OUTPUT_DIRECTORY of their own).
  if(COMMAND schedhost_tidy AND NOT A_OUTPUT_DIRECTORY)
    schedhost_tidy(${target})
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON
    LINK_DEPENDS ${_vs})
  if(A_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${A_OUTPUT_NAME})
  endif()
  if(A_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${A_OUTPUT_DIRECTORY})
  elseif(DEFINED SCHEDHOST_PLUGIN_OUTPUT_DIR)
    # A builtin plugin of the schedhost tree: it lands beside the binaries and joins the
    # `builtin_plugins` target.
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${SCHEDHOST_PLUGIN_OUTPUT_DIR})
    set_property(GLOBAL APPEND PROPERTY SCHEDHOST_BUILTIN_PLUGIN_TARGETS ${target})
  endif()
  # GNU_UNIQUE symbols would pin the library in memory and share statics across versions.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-fno-gnu-unique>)
  target_link_options(${target} PRIVATE -Wl,--version-script=${_vs} -Wl,--no-undefined
                      -Wl,--exclude-libs,ALL)
endfunction()
