# cmake -DLIB=<libcmx_kernels.a> -DDIR=<cache>/<key> -P cmx_runtime_publish.cmake
# Puts a freshly built kernel library into the shared runtime cache (cmx_runtime_cache.cmake).
if(EXISTS "${DIR}/libcmx_kernels.a")
  return()  # another build got there first: same key, same bytes
endif()
string(RANDOM LENGTH 8 _tag)
set(_tmp "${DIR}.tmp-${_tag}")
file(MAKE_DIRECTORY "${_tmp}")
file(COPY "${LIB}" DESTINATION "${_tmp}")
get_filename_component(_name "${LIB}" NAME)
if(NOT _name STREQUAL "libcmx_kernels.a")
  file(RENAME "${_tmp}/${_name}" "${_tmp}/libcmx_kernels.a")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E rename "${_tmp}" "${DIR}" RESULT_VARIABLE _failed ERROR_QUIET)
if(_failed)
  file(REMOVE_RECURSE "${_tmp}")  # lost a race: the other copy is identical
endif()
