#!/usr/bin/env bash
# cmake/one_fmt.cmake: with a second fmt on torch's include path (pip's torch
# ships one in torch/include/fmt), mtbert and spdlog still compile against, and
# link, the fmt that fmt::fmt names. The second fmt here is a folder of headers
# that stop the compiler; without one_fmt.cmake the program must not build
# (the control), with it it must build and print the system fmt's version.
#   one_fmt_test.sh SOURCE_DIR
set -euo pipefail
src="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/torch/include/fmt"
for header in core.h format.h base.h ostream.h ranges.h chrono.h; do
  echo '#error "torch'"'"'s own fmt was included"' >"$work/torch/include/fmt/$header"
done
configure() {  # configure BUILD_DIR USE_ONE_FMT
  cmake -S "$src/test/cmake/one_fmt" -B "$1" -G Ninja -DMTBERT_SOURCE_DIR="$src" \
    -DFAKE_TORCH_INCLUDE="$work/torch/include" -DUSE_ONE_FMT="$2" >"$1.log" 2>&1 || { cat "$1.log"; exit 1; }
}

configure "$work/without" OFF
if cmake --build "$work/without" >"$work/without-build.log" 2>&1; then
  echo "FAILED: the control built: the second fmt did not shadow the system's"
  exit 1
fi
grep -q "torch's own fmt was included" "$work/without-build.log" ||
  { cat "$work/without-build.log"; echo "FAILED: the control failed for another reason"; exit 1; }
echo "ok: without one_fmt.cmake, torch's fmt shadows the system's"

configure "$work/with" ON
cmake --build "$work/with" >"$work/with-build.log" 2>&1 || { cat "$work/with-build.log"; echo "FAILED: did not build"; exit 1; }
out="$("$work/with/one_fmt_check" 2>&1)"
echo "$out"
system_version="$(printf '#include <fmt/core.h>\nFMT_VERSION\n' | ${CXX:-c++} -x c++ -E -P - | tail -n 1)"
grep -q "^fmt $system_version$" <<<"$out" || { echo "FAILED: expected fmt $system_version"; exit 1; }
echo "ok: with one_fmt.cmake, mtbert and spdlog compile against the system's fmt $system_version"
