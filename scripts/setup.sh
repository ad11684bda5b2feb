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

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=0

# Installs those of the given packages that are not installed yet.
install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if [ "$updated" -eq 0 ]; then
    $sudo apt-get update -q
    updated=1
  fi
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

install_missing "${packages[@]}"
# SentencePiece 0.2.1 on (Debian sid) includes Abseil's headers from its own
# without depending on them.
if grep -q 'absl/' /usr/include/sentencepiece_processor.h 2>/dev/null; then
  install_missing libabsl-dev
fi
[ "$updated" -eq 1 ] || echo "setup: all ${#packages[@]} packages already installed"
