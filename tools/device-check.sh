#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and a pip torch but no Qt: build the core and the Qt-free check
# program (tools/check) against the LibTorch inside that torch, run every scenario on CUDA in fp32
# and fp16, and print the results and the benchmark ratios. Meant to finish within 10 minutes.
#
#   tools/device-check.sh [--device cuda|cpu] [--steps N] [--no-bench] [--jobs N] [--build DIR]
#
# PYTHON picks the interpreter (default python3). For trying the script where no pip torch is
# installed: NANSCOPE_TORCH_PREFIX=DIR uses find_package(Torch) under DIR, and
# NANSCOPE_TORCH_WHEEL=DIR (with NANSCOPE_TORCH_CXX11_ABI=0|1) links a LibTorch laid out as a
# wheel (DIR/include, DIR/lib) directly, as the fallback for a CUDA wheel without a toolkit does.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
device=cuda
jobs=$(nproc 2>/dev/null || echo 2)
steps=0
bench=1
build="$root/build/device-check"
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --no-bench) bench=0; shift ;;
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "device-check: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
start=$(date +%s)
say() { echo "== [$(( $(date +%s) - start ))s] $*"; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

cmake_args=(-S "$root" -B "$build" -DNANSCOPE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release)
if [ -n "${NANSCOPE_TORCH_WHEEL:-}" ]; then
  say "LibTorch: linked directly from $NANSCOPE_TORCH_WHEEL"
  cmake_args+=(-DNANSCOPE_TORCH_WHEEL="$NANSCOPE_TORCH_WHEEL" -DNANSCOPE_TORCH_CXX11_ABI="${NANSCOPE_TORCH_CXX11_ABI:-1}")
  fallback=()
elif [ -n "${NANSCOPE_TORCH_PREFIX:-}" ]; then
  say "LibTorch: find_package(Torch) under $NANSCOPE_TORCH_PREFIX"
  cmake_args+=(-DCMAKE_PREFIX_PATH="$NANSCOPE_TORCH_PREFIX")
  fallback=()
else
  py=${PYTHON:-python3}
  "$py" -c 'import torch' || { echo "device-check: $py cannot import torch (pip install torch)" >&2; exit 1; }
  read -r prefix wheel abi version cuda < <("$py" -c 'import os, torch
print(torch.utils.cmake_prefix_path, os.path.dirname(torch.__file__), int(torch._C._GLIBCXX_USE_CXX11_ABI),
      torch.__version__, torch.version.cuda)')
  say "torch $version (CUDA $cuda) at $wheel, CXX11 ABI $abi"
  cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix")
  # Without a CUDA toolkit a CUDA wheel's TorchConfig fails: then link the wheel directly.
  fallback=(-DNANSCOPE_TORCH_WHEEL="$wheel" -DNANSCOPE_TORCH_CXX11_ABI="$abi")
fi

say "configure (Qt off)"
if ! cmake "${cmake_args[@]}" >"$build.configure.log" 2>&1; then
  [ ${#fallback[@]} -gt 0 ] || { cat "$build.configure.log"; exit 1; }
  say "find_package(Torch) failed ($(grep -m1 -i 'error' "$build.configure.log" || true)); linking the wheel directly"
  rm -rf "$build"
  cmake "${cmake_args[@]}" "${fallback[@]}" >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
fi
grep -E "LibTorch from the wheel|Qt6 or QCustomPlotQt6 not found" "$build.configure.log" || true

say "build nanscope_check with $jobs jobs"
cmake --build "$build" --target nanscope_check -j "$jobs" >"$build.build.log" 2>&1 || { tail -40 "$build.build.log"; exit 1; }

check="$build/tools/check/nanscope_check"
status=0
for precision in fp32 fp16; do
  say "every scenario on $device in $precision"
  flags=()
  [ "$bench" = 1 ] || flags=(--no-bench)
  timeout 240 "$check" "$device" "$steps" "$precision" "${flags[@]}" || status=$?
done
if [ "$device" = cpu ]; then
  # No GPU: at least run the code CUDA takes (statistics kept as tensors, one read a step).
  say "every scenario on cpu in fp32 through the device code path"
  timeout 240 "$check" cpu "$steps" fp32 --no-bench --device-path || status=$?
fi
say "done (exit $status)"
exit "$status"
