# A stand-in for find_package(Zephyr) that lets CMake configure a generated Zephyr app and
# compile everything in it that does not include Zephyr headers (the model API, the check or the
# user's main and its helpers, model files, cmx/kernels)
# with arm-none-eabi-gcc. Used by cmx-gen's tests where no Zephyr tree exists. Not a Zephyr build:
# no Kconfig, no devicetree, no link.
#
# Inputs (-D): CMX_STUB_CPU (e.g. cortex-m55), CMX_STUB_FLAGS (extra arch flags, ;-list),
#              CMX_STUB_AUTOCONF (an autoconf.h written by kconfiglib from prj.conf + board .conf),
#              EXECUTORCH_ROOT / CMSIS_NN_PATH (what west would put in modules/lib/),
#              CMX_STUB_MODULES (;-list of module folders west.yml lists: each is added as Zephyr
#              adds a module, its zephyr/module.yml `build: cmake:` folder, ZEPHYR_<NAME>_MODULE_DIR set).
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
  # ... and its program_schema (schema/CMakeLists.txt: the headers flatc makes from schema/*.fbs)
  set(_cmx_schema "${CMAKE_BINARY_DIR}/schema/include")
  file(MAKE_DIRECTORY "${_cmx_schema}/executorch/schema")
  add_custom_command(
    OUTPUT "${_cmx_schema}/executorch/schema/program_generated.h"
    COMMAND "${FLATC_EXECUTABLE}" --cpp --cpp-std c++11 --gen-mutable --scoped-enums
            -o "${_cmx_schema}/executorch/schema"
            "${EXECUTORCH_ROOT}/schema/program.fbs" "${EXECUTORCH_ROOT}/schema/scalar_type.fbs")
  add_custom_target(cmx_stub_program_schema DEPENDS "${_cmx_schema}/executorch/schema/program_generated.h")
  add_library(program_schema INTERFACE)
  target_include_directories(program_schema INTERFACE "${_cmx_schema}" "${EXECUTORCH_ROOT}/third-party/flatbuffers/include")
  add_dependencies(program_schema cmx_stub_program_schema)
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

# Zephyr's library functions a module uses: a zephyr library is a static library on
# zephyr_interface (Zephyr links each one whole); include directories go to every source.
macro(zephyr_library_named name)
  set(ZEPHYR_CURRENT_LIBRARY ${name})
  add_library(${name} STATIC)
  target_link_libraries(${name} PUBLIC zephyr_interface)
endmacro()
function(zephyr_library_sources)
  target_sources(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
endfunction()
function(zephyr_library_link_libraries)
  target_link_libraries(${ZEPHYR_CURRENT_LIBRARY} PUBLIC ${ARGN})
endfunction()
function(zephyr_include_directories)
  foreach(dir IN LISTS ARGN)
    get_filename_component(dir "${dir}" ABSOLUTE)
    target_include_directories(zephyr_interface INTERFACE "${dir}")
  endforeach()
endfunction()

# The modules, as Zephyr's zephyr_module.py and modules/CMakeLists.txt add them.
foreach(_dir IN LISTS CMX_STUB_MODULES)
  file(STRINGS "${_dir}/zephyr/module.yml" _yml)
  set(_name "")
  set(_cmake "zephyr")
  foreach(_line IN LISTS _yml)
    if(_line MATCHES "^name:[ ]*([A-Za-z0-9_-]+)")
      set(_name "${CMAKE_MATCH_1}")
    elseif(_line MATCHES "^[ ]+cmake:[ ]*([^ #]+)")
      set(_cmake "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  string(TOUPPER "${_name}" _upper)
  string(REPLACE "-" "_" _upper "${_upper}")
  set(ZEPHYR_${_upper}_MODULE_DIR "${_dir}")
  set(ZEPHYR_CURRENT_MODULE_DIR "${_dir}")
  add_subdirectory("${_dir}/${_cmake}" "${CMAKE_BINARY_DIR}/modules/${_name}")
  message(STATUS "cmx-stub: module ${_name} (${_dir})")
endforeach()

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
  # What `west build -t run` would add to the emulator's command line (placement = "slot": the images).
  message(STATUS "cmx-stub: emulator flags: QEMU ${QEMU_EXTRA_FLAGS}; FVP ${ARMFVP_EXTRA_FLAGS}")
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _cmx_stub_finish)

set(Zephyr_FOUND TRUE)
