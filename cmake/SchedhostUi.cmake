# The web UI's pages (ui/): TypeScript and Preact, type-checked and bundled by ui/build.mjs
# (esbuild) into ${CMAKE_BINARY_DIR}/ui, where a build tree's schedhostd and schedctl find them
# (api::UiPagesDir); the packages install them to /usr/share/schedhost/ui. The npm packages come
# from the registry, pinned by ui/package-lock.json, installed once per change of the lock file.
find_program(SCHEDHOST_NODE_EXE node)
find_program(SCHEDHOST_NPM_EXE npm)
if(NOT SCHEDHOST_NODE_EXE OR NOT SCHEDHOST_NPM_EXE)
  message(FATAL_ERROR
    "the web UI needs Node.js (18 or newer) and npm: scripts/install-deps.sh installs them, or "
    "configure with -DSCHEDHOST_UI=OFF to build without the pages")
endif()

set(SCHEDHOST_UI_DIR ${CMAKE_BINARY_DIR}/ui)
set(_ui_src ${PROJECT_SOURCE_DIR}/ui)
# The stamp lives in node_modules, so deleting that directory installs the packages again.
set(_ui_stamp ${_ui_src}/node_modules/.schedhost-npm-ci)
add_custom_command(OUTPUT ${_ui_stamp}
  COMMAND ${SCHEDHOST_NPM_EXE} ci --no-audit --no-fund --loglevel=error
  COMMAND ${CMAKE_COMMAND} -E touch ${_ui_stamp}
  WORKING_DIRECTORY ${_ui_src}
  DEPENDS ${_ui_src}/package.json ${_ui_src}/package-lock.json
  COMMENT "npm ci (ui/package-lock.json)"
  VERBATIM)
file(GLOB_RECURSE _ui_sources CONFIGURE_DEPENDS ${_ui_src}/src/*)
set(SCHEDHOST_UI_FILES ${SCHEDHOST_UI_DIR}/index.html ${SCHEDHOST_UI_DIR}/app.js
                       ${SCHEDHOST_UI_DIR}/app.css)
add_custom_command(OUTPUT ${SCHEDHOST_UI_FILES}
  COMMAND ${SCHEDHOST_NODE_EXE} ${_ui_src}/build.mjs --outdir ${SCHEDHOST_UI_DIR}
  DEPENDS ${_ui_stamp} ${_ui_sources} ${_ui_src}/build.mjs ${_ui_src}/tsconfig.json
  COMMENT "Type-checking and bundling the web UI into ${SCHEDHOST_UI_DIR}"
  VERBATIM)
add_custom_target(ui ALL DEPENDS ${SCHEDHOST_UI_FILES})
