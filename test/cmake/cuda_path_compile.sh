#!/usr/bin/env bash
# Compiles a source file's CUDA path (syntax and types only, no linking)
# against the Torch headers found and CUDA's headers: a CPU-only machine (CI)
# cannot run it, but it proves the code matches this LibTorch's API.
#   cuda_path_compile.sh CXX TORCH_INCLUDE_DIRS(:-separated) SRC_DIR CUDA_INCLUDE_DIR \
#                        SOURCE TORCH_HEADER CUDA_HEADER [FLAGS...]
# SOURCE is relative to SRC_DIR; FLAGS select its CUDA path (-D...). Prints
# SKIPPED (CTest reports the test as skipped) when CUDA_INCLUDE_DIR has no
# CUDA_HEADER or no Torch include folder has TORCH_HEADER. MTBERT_CXX_STANDARD
# is the C++ standard of the build (17 unless the LibTorch asks for more).
set -euo pipefail
cxx="$1" includes="$2" src="$3" cuda="$4" source="$5" torch_header="$6" cuda_header="$7"
shift 7
flags=(-std=c++"${MTBERT_CXX_STANDARD:-17}" -fsyntax-only -I"$src" -isystem "$cuda" "$@")
found=0
IFS=: read -r -a dirs <<< "$includes"
for dir in "${dirs[@]}"; do
  # /usr/include is the compiler's own: naming it again breaks #include_next.
  [[ -n "$dir" && "$dir" != /usr/include ]] && flags+=(-isystem "$dir")
  [[ -f "$dir/$torch_header" ]] && found=1
done
if [[ ! -f "$cuda/$cuda_header" || $found == 0 ]]; then
  echo "SKIPPED: no $cuda_header in $cuda or no $torch_header among the Torch headers"
  exit 0
fi
# A CPU LibTorch (Debian's) ships c10/cuda headers without the header its CUDA
# build generates (an export macro for Windows DLLs).
flags+=(-DC10_CUDA_NO_CMAKE_CONFIGURE_FILE)
"$cxx" "${flags[@]}" "$src/$source"
echo "the CUDA path of src/$source compiles"
