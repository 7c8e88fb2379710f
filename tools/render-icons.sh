#!/usr/bin/env bash
# Renders packaging/icons/nanscope.svg to the PNG sizes the hicolor theme installs. The PNGs are
# committed (a build needs no SVG renderer); run this after changing the SVG.
# Needs rsvg-convert (Debian: librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")/../packaging/icons"
command -v rsvg-convert >/dev/null || { echo "render-icons: needs rsvg-convert (apt-get install librsvg2-bin)" >&2; exit 1; }
for size in 16 32 48 64 128 256; do
  rsvg-convert -w "$size" -h "$size" nanscope.svg -o "nanscope-$size.png"
done
echo "render-icons: wrote nanscope-{16,32,48,64,128,256}.png"
