#!/usr/bin/env bash
# Installs the Debian 12 packages NaNScope needs, and only the missing ones, so a second run is
# a no-op. Works as root or through sudo. Qt Linguist (qt6-tools-dev, qt6-l10n-tools) compiles the
# window's translations at build time; fonts-noto-cjk draws its Chinese. --tests adds what only the tests need: Debian's
# python3-torch writes real PyTorch models (traced and scripted) for tst_python_*, python3-pytest
# runs the Python recorder's tests (python/tests) and python3-pip builds its wheel; the packaging
# checks (tst_desktop_integration, debian_packages) validate the desktop entry, the AppStream
# metadata and the MIME type, and build the .deb files (dpkg-shlibdeps, and `file`, which CPackDeb
# runs on each binary); --package adds what `make package` needs (the same, pip for the wheel); --fuzz
# adds clang-14 and libFuzzer for tools/fuzz/run.sh.
set -euo pipefail

packages=(cmake g++ make ccache qt6-base-dev libtorch-dev libqcustomplot-dev libqcustomplot2.1-qt6
          libcli11-dev nlohmann-json3-dev libsqlite3-dev libssl-dev libgloo-dev xauth xvfb
          qt6-tools-dev qt6-l10n-tools fonts-noto-cjk)
[ "${1:-}" = "--tests" ] && packages+=(python3-torch python3-pytest python3-pip python3-setuptools python3-wheel
                                       desktop-file-utils appstream shared-mime-info libglib2.0-bin
                                       libxml2-utils dpkg-dev file)
[ "${1:-}" = "--package" ] && packages+=(dpkg-dev file python3-pip python3-setuptools python3-wheel)
[ "${1:-}" = "--fuzz" ] && packages+=(clang-14 libfuzzer-14-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && { echo "install-deps: all packages present"; exit 0; }

if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
  echo "install-deps: missing ${missing[*]}; run as root or install sudo" >&2; exit 1
fi
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
