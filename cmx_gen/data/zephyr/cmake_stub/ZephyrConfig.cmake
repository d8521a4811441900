# A stand-in for find_package(Zephyr) that lets CMake configure a generated Zephyr app and
# compile everything in it that does not include Zephyr headers (the model API, the check or the
# user's main and its helpers, model files, cmx/kernels)
# with arm-none-eabi-gcc. Used by cmx-gen's tests where no Zephyr tree exists. Not a Zephyr build:
# no Kconfig, no devicetree, no link.
#
# Inputs (-D): CMX_STUB_CPU (e.g. cortex-m55), CMX_STUB_FLAGS (extra arch flags, ;-list),
#              CMX_STUB_AUTOCONF (an autoconf.h written by kconfiglib from prj.conf + board .conf),
#              EXECUTORCH_ROOT / CMSIS_NN_PATH (what west would put in modules/lib/).
cmake_minimum_required(VERSION 3.20)

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# Zephyr's boilerplate calls project() itself, before the app's project().
project(Zephyr-Kernel-Stub LANGUAGES C CXX ASM)

# CONFIG_* as CMake variables, like Zephyr's import of .config (from the autoconf.h macros).
file(STRINGS "${CMX_STUB_AUTOCONF}" _cmx_defines REGEX "^#define CONFIG_")
foreach(_line IN LISTS _cmx_defines)
  if(_line MATCHES "^#define (CONFIG_[A-Za-z0-9_]+) (.*)$")
    set(_value "${CMAKE_MATCH_2}")
    if(_value STREQUAL "1")
      set(_value y)
    endif()
    set(${CMAKE_MATCH_1} "${_value}")
  endif()
endforeach()

set(ZEPHYR_EXECUTORCH_MODULE_DIR "${EXECUTORCH_ROOT}")
set(ZEPHYR_CMSIS_NN_MODULE_DIR "${CMSIS_NN_PATH}")

add_library(zephyr_interface INTERFACE)
target_compile_options(zephyr_interface INTERFACE
  -mcpu=${CMX_STUB_CPU} -mthumb ${CMX_STUB_FLAGS}
  -imacros ${CMX_STUB_AUTOCONF}
  $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
add_library(app STATIC)
target_link_libraries(app PRIVATE zephyr_interface)

# What CONFIG_EXECUTORCH=y gives in a real build: the ExecuTorch module's zephyr library
# (empty here: the stub does not build the module).
if(CONFIG_EXECUTORCH)
  add_library(libexecutorch INTERFACE)
  # ... and what its EXECUTORCH_BUILD_CORTEX_M defines (built by the module, not linked by it)
  add_library(cortex_m_kernels INTERFACE)
  add_library(cmsis-nn INTERFACE)
endif()

set(CMX_STUB_LINKER_SNIPPETS "" CACHE INTERNAL "")
function(zephyr_linker_sources location)
  foreach(file IN LISTS ARGN)
    get_filename_component(path "${file}" ABSOLUTE)
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "zephyr_linker_sources(${location} ${file}): file not found")
    endif()
    set(CMX_STUB_LINKER_SNIPPETS "${CMX_STUB_LINKER_SNIPPETS};${location}:${file}" CACHE INTERNAL "")
  endforeach()
endfunction()

# At the end of configure: sources that need Zephyr headers are listed but not compiled.
function(_cmx_stub_finish)
  get_target_property(srcs app SOURCES)
  foreach(src IN LISTS srcs)
    if(src MATCHES "platform_zephyr")
      set_source_files_properties(${src} TARGET_DIRECTORY app PROPERTIES HEADER_FILE_ONLY ON)
      message(STATUS "cmx-stub: not compiled (needs Zephyr headers): ${src}")
    endif()
  endforeach()
  message(STATUS "cmx-stub: linker snippets: ${CMX_STUB_LINKER_SNIPPETS}")
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _cmx_stub_finish)

set(Zephyr_FOUND TRUE)
