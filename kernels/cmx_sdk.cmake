# Find the SDK sources the firmware is built from, or stop with ONE message saying how to get them.
# Mirrors cmx_gen/device/sdk.py (`cmx-gen sdk` reports the same things from Python).

set(EXECUTORCH_ROOT "$ENV{EXECUTORCH_ROOT}" CACHE PATH "ExecuTorch source checkout (git clone of pytorch/executorch)")
set(CMSIS_NN_PATH "$ENV{CMSIS_NN_PATH}" CACHE PATH "CMSIS-NN source checkout (ARM-software/CMSIS-NN)")
set(FLATC_EXECUTABLE "$ENV{FLATC_EXECUTABLE}" CACHE FILEPATH "flatc 24.x (ships in the executorch wheel: executorch/data/bin/flatc)")

set(_cmx_sdk_fix
  "Get the sources once and point cmx-gen at them:\n"
  "  cmx-gen sdk --clone ~/cmx-sdk      (clones ExecuTorch v${CMX_EXECUTORCH_VERSION} + flatbuffers v24.3.25 + CMSIS-NN at the pinned commit)\n"
  "  export EXECUTORCH_ROOT=~/cmx-sdk/executorch CMSIS_NN_PATH=~/cmx-sdk/CMSIS-NN\n"
  "then configure again (or pass -DEXECUTORCH_ROOT=... -DCMSIS_NN_PATH=...). `cmx-gen sdk` shows what is found.")

macro(cmx_require_sdk)
  set(_problems "")
  if(NOT EXECUTORCH_ROOT OR NOT EXISTS "${EXECUTORCH_ROOT}/runtime/executor/method.cpp")
    string(APPEND _problems "  EXECUTORCH_ROOT='${EXECUTORCH_ROOT}' is not an ExecuTorch source checkout\n")
  elseif(NOT EXISTS "${EXECUTORCH_ROOT}/third-party/flatbuffers/include/flatbuffers/flatbuffers.h")
    string(APPEND _problems "  ${EXECUTORCH_ROOT}/third-party/flatbuffers is empty (git submodule update --init third-party/flatbuffers, v24.3.25)\n")
  endif()
  if(NOT CMSIS_NN_PATH OR NOT EXISTS "${CMSIS_NN_PATH}/Include/arm_nnfunctions.h")
    string(APPEND _problems "  CMSIS_NN_PATH='${CMSIS_NN_PATH}' is not a CMSIS-NN checkout\n")
  endif()
  if(NOT FLATC_EXECUTABLE)
    find_program(FLATC_EXECUTABLE flatc)
  endif()
  if(NOT FLATC_EXECUTABLE AND NOT CMX_EXECUTORCH_RUNTIME)
    string(APPEND _problems "  flatc not found (pass -DFLATC_EXECUTABLE=<site-packages>/executorch/data/bin/flatc)\n")
  endif()
  if(_problems)
    message(FATAL_ERROR "cmx-gen: the ExecuTorch/CMSIS-NN SDK is missing:\n${_problems}${_cmx_sdk_fix}")
  endif()
  get_filename_component(CMX_ET "${EXECUTORCH_ROOT}" REALPATH)
  if(EXISTS "${CMX_ET}/version.txt" AND CMX_EXECUTORCH_VERSION)
    file(STRINGS "${CMX_ET}/version.txt" _et_src_version LIMIT_COUNT 1)
    string(REGEX MATCH "^[0-9]+[.][0-9]+" _src_mm "${_et_src_version}")
    string(REGEX MATCH "^[0-9]+[.][0-9]+" _pip_mm "${CMX_EXECUTORCH_VERSION}")
    if(NOT _et_src_version STREQUAL CMX_EXECUTORCH_VERSION)
      if(_src_mm STREQUAL _pip_mm)
        message(WARNING "cmx-gen: ExecuTorch sources are ${_et_src_version}, the model was lowered with "
                        "${CMX_EXECUTORCH_VERSION} (same minor version: usually compatible; every kernel "
                        "the program calls must exist in the sources, the build stops otherwise).")
      else()
        message(WARNING "cmx-gen: ExecuTorch sources are ${_et_src_version} but the model was lowered with "
                        "executorch ${CMX_EXECUTORCH_VERSION}; kernels or the program format may not match. "
                        "Check out v${CMX_EXECUTORCH_VERSION} in ${CMX_ET}.")
      endif()
    endif()
  endif()
endmacro()
