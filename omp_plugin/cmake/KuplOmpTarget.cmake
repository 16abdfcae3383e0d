# The host offload target of the processor being built for (CMAKE_SYSTEM_PROCESSOR, so a
# cross-build gets the target's, not the build machine's):
#   KUPL_OMP_ARCH    the <arch> of libomptarget.rtl.<arch>.so, the file name libomptarget 14
#                    dlopens for that target; empty if libomptarget 14 has no host plugin for it
#   KUPL_OMP_TRIPLE  the default triple for -fopenmp-targets= (a cache entry, may be overridden)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(KUPL_OMP_ARCH x86_64)
  set(_kupl_omp_triple x86_64-pc-linux-gnu)
  set(KUPL_OMP_ELF_MACHINE 3e00) # EM_X86_64, little endian
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(KUPL_OMP_ARCH aarch64)
  set(_kupl_omp_triple aarch64-unknown-linux-gnu)
  set(KUPL_OMP_ELF_MACHINE b700) # EM_AARCH64, little endian
else()
  set(KUPL_OMP_ARCH "")
  set(_kupl_omp_triple "")
  set(KUPL_OMP_ELF_MACHINE "")
endif()
set(KUPL_OMP_TRIPLE "${_kupl_omp_triple}" CACHE STRING "offload target triple the plugin serves")
unset(_kupl_omp_triple)
