#!/usr/bin/env bash
# Runs here, on Debian 12 with its archive: fetches the Debian 12 packages
# that building and testing mtbert need and the GPU machine's image lacks,
# into .debs/ (git-ignored; name it in the device tool's `carry`). The image
# has CUDA 13 (nvcc), Python 3.12 with pip's torch and its LibTorch, cmake,
# ninja and compute-sanitizer, but no Debian packages and no network; Debian
# 12's binaries run there (its glibc is newer). scripts/gpu/check.sh unpacks
# them there. A few MB; idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."

packages=(
  libyaml-cpp-dev libyaml-cpp0.7 libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libcli11-dev nlohmann-json3-dev
  libutf8proc-dev libutf8proc2 libsentencepiece-dev libsentencepiece0 libprotobuf-lite32 libgloo-dev catch2
  pkgconf pkgconf-bin libpkgconf3
)

mkdir -p .debs
cd .debs
missing=()
for p in "${packages[@]}"; do
  compgen -G "${p}_*.deb" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || { echo "prepare.sh: needs Debian's apt-get" >&2; exit 1; }
  apt-get download "${missing[@]}" 2>/dev/null || { apt-get update -q >/dev/null && apt-get download "${missing[@]}"; }
fi
echo "prepare.sh: $(ls ./*.deb | wc -l) packages in .debs ($(du -sh . | cut -f1)); carry .debs with the device call"
