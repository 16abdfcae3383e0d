# cmake -P script: install the build tree into WORK_DIR/prefix, then configure,
# build and run the consumer project against it (MODE = cmake | pkgconfig).
# Inputs: BUILD_DIR WORK_DIR CONSUMER_SOURCE MODE GENERATOR C_COMPILER.
foreach(var BUILD_DIR WORK_DIR CONSUMER_SOURCE MODE GENERATOR C_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_install_consumer.cmake: ${var} not set")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${step} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${step}: ok")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/kupl.h include/kupl_ext.h)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "install did not produce ${f}")
  endif()
endforeach()

if(MODE STREQUAL "pkgconfig")
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
  run("pkg-config" pkg-config --cflags --libs kupl)
  message(STATUS "pkg-config kupl: ${last_output}")
  set(mode_args -DUSE_PKG_CONFIG=ON)
else()
  set(mode_args -DCMAKE_PREFIX_PATH=${prefix})
endif()

run("configure consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${build} -G ${GENERATOR}
    -DCMAKE_C_COMPILER=${C_COMPILER} ${mode_args})
run("build consumer" ${CMAKE_COMMAND} --build ${build})
run("run consumer" ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/lib ${build}/consumer)
message(STATUS "${last_output}")
