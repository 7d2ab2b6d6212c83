#!/usr/bin/env bash
# Rebuild the vendored plotly.js (metaeval/static/vendor/, see metaeval/assets.py): a partial bundle of the npm package
# plotly.js with only the trace types the report draws (PLOTLY_TRACES), built as plotly's own partial bundles are
# (its core and `Plotly.register` of each trace, esbuild, minified, the attributes' documentation strings left out).
# `npm ci` installs the versions scripts/plotly_bundle/package-lock.json pins (plotly.js at PLOTLY_VERSION, esbuild)
# into a temporary folder; the bundle must have PLOTLY_SHA256 before it replaces the file, and plotly.js's MIT
# licence goes beside it. Only a maintainer changing plotly.js or the trace types needs this (then update
# metaeval/assets.py and the pins first, run it with UPDATE=1 and put the SHA-256 it prints in PLOTLY_SHA256);
# `make install` and `make run` use the committed file, no npm.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
mapfile -t pins < <(PYTHONPATH=$PWD "$python" -c '
from metaeval import assets as a
print(a.PLOTLY_NPM_PACKAGE, a.PLOTLY_VERSION, a.PLOTLY_SHA256, a.PLOTLY_JS, a.PLOTLY_LICENSE, *a.PLOTLY_TRACES, sep="\n")
print(a.PLOTLY_BANNER)')
package=${pins[0]} version=${pins[1]} sha=${pins[2]} js=${pins[3]} license=${pins[4]} banner=${pins[-1]}
traces=("${pins[@]:5:${#pins[@]}-6}")
command -v npm >/dev/null || { echo "vendor_plotly: npm is needed (only to rebuild; nothing else needs it)"; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/vendor-plotly-XXXXXX")
trap 'rm -rf "$work"' EXIT
cp scripts/plotly_bundle/package.json scripts/plotly_bundle/package-lock.json scripts/plotly_bundle/build.mjs "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
pinned=$(cd "$work" && node -p 'require("./node_modules/'"$package"'/package.json").version')
if [ "$pinned" != "$version" ]; then
  echo "vendor_plotly: scripts/plotly_bundle pins $package $pinned, not PLOTLY_VERSION $version"; exit 1
fi
(cd "$work" && node build.mjs bundle.min.js "$banner" "${traces[@]}")
got=$(sha256sum "$work/bundle.min.js" | cut -d' ' -f1)
if [ "$got" != "$sha" ] && [ "${UPDATE:-0}" != 1 ]; then
  echo "vendor_plotly: the $package@$version bundle built has SHA-256 $got, not the pinned $sha"; exit 1
fi
mkdir -p "metaeval/static/$(dirname "$js")"
cp "$work/bundle.min.js" "metaeval/static/$js"
cp "$work/node_modules/$package/LICENSE" "metaeval/static/$license"
echo "vendor_plotly: metaeval/static/$js is $package@$version with ${traces[*]} (SHA-256 $got)"
