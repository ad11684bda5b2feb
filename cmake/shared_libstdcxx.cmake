# Whether the C++ compiler links libstdc++ into a shared library as a private,
# static copy (some toolchains do by default), and the repair for the op's
# library. libmtbert_ops.so is loaded into Python's process, which already has
# the shared libstdc++: a second copy inside the library has a stream locale
# that was never set up, so the op's error messages lose their numbers or the
# process crashes (reproduced here with -static-libstdc++; most likely what
# crashed the op's library built by a GPU image's /opt/gcc/bin/g++ on
# 2026-11-27).
#
# mtbert_shared_libstdcxx(OUT): sets OUT to the libraries the op's library
# links with -nodefaultlibs instead of the compiler's default runtime (empty
# when that default is the shared libstdc++): the libstdc++.so that Python's
# torch loads (else the compiler's), and the C runtime libraries g++ adds.

# Builds a probe library with the compiler, its flags and `extra` link
# arguments; sets `outcome` to SHARED (the library leaves
# std::ostream::operator<<(long) to libstdc++.so), EMBEDDED (it does not: a
# copy of libstdc++ is inside, exported or hidden) or FAILED (no library).
function(mtbert_probe_libstdcxx outcome)
  set(dir ${CMAKE_BINARY_DIR}/CMakeFiles/shared_libstdcxx)
  file(WRITE ${dir}/probe.cpp
       "#include <sstream>\nstd::string probe(long x) { std::ostringstream s; s << x; return s.str(); }\n")
  separate_arguments(flags UNIX_COMMAND "${CMAKE_CXX_FLAGS} ${CMAKE_MODULE_LINKER_FLAGS}")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} ${flags} -shared -fPIC -o ${dir}/probe.so ${dir}/probe.cpp ${ARGN}
                  RESULT_VARIABLE status OUTPUT_QUIET ERROR_QUIET)
  if(NOT status EQUAL 0)
    set(${outcome} FAILED PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND ${CMAKE_NM} -D --undefined-only ${dir}/probe.so OUTPUT_VARIABLE undefined ERROR_QUIET)
  if(undefined MATCHES "_ZNSolsEl@")
    set(${outcome} SHARED PARENT_SCOPE)
  else()
    set(${outcome} EMBEDDED PARENT_SCOPE)
  endif()
endfunction()

function(mtbert_shared_libstdcxx out)
  set(${out} "" PARENT_SCOPE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    return()
  endif()
  if(NOT CMAKE_NM)
    message(STATUS "mtbert: no nm found; not checked whether ${CMAKE_CXX_COMPILER} links libstdc++ shared")
    return()
  endif()
  mtbert_probe_libstdcxx(outcome)
  if(outcome STREQUAL "FAILED")
    message(STATUS "mtbert: ${CMAKE_CXX_COMPILER} built no probe library; not checked how it links libstdc++")
    return()
  elseif(outcome STREQUAL "SHARED")
    return()
  endif()
  # The runtime the op's library will meet: the one Python's torch loads;
  # else the compiler's own shared libstdc++.
  execute_process(COMMAND ${MTBERT_PYTHON} -c
                    "import torch; print(next(l.split()[-1] for l in open('/proc/self/maps') if 'libstdc++' in l))"
                  OUTPUT_VARIABLE runtime OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT IS_ABSOLUTE "${runtime}" OR NOT EXISTS "${runtime}")
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
                    OUTPUT_VARIABLE runtime OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  set(libraries ${runtime} -lm -lgcc_s -lgcc -lc)
  set(outcome FAILED)
  if(IS_ABSOLUTE "${runtime}" AND EXISTS "${runtime}")
    mtbert_probe_libstdcxx(outcome -nodefaultlibs ${libraries})
  endif()
  if(NOT outcome STREQUAL "SHARED")
    message(WARNING "${CMAKE_CXX_COMPILER} links libstdc++ statically into shared libraries and no shared "
                    "libstdc++ was found to link instead: libmtbert_ops.so would carry its own C++ runtime and "
                    "fail inside Python (op errors without their numbers, or a crash). Configure with "
                    "-DCMAKE_CXX_COMPILER=<a g++ or clang++ that links libstdc++.so>.")
    return()
  endif()
  message(STATUS "mtbert: ${CMAKE_CXX_COMPILER} links libstdc++ statically into shared libraries; "
                 "libmtbert_ops.so links ${runtime} instead")
  set(${out} ${libraries} PARENT_SCOPE)
endfunction()
