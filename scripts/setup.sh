#!/usr/bin/env bash
# One-time (and idempotent) set-up on a Debian machine: the Debian packages cmx-gen drives
# (Arm GCC, newlib, QEMU, CMake, Ninja, dtc), a virtualenv in .venv, and the pinned Python
# packages. Re-running is cheap: each part is skipped when already in place.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBS=(gcc libc6-dev cmake ninja-build gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
      qemu-system-arm device-tree-compiler python3-venv ccache chromium)
missing=()
for pkg in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || { echo "setup: cmx-gen needs Python 3.11 ($PY not found; set PYTHON=...)" >&2; exit 1; }
# A venv made without ensurepip has python but no pip: make it again.
[ -x .venv/bin/pip ] || { rm -rf .venv && "$PY" -m venv .venv; }

# Reinstall only when the dependency pins changed.
stamp=.venv/.cmx-gen-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python packages into .venv (torch CPU wheel, executorch, ...)" >&2
  # torch first, exactly pinned, CPU build: where pip's find-links do not hold the CPU wheel, set
  # TORCH_INDEX_URL to PyTorch's CPU wheel index, else pip takes the default build with CUDA (GBs).
  .venv/bin/pip install -q --disable-pip-version-check ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} "torch==2.13.0"
  .venv/bin/pip install -q --disable-pip-version-check -e ".[test]"
  echo "$want" >"$stamp"
fi
echo "setup: ready (.venv/bin/cmx-gen)" >&2
