#!/usr/bin/env bash
# Installs the Debian packages (scripts/setup.sh), then configures and builds
# mtbert in ./build (Release, Ninja). Extra arguments go to CMake's configure
# step, e.g. -DCMAKE_PREFIX_PATH=/path/to/libtorch for a CUDA LibTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
# Two jobs: LibTorch translation units need over 1 GB of memory each.
cmake --build build -j "${MTBERT_BUILD_JOBS:-2}"
