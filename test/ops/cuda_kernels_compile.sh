#!/usr/bin/env bash
# Compiles the CUDA kernels (src/ops/*.cu) with nvcc against the headers of the
# Torch CMake found, so machines without a GPU (CI) still prove they build.
#   cuda_kernels_compile.sh NVCC TORCH_INCLUDE_DIRS(:-separated) SRC_DIR KERNEL.cu...
# MTBERT_CXX_STANDARD is the C++ standard of the build (17 unless the LibTorch
# asks for more). Prints SKIPPED (CTest reports the test as skipped) when there is no nvcc.
set -euo pipefail
nvcc="$1" includes="$2" src="$3"
shift 3
if [[ -z "$nvcc" || "$nvcc" == *NOTFOUND || ! -x "$nvcc" ]]; then
  echo "SKIPPED: no nvcc on this machine (looked in PATH and /usr/local/cuda/bin)"
  exit 0
fi
if [[ $# -eq 0 ]]; then
  echo "no .cu files given" >&2
  exit 1
fi
flags=(-std=c++"${MTBERT_CXX_STANDARD:-17}" --expt-relaxed-constexpr -I"$src"
       # As torch's own extension builds do: c10's half types, not CUDA's operators.
       -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__
       -D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__)
have_cuda_macros=0
IFS=: read -r -a dirs <<< "$includes"
for dir in "${dirs[@]}"; do
  [[ -n "$dir" ]] && flags+=(-I"$dir")
  [[ -f "$dir/c10/cuda/impl/cuda_cmake_macros.h" ]] && have_cuda_macros=1
done
# A CPU LibTorch (Debian's) ships c10/cuda headers without the header its CUDA
# build generates; it only holds an export macro for Windows DLLs.
if [[ $have_cuda_macros == 0 ]]; then flags+=(-DC10_CUDA_NO_CMAKE_CONFIGURE_FILE); fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$nvcc" --version | tail -n 2
for kernel in "$@"; do
  name=$(basename "$kernel" .cu)
  "$nvcc" "${flags[@]}" -c "$kernel" -o "$out/$name.o"
  echo "compiled $name.cu ($(stat -c %s "$out/$name.o") bytes of object code)"
done
