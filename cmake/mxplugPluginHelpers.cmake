# mxplug_add_plugin(<name> SOURCES <src>... [VERSION <v>] [OUTPUT_DIRECTORY <dir>] [NO_INSTALL])
#
# Builds an mxplug plugin: a MODULE library lib<name>.so that includes only the plugin API,
# hides every symbol but mxplug_init (version script), and refuses undefined symbols at link
# time, so that a missing dependency fails the build instead of the load. Installed plugins go
# to lib/mxplug/plugins, the default plugin folder.
set(_MXPLUG_HELPERS_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(mxplug_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "VERSION;OUTPUT_DIRECTORY" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "mxplug_add_plugin(${name}): no SOURCES")
  endif()
  if(NOT ARG_VERSION)
    set(ARG_VERSION "${PROJECT_VERSION}")
  endif()
  if(NOT ARG_VERSION)
    set(ARG_VERSION "0.0.0")
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  if(TARGET mxplug::plugin_api)
    target_link_libraries(${name} PRIVATE mxplug::plugin_api)
  else()
    target_link_libraries(${name} PRIVATE mxplug_plugin_api)
  endif()
  target_compile_features(${name} PRIVATE cxx_std_17)
  target_compile_definitions(${name} PRIVATE MXPLUG_PLUGIN_VERSION="${ARG_VERSION}")
  set_target_properties(${name} PROPERTIES
    PREFIX "lib"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${name} PRIVATE "-Wl,--version-script=${_MXPLUG_HELPERS_DIR}/mxplug_plugin.map")
  # A plugin must resolve all its symbols itself, except under Clang's sanitizers, whose runtime
  # lives in the executable and is found only at load time.
  if(NOT (CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND MXPLUG_SANITIZE))
    target_link_options(${name} PRIVATE "-Wl,--no-undefined")
  endif()
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  elseif(DEFINED MXPLUG_PLUGIN_OUTPUT_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${MXPLUG_PLUGIN_OUTPUT_DIR}")
  endif()
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${name} LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}/mxplug/plugins")
  endif()
endfunction()
