#!/usr/bin/env bash
# Compiles the communicator's NCCL path (src/dist/communicator.cpp with
# USE_C10D_NCCL) against the Torch headers found and CUDA's nccl.h, without
# linking: a CPU-only machine (CI) cannot run NCCL, but it proves the code
# matches the ProcessGroupNCCL API of this LibTorch.
#   nccl_compile.sh CXX TORCH_INCLUDE_DIRS(:-separated) SRC_DIR CUDA_INCLUDE_DIR
# MTBERT_CXX_STANDARD is the C++ standard of the build (17 unless the LibTorch
# asks for more). Prints SKIPPED (CTest reports the test as skipped) without nccl.h or
# LibTorch's ProcessGroupNCCL.hpp.
set -euo pipefail
cxx="$1" includes="$2" src="$3" cuda="$4"
flags=(-std=c++"${MTBERT_CXX_STANDARD:-17}" -fsyntax-only -fopenmp -I"$src" -isystem "$cuda"
       -DUSE_DISTRIBUTED -DUSE_C10D_GLOO -DMTBERT_WITH_GLOO -DUSE_C10D_NCCL -DUSE_CUDA)
found_pg=0
IFS=: read -r -a dirs <<< "$includes"
for dir in "${dirs[@]}"; do
  # /usr/include is the compiler's own: naming it again breaks #include_next.
  [[ -n "$dir" && "$dir" != /usr/include ]] && flags+=(-isystem "$dir")
  [[ -f "$dir/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp" ]] && found_pg=1
done
if [[ ! -f "$cuda/nccl.h" || $found_pg == 0 ]]; then
  echo "SKIPPED: no nccl.h in $cuda or no ProcessGroupNCCL.hpp among the Torch headers"
  exit 0
fi
# A CPU LibTorch (Debian's) ships c10/cuda headers without the header its CUDA
# build generates (an export macro for Windows DLLs).
flags+=(-DC10_CUDA_NO_CMAKE_CONFIGURE_FILE)
"$cxx" "${flags[@]}" "$src/dist/communicator.cpp"
echo "the NCCL path of src/dist/communicator.cpp compiles"
