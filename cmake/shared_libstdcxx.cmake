# Whether the C++ compiler links libstdc++ into a shared library as a private,
# static copy (some toolchains do by default), and the repair for the op's
# library. libmtbert_ops.so is loaded into Python's process, which already has
# the shared libstdc++: a second copy inside the library has a stream locale
# that was never set up, so the op's error messages lose their numbers or the
# process crashes (seen on 2026-11-27 with a GPU image's /opt/gcc/bin/g++;
# reproduced with -static-libstdc++).
#
# mtbert_shared_libstdcxx(OUT): sets OUT to the libraries the op's library
# links with -nodefaultlibs instead of the compiler's default runtime (empty
# when that default is the shared libstdc++): a libstdc++.so (the compiler's,
# else the one Python's torch loads) and the C runtime libraries g++ adds.

# Builds a probe library with the compiler and `extra` link arguments; sets
# `embeds` to whether it defines std::ostream::_M_insert<long> (libstdc++.so
# defines it; a library linking that only refers to it), `built` to whether
# the link succeeded.
function(mtbert_probe_libstdcxx embeds built)
  set(dir ${CMAKE_BINARY_DIR}/CMakeFiles/shared_libstdcxx)
  file(WRITE ${dir}/probe.cpp
       "#include <sstream>\nstd::string probe(long x) { std::ostringstream s; s << x; return s.str(); }\n")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -shared -fPIC -o ${dir}/probe.so ${dir}/probe.cpp ${ARGN}
                  RESULT_VARIABLE status OUTPUT_QUIET ERROR_QUIET)
  set(defined "")
  if(status EQUAL 0)
    execute_process(COMMAND ${CMAKE_NM} -D --defined-only ${dir}/probe.so OUTPUT_VARIABLE defined ERROR_QUIET)
  endif()
  string(FIND "${defined}" "_ZNSo9_M_insertIlEERSoT_" at)
  if(status EQUAL 0)
    set(${built} ON PARENT_SCOPE)
  else()
    set(${built} OFF PARENT_SCOPE)
  endif()
  if(at GREATER -1)
    set(${embeds} ON PARENT_SCOPE)
  else()
    set(${embeds} OFF PARENT_SCOPE)
  endif()
endfunction()

function(mtbert_shared_libstdcxx out)
  set(${out} "" PARENT_SCOPE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" OR NOT CMAKE_NM)
    return()
  endif()
  mtbert_probe_libstdcxx(embeds built)
  if(NOT built OR NOT embeds)
    return()
  endif()
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
                  OUTPUT_VARIABLE runtime OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT IS_ABSOLUTE "${runtime}" OR NOT EXISTS "${runtime}")
    execute_process(COMMAND ${MTBERT_PYTHON} -c
                      "import torch; print(next(l.split()[-1] for l in open('/proc/self/maps') if 'libstdc++' in l))"
                    OUTPUT_VARIABLE runtime OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  set(libraries ${runtime} -lm -lgcc_s -lgcc -lc)
  if(EXISTS "${runtime}")
    mtbert_probe_libstdcxx(embeds built -nodefaultlibs ${libraries})
  endif()
  if(NOT EXISTS "${runtime}" OR NOT built OR embeds)
    message(WARNING "${CMAKE_CXX_COMPILER} links libstdc++ statically into shared libraries and no shared "
                    "libstdc++ was found to link instead: libmtbert_ops.so would carry its own C++ runtime and "
                    "fail inside Python (op errors without their numbers, or a crash). Configure with "
                    "-DCMAKE_CXX_COMPILER=<a g++ or clang++ that links libstdc++.so>.")
    return()
  endif()
  message(STATUS "mtbert: ${CMAKE_CXX_COMPILER} links libstdc++ statically into shared libraries; "
                 "libmtbert_ops.so links ${runtime} instead, the runtime of the process that loads it")
  set(${out} ${libraries} PARENT_SCOPE)
endfunction()
