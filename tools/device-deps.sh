#!/usr/bin/env bash
# What a GPU machine without Debian's -dev packages needs to build the headless NaNScope
# (tools/device-check.sh), gathered on a Debian 12 machine, and unpacked on the GPU machine.
#
#   tools/device-deps.sh gather DIR [GLOO]   (Debian 12) the .deb files of SQLite, OpenSSL,
#       nlohmann/json and CLI11 into DIR/debs; with GLOO (a pytorch/gloo checkout or bare git
#       repository, as new as the pip LibTorch's), Gloo's headers into DIR/gloo/include, with the
#       config.h its CMake would write for a Linux TCP build. A pip wheel ships no Gloo headers,
#       and Debian's are older than a LibTorch 2.x's own Gloo.
#   tools/device-deps.sh unpack DIR [PREFIX] (the GPU machine) unpacks DIR/debs under PREFIX
#       (default /tmp/nanscope-deps) and prints the variables device-check.sh reads:
#       eval "$(tools/device-deps.sh unpack DIR)" && tools/device-check.sh --device cuda
set -euo pipefail

gather() {
  local dir=$1 gloo=${2:-}
  mkdir -p "$dir/debs"
  (cd "$dir/debs" && apt-get download libsqlite3-dev libsqlite3-0 libssl-dev libssl3 nlohmann-json3-dev libcli11-dev)
  [ -n "$gloo" ] || return 0
  mkdir -p "$dir/gloo/include"
  if git -C "$gloo" rev-parse --verify -q HEAD >/dev/null; then
    git -C "$gloo" archive HEAD gloo | tar -x -C "$dir/gloo/include" --wildcards 'gloo/*.h'
    git -C "$gloo" show HEAD:gloo/config.h.in >"$dir/gloo/config.h.in"
  else
    (cd "$gloo" && find gloo -name '*.h' -print0 | tar -c --null -T - -f -) | tar -x -C "$dir/gloo/include"
    cp "$gloo/gloo/config.h.in" "$dir/gloo/config.h.in"
  fi
  # Version 0.5.0 and the TCP transport, as PyTorch's Linux build has them; nothing else.
  sed -e 's/@GLOO_VERSION_MAJOR@/0/; s/@GLOO_VERSION_MINOR@/5/; s/@GLOO_VERSION_PATCH@/0/' \
      -e 's/#cmakedefine01 GLOO_HAVE_TRANSPORT_TCP$/#define GLOO_HAVE_TRANSPORT_TCP 1/' \
      -e 's/#cmakedefine01 \(GLOO_[A-Z_]*\)/#define \1 0/' \
      "$dir/gloo/config.h.in" >"$dir/gloo/include/gloo/config.h"
  rm "$dir/gloo/config.h.in"
}

unpack() {
  local dir prefix=${2:-/tmp/nanscope-deps}
  dir=$(cd "$1" && pwd)
  mkdir -p "$prefix"
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
  local usr="$prefix/usr" args
  # OpenSSL keeps one header in the architecture's own include folder.
  args="-DOPENSSL_ROOT_DIR=$usr -DCMAKE_CXX_FLAGS=-isystem$usr/include/x86_64-linux-gnu"
  [ ! -d "$dir/gloo/include" ] || args+=" -DNANSCOPE_GLOO_INCLUDE=$dir/gloo/include"
  echo "export CMAKE_PREFIX_PATH=$usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  echo "export NANSCOPE_CMAKE_ARGS='$args'"
}

case "${1:-}" in
  gather) [ $# -ge 2 ] || { echo "usage: $0 gather DIR [GLOO]" >&2; exit 2; }; gather "$2" "${3:-}" ;;
  unpack) [ $# -ge 2 ] || { echo "usage: $0 unpack DIR [PREFIX]" >&2; exit 2; }; unpack "$2" "${3:-}" ;;
  *) echo "usage: $0 gather DIR [GLOO] | unpack DIR [PREFIX]" >&2; exit 2 ;;
esac
