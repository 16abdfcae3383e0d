# KuplOmp.cmake — build OpenMP offload programs with clang-14 and run them with the KUPL
# libomptarget plugin, whatever compiler the including project uses.
#
#   kupl_omp_add_executable(<name> SOURCES <files...> [OPTIONS <compiler flags...>]
#                           [LIBRARIES <link flags...>] [ALL])
#       Compiles and links <files> with ${KUPL_OMP_CLANG} (C) or ${KUPL_OMP_CLANGXX} (C++)
#       and -fopenmp -fopenmp-targets=${KUPL_OMP_TRIPLE} (x86_64-pc-linux-gnu, aarch64-unknown-linux-gnu:
#       see KuplOmpTarget.cmake) into ${CMAKE_CURRENT_BINARY_DIR}/bin/<name>.
#       Creates a custom target <name>; its KUPL_OMP_EXECUTABLE property is the program's path.
#
#   kupl_omp_set_test_environment(<test> [STOCK] [ENVIRONMENT <VAR=value...>])
#       Makes ctest run <test> with our plugin (LD_LIBRARY_PATH=${KUPL_OMP_PLUGIN_DIR}),
#       or with LLVM's stock plugin when STOCK is given, plus OMP_TARGET_OFFLOAD=MANDATORY so a
#       plugin that fails to load is an error rather than a silent fall-back to the host.
#
#   kupl_omp_enable(<target>)
#       For projects compiled by clang itself: adds the offload flags to <target>.
#
# Running by hand: kupl-omp-run ./program args  (or LD_LIBRARY_PATH=<plugin folder> ./program).

if(NOT KUPL_OMP_PLUGIN_DIR)
  # Installed layout: <libdir>/cmake/kupl-omp/KuplOmp.cmake next to <libdir>/kupl-omp/.
  get_filename_component(KUPL_OMP_PLUGIN_DIR "${CMAKE_CURRENT_LIST_DIR}/../../kupl-omp" ABSOLUTE)
endif()
set(KUPL_OMP_CLANG clang-14 CACHE STRING "C compiler for OpenMP offload programs")
set(KUPL_OMP_CLANGXX clang++-14 CACHE STRING "C++ compiler for OpenMP offload programs")
include(${CMAKE_CURRENT_LIST_DIR}/KuplOmpTarget.cmake)

function(kupl_omp_add_executable name)
  cmake_parse_arguments(ARG "ALL" "" "SOURCES;OPTIONS;LIBRARIES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "kupl_omp_add_executable(${name}): SOURCES is required")
  endif()
  set(compiler ${KUPL_OMP_CLANG})
  set(sources "")
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE)
    list(APPEND sources ${abs})
    if(abs MATCHES "\\.(cpp|cc|cxx)$")
      set(compiler ${KUPL_OMP_CLANGXX})
    endif()
  endforeach()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/bin/${name})
  # Header dependencies come from clang's depfile; it names one source's headers only, so it is
  # used for single-source programs (the sources themselves are always dependencies).
  set(depfile_flags "")
  set(depfile_option "")
  list(LENGTH sources source_count)
  if(source_count EQUAL 1)
    set(depfile_flags -MD -MF ${out}.d)
    set(depfile_option DEPFILE ${out}.d)
  endif()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/bin
    COMMAND ${compiler} -fopenmp -fopenmp-targets=${KUPL_OMP_TRIPLE} ${ARG_OPTIONS} ${depfile_flags} ${sources}
            -o ${out} ${ARG_LIBRARIES}
    DEPENDS ${sources}
    ${depfile_option}
    COMMENT "clang OpenMP offload: ${name}"
    VERBATIM)
  if(ARG_ALL)
    add_custom_target(${name} ALL DEPENDS ${out})
  else()
    add_custom_target(${name} DEPENDS ${out})
  endif()
  set_target_properties(${name} PROPERTIES KUPL_OMP_EXECUTABLE ${out})
endfunction()

function(kupl_omp_set_test_environment test)
  cmake_parse_arguments(ARG "STOCK" "" "ENVIRONMENT" ${ARGN})
  set(env OMP_TARGET_OFFLOAD=MANDATORY ${ARG_ENVIRONMENT})
  if(NOT ARG_STOCK)
    list(APPEND env LD_LIBRARY_PATH=${KUPL_OMP_PLUGIN_DIR})
  endif()
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT ${env})
endfunction()

function(kupl_omp_enable target)
  target_compile_options(${target} PRIVATE -fopenmp -fopenmp-targets=${KUPL_OMP_TRIPLE})
  target_link_options(${target} PRIVATE -fopenmp -fopenmp-targets=${KUPL_OMP_TRIPLE})
endfunction()
