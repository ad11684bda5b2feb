# Whether the C++ compiler links libstdc++ into a shared library as a private,
# static copy (some toolchains do by default). The op's library
# (libmtbert_ops.so) is loaded into Python's process, which already has the
# shared libstdc++: a second copy inside the library has a stream locale that
# was never set up, so the op's error messages lose their numbers or the
# process crashes (seen on 2026-11-27 with a GPU image's /opt/gcc/bin/g++;
# reproduced here with -static-libstdc++). Configure warns, naming the fix.
function(mtbert_check_shared_libstdcxx)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" OR NOT CMAKE_NM)
    return()
  endif()
  set(dir ${CMAKE_BINARY_DIR}/CMakeFiles/shared_libstdcxx)
  file(WRITE ${dir}/probe.cpp
       "#include <sstream>\nstd::string probe(long x) { std::ostringstream s; s << x; return s.str(); }\n")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -shared -fPIC -o ${dir}/probe.so ${dir}/probe.cpp
                  RESULT_VARIABLE built OUTPUT_QUIET ERROR_QUIET)
  if(NOT built EQUAL 0)
    return()
  endif()
  # std::ostream::_M_insert<long>: defined in libstdc++.so, only referenced
  # by a library that links it as a shared library.
  execute_process(COMMAND ${CMAKE_NM} -D --defined-only ${dir}/probe.so OUTPUT_VARIABLE defined ERROR_QUIET)
  if(defined MATCHES "_ZNSo9_M_insertIlEERSoT_")
    message(WARNING "${CMAKE_CXX_COMPILER} links libstdc++ statically into shared libraries: libmtbert_ops.so "
                    "would carry its own C++ runtime and fail inside Python (op errors without their numbers, "
                    "or a crash). Configure with -DCMAKE_CXX_COMPILER=<a g++ or clang++ that links libstdc++.so> "
                    "(scripts/gpu/check.sh picks one).")
  endif()
endfunction()
