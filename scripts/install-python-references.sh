#!/usr/bin/env bash
# Installs the PyPI reference implementations used by fixture scripts and benchmarks
# (never needed to build or test: fixtures are committed).
set -euo pipefail
python3 -m pip install -q --upgrade numpy h5py torch tensorflow-cpu
