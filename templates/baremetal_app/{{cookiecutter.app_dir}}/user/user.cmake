# Yours: cmx-gen creates this file once and never touches it again (regen keeps it as it is).
# Included by CMakeLists.txt after the targets exist: ${CMX_USER_APP} is your application
# (user/main.c), ${CMX_APP} the on-target check. Add your sources, flags or libraries:
#   target_sources(${CMX_USER_APP} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/my_sensor.c)
#   target_compile_definitions(${CMX_USER_APP} PRIVATE MY_OPTION=1)
