#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and a pip torch but no Qt: build the core, the headless command
# line and the Qt-free programs of tools/check against the LibTorch inside that torch, run the test
# suites' CUDA cases (nanscope_cuda_cases), every scenario on CUDA in fp32 and fp16, a data-parallel
# job on the GPU(s), the Python recorder's cost and host syncs a step, and print the results and
# the benchmark ratios. Meant to finish within 10 minutes.
#
#   tools/device-check.sh [--device cuda|cpu] [--steps N] [--no-bench] [--no-ranks] [--jobs N] [--build DIR]
#
# NANSCOPE_CMAKE_ARGS adds configure arguments (where SQLite, OpenSSL, nlohmann/json, CLI11 or
# Gloo's headers are, on a machine without Debian's -dev packages).
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
ranks=1
build="$root/build/device-check"
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --no-bench) bench=0; shift ;;
    --no-ranks) ranks=0; shift ;;
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "device-check: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
start=$(date +%s)
say() { echo "== [$(( $(date +%s) - start ))s] $*"; }

if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true; fi

cmake_args=(-S "$root" -B "$build" -DNANSCOPE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release)
# Ninja for a new build folder (it keeps going past errors more simply); a folder keeps its generator.
if command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ]; then cmake_args+=(-G Ninja); fi
# shellcheck disable=SC2206  # word splitting is the point
[ -z "${NANSCOPE_CMAKE_ARGS:-}" ] || cmake_args+=($NANSCOPE_CMAKE_ARGS)
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
grep -E "LibTorch from the wheel|Qt6 or QCustomPlotQt6 not found|NCCL collectives|Gloo's headers" "$build.configure.log" || true

# Every error at once (keep going past the first); a failing process group's source is built
# without it on a second try, so the rest still gets checked.
build_all() {
  local keep=(-k)
  grep -q "CMAKE_GENERATOR:INTERNAL=Ninja" "$build/CMakeCache.txt" && keep=(-k 0)
  cmake --build "$build" --target nanscope_check nanscope_cuda_cases nanscope -j "$jobs" -- "${keep[@]}" >"$build.build.log" 2>&1
}
# The error lines of the last build, not the "Building ... .o" lines that name every source.
build_errors() { grep -E "(fatal )?error|^FAILED:" -A3 "$build.build.log" | head -"$1" || true; }
failed_in() { grep -qE "$1\.cpp:[0-9]+:[0-9]+: (fatal )?error|^FAILED: .*$1" "$build.build.log"; }
say "build nanscope_check, nanscope_cuda_cases and nanscope with $jobs jobs"
if ! build_all; then
  build_errors 80
  retry=()
  failed_in collectives_nccl && retry+=(-DNANSCOPE_WITH_NCCL=OFF)
  failed_in collectives_gloo && retry+=(-DNANSCOPE_WITH_GLOO=OFF)
  [ ${#retry[@]} -gt 0 ] || exit 1
  say "building again with ${retry[*]}"
  cmake "$build" "${retry[@]}" >>"$build.configure.log" 2>&1
  build_all || { build_errors 60; exit 1; }
fi

check="$build/tools/check/nanscope_check"
nanscope="$build/app/nanscope"
status=0
results=()
# Each stage runs under its own limit, and none starts past the deadline (DEADLINE seconds from the
# start, 540 by default): a run of a limited length keeps what it measured.
deadline=${DEADLINE:-540}
stage() {  # name, limit in seconds, command...
  local name=$1 limit=$2 rc=0
  shift 2
  if [ $(( $(date +%s) - start )) -ge "$deadline" ]; then
    results+=("skipped (deadline)  $name")
    return
  fi
  say "$name"
  timeout "$limit" "$@" || rc=$?
  [ "$rc" = 0 ] || status=$rc
  results+=("exit $rc  $name")
}
scenarios() {  # "precision [nanscope_check's own flags]"
  local flags=()
  [ "$bench" = 1 ] || flags=(--no-bench)
  # shellcheck disable=SC2086  # the precision and its flags, split
  stage "every scenario on $device in $1" 240 "$check" "$device" "$steps" $1 "${flags[@]}"
}
if [ "$device" = cuda ]; then
  # The test suites' CUDA cases, each value compared (PASS/FAIL lines): real autocast, the scaler.
  stage "the CUDA test cases" 180 "$build/tools/check/nanscope_cuda_cases"
  if [ "$bench" = 1 ]; then
    # The Python recorder beside a plain loop and the per-layer isnan recipe, and the host
    # synchronisations a step of each: the recipe's grow with the modules, the recorder's must not.
    stage "the Python recorder on cuda: cost and host syncs a step" 180 env PYTHONPATH="$root/python" \
      "${PYTHON:-python3}" "$root/python/benchmarks/bench_recorder.py" --device cuda --rounds 5 --steps 20 --syncs
  fi
fi
scenarios fp32
if [ "$ranks" = 1 ]; then
  job=$(mktemp -d)
  if [ "$device" = cuda ]; then
    # NCCL wants a GPU per rank: one rank here; with 2 GPUs or more, the job of 2 ranks below
    # runs over NCCL too.
    stage "one NCCL rank on cuda, a NaN sample at step 3" 120 "$nanscope" run --scenario large-lr-ce --ranks 1 \
      --device cuda --backend nccl --steps 20 --inject nan-sample@0:3 --collective-timeout 60
  fi
  # On one GPU the 2 ranks share it and exchange through Gloo; with a GPU each, over NCCL.
  stage "nan-input as 2 ranks on $device" 180 "$nanscope" run --scenario nan-input --ranks 2 --device "$device" \
    --steps 60 --collective-timeout 60 --record "$job/nan-input"
  if [ "$device" = cuda ]; then
    stage "bench --ranks 1 on cuda over NCCL" 120 "$nanscope" bench --ranks 1 --device cuda --backend nccl \
      --rounds 100 --json
    stage "bench --ranks 2 on cuda" 120 "$nanscope" bench --ranks 2 --device cuda --rounds 100 --json
  fi
  for model in mlp cnn deep; do
    stage "bench --ranks 2 on the CPU, $model" 120 "$nanscope" bench --ranks 2 --only "$model" --json
  done
fi
scenarios fp16
if [ "$device" = cpu ]; then
  # No GPU: at least run the code CUDA takes (statistics kept as tensors, one read a step).
  bench=0
  scenarios "fp32 --device-path"
fi
say "done (exit $status)"
printf '  %s\n' "${results[@]}"
exit "$status"
