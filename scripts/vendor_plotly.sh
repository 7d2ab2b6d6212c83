#!/usr/bin/env bash
# Re-download the vendored plotly.js (metaeval/static/vendor/, see metaeval/assets.py) with `npm pack`: the npm
# package plotly.js-cartesian-dist-min (scatter, bar, heatmap and the other cartesian traces; the report draws no
# others) at PLOTLY_VERSION, its minified bundle checked against PLOTLY_SHA256 before it replaces the file, and its
# MIT licence beside it. Only a maintainer moving to another plotly.js needs this (then update PLOTLY_VERSION and
# PLOTLY_SHA256 in metaeval/assets.py first); `make install` and `make run` use the committed file, no npm.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
read -r package version sha js license < <(PYTHONPATH=$PWD "$python" -c '
from metaeval.assets import PLOTLY_JS, PLOTLY_LICENSE, PLOTLY_NPM_PACKAGE, PLOTLY_SHA256, PLOTLY_VERSION
print(PLOTLY_NPM_PACKAGE, PLOTLY_VERSION, PLOTLY_SHA256, PLOTLY_JS, PLOTLY_LICENSE)')
command -v npm >/dev/null || { echo "vendor_plotly: npm is needed (only to re-download; nothing else needs it)"; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/vendor-plotly-XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$package@$version" >/dev/null && tar -xzf ./*.tgz)
got=$(sha256sum "$work/package/plotly-cartesian.min.js" | cut -d' ' -f1)
if [ "$got" != "$sha" ]; then
  echo "vendor_plotly: $package@$version's plotly-cartesian.min.js has SHA-256 $got, not the pinned $sha"; exit 1
fi
mkdir -p "metaeval/static/$(dirname "$js")"
cp "$work/package/plotly-cartesian.min.js" "metaeval/static/$js"
cp "$work/package/LICENSE" "metaeval/static/$license"
echo "vendor_plotly: metaeval/static/$js is $package@$version (SHA-256 $sha)"
