#!/bin/bash
# mtbert against pip's LibTorch (venv-hf), CPU kernels only, outside the checkout.
set -e
TP=$(/work/venv-hf/bin/python -c 'import torch; print(torch.utils.cmake_prefix_path)')
cmake -S /work/main -B /work/build-pip -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TP" -DMTBERT_CUDA=OFF \
  -DPython3_EXECUTABLE=/work/venv-hf/bin/python 2>&1 | tail -15
time cmake --build /work/build-pip -j2 --target mtbert 2>&1 | tail -5
