#!/usr/bin/env bash
# Builds the .deb files of a build folder into a scratch folder and checks what they hold: the
# files a desktop needs, Depends computed from the shared libraries (LibTorch for both, Qt for the
# window only, Python for neither), the version, and that the packaged programs run.
# CTest's debian_packages; by hand: packaging/check-packages.sh build/dev 0.1.0
set -euo pipefail
build=${1:?usage: check-packages.sh BUILD_DIR VERSION}
version=${2:?usage: check-packages.sh BUILD_DIR VERSION}
# CPackDeb runs `file` on each packaged binary: without it cpack stops with a message that names
# no package to install.
for tool in cpack dpkg-deb dpkg-shlibdeps file; do
  command -v "$tool" >/dev/null || { echo "check-packages: $tool is missing (tools/install-deps.sh --tests)"; exit 1; }
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if ! cpack --config "$build/CPackConfig.cmake" -B "$scratch" -G DEB >"$scratch/cpack.log" 2>&1; then
  cat "$scratch/cpack.log"
  exit 1
fi
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

check_package() {  # NAME, then the paths it must hold
  local name=$1; shift
  local deb
  deb=$(find "$scratch" -name "${name}_${version}-*.deb" -print -quit)
  [ -n "$deb" ] || { fail "no ${name}_${version}-*.deb among: $(find "$scratch" -name '*.deb')"; return; }
  echo "== $(basename "$deb")"
  dpkg-deb -c "$deb" | awk '{print $6}' >"$scratch/$name.files"
  for path in "$@"; do
    grep -qx "$path" "$scratch/$name.files" || fail "$name lacks $path"
  done
  dpkg-deb -f "$deb" Package Version Depends Conflicts | tee "$scratch/$name.control"
  dpkg-deb -x "$deb" "$scratch/$name.root"
}

check_package nanscope ./usr/bin/nanscope ./usr/share/man/man1/nanscope.1.gz \
  ./usr/share/applications/nanscope.desktop ./usr/share/mime/packages/nanscope.xml \
  ./usr/share/metainfo/io.github.nanscope.nanscope.metainfo.xml \
  ./usr/share/icons/hicolor/scalable/apps/nanscope.svg ./usr/share/icons/hicolor/48x48/apps/nanscope.png \
  ./usr/share/icons/hicolor/256x256/apps/nanscope.png
check_package nanscope-headless ./usr/bin/nanscope ./usr/share/man/man1/nanscope.1.gz

depends() { sed -n 's/^Depends: //p' "$scratch/$1.control"; }
for name in nanscope nanscope-headless; do
  [ -s "$scratch/$name.control" ] || continue
  grep -qx "Version: ${version}-1" "$scratch/$name.control" || fail "$name: version is not ${version}-1"
  depends "$name" | grep -q 'libtorch' || fail "$name: Depends lacks LibTorch"
  depends "$name" | grep -q 'python' && fail "$name: Depends names Python"
  # The man page lists every sub-command the program has.
  man_page=$(gzip -dc "$scratch/$name.root/usr/share/man/man1/nanscope.1.gz")
  for command in scenarios run report export diff replay inspect bench; do
    grep -qx ".SS $command" <<<"$man_page" || fail "$name: man page has no section for $command"
  done
  # The packaged (stripped) program runs: its version, and a headless command.
  program=$scratch/$name.root/usr/bin/nanscope
  said=$(env -u DISPLAY "$program" --version)
  [[ $said == "nanscope $version (LibTorch "* ]] || fail "$name: --version says: $said"
  [[ $name != nanscope-headless || $said == *", headless)" ]] || fail "$name: its program is not the headless one"
  listed=$("$program" scenarios)
  grep -q '^large-lr-mse' <<<"$listed" || fail "$name: 'scenarios' does not list large-lr-mse"
done
if [ -s "$scratch/nanscope.control" ]; then
  depends nanscope | grep -q 'libqt6widgets6' || fail "nanscope: Depends lacks Qt 6 Widgets"
  depends nanscope | grep -q 'libqcustomplot' || fail "nanscope: Depends lacks QCustomPlot"
  grep -qx 'Conflicts: nanscope-headless' "$scratch/nanscope.control" || fail "nanscope: no Conflicts: nanscope-headless"
fi
if [ -s "$scratch/nanscope-headless.control" ]; then
  depends nanscope-headless | grep -q 'libqt' && fail "nanscope-headless: Depends names Qt"
  grep -qx 'Conflicts: nanscope' "$scratch/nanscope-headless.control" || fail "nanscope-headless: no Conflicts: nanscope"
fi
[ "$failures" -eq 0 ] && echo "check-packages: both packages hold what they should" && exit 0
echo "check-packages: $failures failures"
exit 1
