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
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "assets: installing npm (apt-get) to fetch MathJax and the widget manager"
    apt-get update -qq && apt-get install -y -qq npm >/dev/null
  else
    echo "assets: npm (Node.js) is needed once to fetch MathJax and the widget manager from the npm" >&2
    echo "        registry; install it (e.g. apt-get install npm), or \`make book BOOK_ASSETS=cdn\`" >&2
    echo "        (the pages then load them from public CDNs and need the network)." >&2
    exit 1
  fi
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
