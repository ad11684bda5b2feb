#!/usr/bin/env bash
# Compiles the CUDA graphs of the training step (src/train/step_graphs.cpp
# with MTBERT_WITH_CUDA) against the Torch headers found and CUDA's runtime
# headers, without linking: a CPU-only machine (CI) cannot capture a graph,
# but it proves the code matches the CUDAGraph API of this LibTorch.
#   step_graphs_compile.sh CXX TORCH_INCLUDE_DIRS(:-separated) SRC_DIR CUDA_INCLUDE_DIR
# MTBERT_CXX_STANDARD is the C++ standard of the build (17 unless the LibTorch
# asks for more). Prints SKIPPED (CTest reports the test as skipped) without
# cuda_runtime_api.h or LibTorch's ATen/cuda/CUDAGraph.h.
set -euo pipefail
cxx="$1" includes="$2" src="$3" cuda="$4"
flags=(-std=c++"${MTBERT_CXX_STANDARD:-17}" -fsyntax-only -I"$src" -isystem "$cuda" -DMTBERT_WITH_CUDA=1)
found_graph=0
IFS=: read -r -a dirs <<< "$includes"
for dir in "${dirs[@]}"; do
  # /usr/include is the compiler's own: naming it again breaks #include_next.
  [[ -n "$dir" && "$dir" != /usr/include ]] && flags+=(-isystem "$dir")
  [[ -f "$dir/ATen/cuda/CUDAGraph.h" ]] && found_graph=1
done
if [[ ! -f "$cuda/cuda_runtime_api.h" || $found_graph == 0 ]]; then
  echo "SKIPPED: no cuda_runtime_api.h in $cuda or no ATen/cuda/CUDAGraph.h among the Torch headers"
  exit 0
fi
# A CPU LibTorch (Debian's) ships c10/cuda headers without the header its CUDA
# build generates (an export macro for Windows DLLs).
flags+=(-DC10_CUDA_NO_CMAKE_CONFIGURE_FILE)
"$cxx" "${flags[@]}" "$src/train/step_graphs.cpp"
echo "the CUDA path of src/train/step_graphs.cpp compiles"
