#!/usr/bin/env bash
# Installs the Debian packages (scripts/setup.sh), then configures and builds
# mtbert in ./build (Release, Ninja). Extra arguments go to CMake's configure
# step, e.g. -DCMAKE_PREFIX_PATH=/path/to/libtorch for a CUDA LibTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# MTBERT_UNITY_BUILD=1 compiles each library as a few large translation units
# (CMake's unity build): a cold build in far less time, since every unit
# loads LibTorch's precompiled header (over 500 MB) once instead of once per
# file; CI's fresh builds use it. Off otherwise: an edit then recompiles its
# whole batch.
unity=OFF
[ "${MTBERT_UNITY_BUILD:-0}" = 1 ] && unity=ON
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=$unity "$@" >/dev/null
# Two jobs: LibTorch translation units need over 1 GB of memory each.
cmake --build build -j "${MTBERT_BUILD_JOBS:-2}"
