#!/usr/bin/env bash
# Installs the Debian packages Tenfold builds and runs with; quiet and quick when all are there.
set -euo pipefail
packages=(build-essential cmake pkg-config libdnnl-dev ocl-icd-opencl-dev libhdf5-dev hdf5-tools
          nlohmann-json3-dev zlib1g-dev libpng-dev libjpeg62-turbo-dev libzip-dev libcairo2-dev libopenmpi-dev openmpi-bin
          libgtest-dev libbenchmark-dev dataset-fashion-mnist
          clang libclang-rt-14-dev libomp-14-dev python3-venv)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "Installing missing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
