#!/usr/bin/env bash
# The README's main command: sets up, builds, and trains the quickstart
# experiment (a tiny random encoder with its own SentencePiece vocabulary on the
# committed samples of SST, Quora and STS; under a minute on 2 cores), then
# prints its dev metrics and draws its figures. Each call is a new run folder.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
out="runs/quickstart-$(date +%Y%m%d-%H%M%S)"
build/mtbert train experiments/quickstart.yaml --out "$out"
/usr/bin/python3 scripts/plot_run.py "$out"
