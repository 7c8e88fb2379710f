#!/bin/sh
# Regenerates the README's screenshots from a built tree: sh tools/screenshots/make.sh [BUILD_DIR]
# Needs Debian's python3-torch (tools/install-deps.sh --tests installs it). Each run trains in the real window (offscreen), saves it when the run ends and exits.
set -eu
build=${1:-build/dev}
nanscope="$build/app/nanscope"
export QT_QPA_PLATFORM=offscreen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tools/screenshots/resnet18.py "$tmp/resnet18.pt"
"$nanscope" --scenario large-lr-mse --steps 12 --screenshot docs/large-lr-mse.png
"$nanscope" --scenario exploding-deep --steps 3 --map magnitude --screenshot docs/exploding-deep-magnitude.png
"$nanscope" --model "$tmp/resnet18.pt" --input-shape 8x3x32x32 --steps 60 --map magnitude \
    --screenshot docs/resnet18-map.png
"$nanscope" run --scenario nan-input --steps 12 --ranks 2 --record "$tmp/job" > /dev/null
"$nanscope" "$tmp/job" --screenshot docs/job-ranks.png
"$nanscope" --language zh_CN --scenario zero-division --steps 30 --screenshot docs/zh-origin.png
"$nanscope" --language zh_CN --scenario negative-variance --fix --dock lesson --screenshot docs/zh-lesson.png
