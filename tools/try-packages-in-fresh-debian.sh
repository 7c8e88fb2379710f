#!/usr/bin/env bash
# Installs the built .deb files into a fresh Debian 12 root the way a user would
# (`apt-get install ./nanscope_*.deb`), then runs `nanscope --version` and a headless run there;
# then replaces it with nanscope-headless and does the same. Not in CI: it downloads a Debian base
# system and NaNScope's dependencies (several minutes, about 2 GB on disk). Needs root
# (debootstrap, chroot) and Debian's debootstrap package.
#   tools/try-packages-in-fresh-debian.sh [PACKAGES_DIR] [ROOT_DIR]
# PACKAGES_DIR defaults to build/dev/packages (`make package`); ROOT_DIR to a new temporary folder,
# removed at the end unless KEEP_ROOT=1.
set -euo pipefail
packages=$(realpath "${1:-build/dev/packages}")
root=${2:-$(mktemp -d /tmp/nanscope-debian12.XXXXXX)}
mirror=${MIRROR:-http://deb.debian.org/debian}

[ "$(id -u)" -eq 0 ] || { echo "try-packages: needs root (debootstrap, chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "try-packages: apt-get install debootstrap" >&2; exit 1; }
window_deb=$(find "$packages" -maxdepth 1 -name 'nanscope_*.deb' -print -quit)
headless_deb=$(find "$packages" -maxdepth 1 -name 'nanscope-headless_*.deb' -print -quit)
[ -n "$window_deb" ] && [ -n "$headless_deb" ] || { echo "try-packages: no .deb files in $packages (make package)" >&2; exit 1; }

cleanup() {
  umount "$root/proc" 2>/dev/null || true
  [ "${KEEP_ROOT:-0}" = 1 ] || rm -rf "$root"
}
trap cleanup EXIT

step() { echo; echo "### $*"; }
step "a minimal Debian 12 root in $root"
[ -x "$root/usr/bin/apt-get" ] || debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
  { tail -20 "$root.debootstrap.log"; exit 1; }
mount -t proc proc "$root/proc"
mkdir -p "$root/tmp/debs"
cp "$window_deb" "$headless_deb" "$root/tmp/debs/"
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"; }
in_root apt-get update -qq

step "apt-get install ./$(basename "$window_deb")"
in_root apt-get install -y -qq --no-install-recommends "/tmp/debs/$(basename "$window_deb")" >/dev/null
in_root dpkg -s nanscope | grep -E '^(Package|Version|Depends):'
step "nanscope --version"
in_root nanscope --version
step "nanscope run --scenario nan-input --steps 5 --record /tmp/run.nsrun; nanscope report"
in_root nanscope run --scenario nan-input --steps 5 --record /tmp/run.nsrun | tail -n 4
in_root nanscope report /tmp/run.nsrun | head -n 6
step "what the desktop sees"
in_root ls /usr/share/applications/nanscope.desktop /usr/share/icons/hicolor/scalable/apps/nanscope.svg \
  /usr/share/mime/packages/nanscope.xml
in_root sh -c 'man -w nanscope 2>/dev/null || ls /usr/share/man/man1/nanscope.1.gz'
# shared-mime-info's trigger compiles the type in where the package manager installed it.
in_root sh -c 'if [ -x /usr/bin/update-mime-database ]; then ls /usr/share/mime/application/x-nanscope-run.xml;
  else echo "(no shared-mime-info here: nothing to register the run type with)"; fi'

step "apt-get install ./$(basename "$headless_deb") (replaces the window's package)"
in_root apt-get install -y -qq --no-install-recommends "/tmp/debs/$(basename "$headless_deb")" >/dev/null
in_root dpkg -l 'nanscope*' | grep '^ii'
step "nanscope --version"
in_root nanscope --version
step "nanscope run --scenario log-zero --steps 3"
in_root nanscope run --scenario log-zero --steps 3 | tail -n 4
echo
echo "try-packages: both packages installed and ran in a fresh Debian 12 root"
