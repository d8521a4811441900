# Shared runtime builds: the kernel library (ExecuTorch runtime + this model's kernels + CMSIS-NN +
# registration) is the same for every app with the same sources, kernel set, core and flags, so it
# is built once into CMX_RUNTIME_CACHE/<key>/ and linked by every app whose key matches.
#
# The key is a SHA-256 over everything that decides the library's bytes: the content of every
# source it compiles and every header those can include (ExecuTorch runtime/kernels/backends,
# flatbuffers, CMSIS-NN), the schema and flatc, this package's own CMake files, the compiler and
# its version, the compile flags of the build type, LTO, and the cmx options (log, log level,
# verifier, event tracer, CMSIS-NN flags, registry size, prim-op selection). Every hashed file is a
# configure dependency: editing one re-runs CMake, which computes a new key; a stale library is
# never served.

# cmx_runtime_key(<out> <sources...>): the key for this configuration.
function(cmx_runtime_key out)
  set(_files ${ARGN}
    "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/CMakeLists.txt"
    "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/cmx_sdk.cmake"
    "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/cmsis_nn_folders.cmake"
    "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/backend/cmx_backend_layers.cmake"
    "${CMAKE_CURRENT_FUNCTION_LIST_FILE}"
    "${CMX_ET}/schema/program.fbs" "${CMX_ET}/schema/scalar_type.fbs")
  file(GLOB_RECURSE _headers LIST_DIRECTORIES false
    "${CMX_ET}/runtime/*.h" "${CMX_ET}/kernels/portable/cpu/*.h" "${CMX_ET}/kernels/prim_ops/*.h"
    "${CMX_ET}/backends/cortex_m/ops/*.h" "${CMX_ET}/extension/data_loader/*.h"
    "${CMX_ET}/third-party/flatbuffers/include/*.h" "${CMSIS_NN_PATH}/Include/*.h"
    "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/backend/*.h" "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/nn/*.h")
  list(APPEND _files ${_headers})
  list(REMOVE_DUPLICATES _files)
  list(SORT _files)
  # Paths as their place in the SDK or the app, so that apps in other folders (and SDKs checked out
  # elsewhere) with the same content share one build.
  set(_text "")
  foreach(_f IN LISTS _files)
    file(SHA256 "${_f}" _h)
    string(REPLACE "${CMX_ET}/" "executorch:" _name "${_f}")
    string(REPLACE "${CMSIS_NN_PATH}/" "cmsis-nn:" _name "${_name}")
    string(REPLACE "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/" "kernels:" _name "${_name}")
    string(REPLACE "${CMX_MODEL_DIR}/" "model:" _name "${_name}")
    string(APPEND _text "${_name}=${_h}\n")
  endforeach()
  file(SHA256 "${FLATC_EXECUTABLE}" _flatc)
  string(TOUPPER "${CMAKE_BUILD_TYPE}" _bt)
  foreach(_v CMAKE_C_COMPILER CMAKE_C_COMPILER_VERSION CMAKE_CXX_COMPILER CMAKE_CXX_COMPILER_VERSION
             CMAKE_C_FLAGS CMAKE_CXX_FLAGS CMAKE_C_FLAGS_${_bt} CMAKE_CXX_FLAGS_${_bt} CMAKE_BUILD_TYPE
             CMAKE_INTERPROCEDURAL_OPTIMIZATION CMAKE_CXX_STANDARD CMX_ET_LOG CMX_ET_LOG_LEVEL CMX_ET_VERIFY
             CMX_EVENT_TRACER CMX_NN_OPT CMX_TARGET_CPU CMX_CMSIS_NN_ISA _n_kernels _prim_defs _flatc
             CMX_BACKEND_LAYERS CMX_BACKEND_CHECKED CMX_BACKEND_OPT)
    string(APPEND _text "${_v}=${${_v}}\n")
  endforeach()
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/runtime_key.txt" "${_text}")  # what the key covers, to compare two builds
  string(SHA256 _key "${_text}")
  string(SUBSTRING "${_key}" 0 32 _key)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_files})
  set(${out} "${_key}" PARENT_SCOPE)
endfunction()

# cmx_runtime_publish(<target> <dir>): after <target> is built, copy its library into <dir> (made
# whole under a temporary name, then renamed: a concurrent build never sees half of it).
function(cmx_runtime_publish target dir)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" "-DLIB=$<TARGET_FILE:${target}>" "-DDIR=${dir}"
            -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/cmx_runtime_publish.cmake"
    COMMENT "cmx-gen: sharing the kernel library as ${dir}"
    VERBATIM)
endfunction()
