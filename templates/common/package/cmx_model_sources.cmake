# cmx-gen: the model API's sources and each model's compiled handle, program and reference, for a
# package that adds them to a firmware's target (the CMake package and the Zephyr module).
#
#   cmx_model_sources(<out-var> MODEL_DIR <folder> ARENA_SECTION <section> [LINK <target>...])
#
# Each model (MODEL_DIR/cmx_models.cmake: its folder, "." for a package of one) is an OBJECT
# library compiled with its own cmx_model.h first on the include path and its pools in
# ARENA_SECTION; the models' shared arena too. <out-var> gets cmx_api.cpp and their objects: the
# consumer compiles and links them into its image (not an archive: the runtime registers its
# operators from a static initializer). LINK: what they compile against (cmx_kernels, and
# zephyr_interface in Zephyr).
function(cmx_model_sources out)
  cmake_parse_arguments(_arg "" "MODEL_DIR;ARENA_SECTION" "LINK" ${ARGN})
  get_filename_component(_api "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../api" ABSOLUTE)
  include("${_arg_MODEL_DIR}/cmx_models.cmake")
  set(_sources "${_api}/cmx_api.cpp" "${_api}/cmx_slots.cpp" "${_api}/cmx_slot.c")
  set(_define CMX_ARENA_SECTION="${_arg_ARENA_SECTION}")
  if(CMX_MODELS_SOURCES)  # what the models share (their arena), in the same section as their pools
    list(TRANSFORM CMX_MODELS_SOURCES PREPEND "${_arg_MODEL_DIR}/" OUTPUT_VARIABLE _shared)
    add_library(cmx_model_shared OBJECT ${_shared})
    target_include_directories(cmx_model_shared PRIVATE "${_api}" "${_arg_MODEL_DIR}")
    target_compile_definitions(cmx_model_shared PRIVATE ${_define})
    target_link_libraries(cmx_model_shared PRIVATE ${_arg_LINK})
    list(APPEND _sources $<TARGET_OBJECTS:cmx_model_shared>)
  endif()
  foreach(_dir IN LISTS CMX_MODEL_DIRS)
    get_filename_component(_model_dir "${_arg_MODEL_DIR}/${_dir}" ABSOLUTE)
    string(MAKE_C_IDENTIFIER "cmx_model_${_dir}" _lib)
    add_library(${_lib} OBJECT "${_api}/cmx_model_instance.cpp" "${_model_dir}/cmx_model_io.c" "${_model_dir}/model_pte.S")
    target_include_directories(${_lib} BEFORE PRIVATE "${_model_dir}")
    target_include_directories(${_lib} PRIVATE "${_api}" "${_arg_MODEL_DIR}")
    target_compile_definitions(${_lib} PRIVATE ${_define})
    target_link_libraries(${_lib} PRIVATE ${_arg_LINK})
    # model_pte.S .incbin's model.pte relative to its own folder
    set_source_files_properties("${_model_dir}/model_pte.S" PROPERTIES
      COMPILE_OPTIONS "-I${_model_dir}"
      OBJECT_DEPENDS "${_model_dir}/model.pte")
    list(APPEND _sources $<TARGET_OBJECTS:${_lib}>)
  endforeach()
  set(${out} ${_sources} PARENT_SCOPE)
endfunction()
