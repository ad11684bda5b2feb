#!/usr/bin/env bash
# Installs every Debian package mtbert needs to build, test, benchmark and plot.
# Idempotent: packages already present are left alone, and `apt-get update`
# runs only when something is missing. Runs as root, or through sudo otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git pkg-config
  libtorch-dev libopenblas0-pthread libgloo-dev
  libsentencepiece-dev sentencepiece
  libyaml-cpp-dev catch2 libspdlog-dev libfmt-dev
  libutf8proc-dev libcli11-dev nlohmann-json3-dev
  python3 python3-torch python3-numpy python3-yaml python3-matplotlib
  python3-sentencepiece
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
