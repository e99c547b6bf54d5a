"""Checks of the built book (`make book` first; `make test` runs them after the build).

The browser checks read every page of the table of contents in headless Chromium with no network
at all, as an offline reader would (Chromium driven over the DevTools protocol on a pipe, nothing
to install but Chromium): the maths is typeset, each widget shows its saved state, the console
shows no error, no request leaves the machine, no figure is wider than the text column, and the
whole page is saved as 1280x1600 screenshots in _build/screenshots/<page>_NN.png for people to
look at, and each chapter's explorer changes its view when a reader changes a choice (with no
kernel: modlib/widgets.py). Without Chromium they are skipped with a note, except under CI=true,
where they fail.
"""

import base64
import fcntl
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
TOY = HTML / "notebooks" / "redundant_input_toy.html"
SHOTS = ROOT / "_build" / "screenshots"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
URL = CONFIG["repository"]["url"]
WIDTH, SLICE = 1280, 1600  # the window the pages are read in, and the height of one screenshot
WINDOW_MOST = 30_000  # the tallest window the screenshots lay a page out in
EXPLORER_BYTES = 1_500_000  # the images a static explorer may embed (PNG bytes, before base64)


def toc_pages() -> list[str]:
    """Every page of _toc.yml, in reading order (e.g. "book/welcome", "notebooks/weight_masks")."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                pages.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    return [re.sub(r"\.(md|ipynb)$", "", page) for page in pages]


PAGES = toc_pages()
NOTEBOOK_PAGES = [page for page in PAGES if (ROOT / f"{page}.ipynb").exists()]


def by_page(pages: list[str]) -> list:
    """``pages`` as parameters, each test's id ending in ``[<page>]``: `make test` runs the checks of
    one page on one worker (tests/conftest.py's scheduler), so that each worker's Chromium opens a
    page once and no two workers write one page's screenshots."""
    return [pytest.param(page, id=page) for page in pages]


@pytest.fixture(scope="module")
def toy_html() -> str:
    assert TOY.exists(), "build the book first: make book"
    return TOY.read_text()


def test_book_has_its_pages():
    assert (HTML / "index.html").exists()
    assert {"book/welcome", "book/how_to_run", "book/toy_theory", "notebooks/redundant_input_toy",
            "notebooks/weight_masks"} <= set(PAGES)
    for page in PAGES:
        assert (HTML / f"{page}.html").exists(), page


def test_pages_load_no_script_from_a_cdn():
    """make book serves MathJax, require.js and the widget manager from _static/offline/."""
    assert (HTML / "_static" / "offline" / "vendor" / "VERSIONS").exists(), "built without the offline assets (BOOK_ASSETS=local)"
    for page in PAGES:
        html = (HTML / f"{page}.html").read_text()
        remote = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?://[^"]+)"', html)
        assert not remote, f"{page} loads {remote}"


def test_pages_show_no_progress_bars():
    for page in NOTEBOOK_PAGES:  # the build sets TQDM_DISABLE
        html = (HTML / f"{page}.html").read_text()
        assert not re.search(r"\d(it/s|s/it)\]", html), f"{page} shows a progress bar"


def test_toy_page_has_figures_launch_buttons_and_provenance(toy_html):
    figures = re.findall(r'<img[^>]+src="[^"]*\.png"', toy_html)
    assert len(figures) >= 10, f"only {len(figures)} figures"
    colab = f"https://colab.research.google.com/github/{URL.split('github.com/')[1]}/blob/{CONFIG['repository']['branch']}/notebooks/redundant_input_toy.ipynb"
    assert colab in toy_html
    assert f'href="{URL}"' in toy_html  # repository button
    assert re.search(r"profile: (full|default): \d+ seeds", toy_html), "the page does not say its profile"


def test_no_launch_link_opens_a_markdown_file():
    """Colab cannot open a MyST Markdown page: no page's Colab link points at a .md file (the theory
    pages and the ledger show no launch button; book/_ext/notebook_launch.py)."""
    for page in PAGES:
        html = (HTML / f"{page}.html").read_text()
        links = re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', html)
        wrong = [link for link in links if not link.split("?")[0].endswith(".ipynb")]
        assert not wrong, f"{page} launches {wrong}"


def test_toy_page_has_a_static_explorer_and_a_kernel_free_animation(toy_html):
    """The explorer's output holds a live widget and a static version (modlib/widgets.py); the page
    shows the static one (_config.yml's nb_mime_priority_overrides), not the widget's first frame."""
    assert 'type="application/vnd.jupyter.widget-state+json"' in toy_html  # saved, for the live one
    assert 'type="application/vnd.jupyter.widget-view+json"' not in toy_html
    assert toy_html.count('<div class="modlib-explorer"') == 1
    assert re.search(r'<div class="animation">', toy_html)


def test_every_chapter_has_one_static_explorer_within_its_weight():
    """Each chapter page's explorer, pre-rendered: at most EXPLORER_BYTES of embedded images."""
    for page in NOTEBOOK_PAGES:
        html = (HTML / f"{page}.html").read_text()
        boxes = re.findall(r'<div class="modlib-explorer".*?</script>', html, flags=re.S)
        assert len(boxes) == 1, f"{page}: {len(boxes)} static explorers"
        images = sum(len(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', boxes[0])) * 3 // 4
        assert images <= EXPLORER_BYTES, f"{page}: the explorer embeds {images / 1e6:.2f} MB of images"


def test_figures_and_exercises_are_numbered_per_chapter():
    """book/_ext/chapter_numbers.py: on a chapter's pages, "Fig. 4.1" and "Exercise 4.1", counted
    through the chapter's pages in reading order, whatever comes before it in the book."""
    chapters = CONFIG["sphinx"]["config"]["chapter_numbers"]
    assert set(chapters) <= set(PAGES)
    for chapter in sorted(set(chapters.values())):
        seen = {"Fig.": [], "Exercise": []}
        for page in [p for p in PAGES if chapters.get(p) == chapter]:  # reading order
            html = (HTML / f"{page}.html").read_text()
            for kind, number in re.findall(r'<span class="caption-number">(Fig\.|Exercise) ([\d.]+) ', html):
                seen[kind].append(number)
        for kind, numbers in seen.items():
            assert numbers == [f"{chapter}.{k}" for k in range(1, len(numbers) + 1)], (chapter, kind, numbers)
        assert seen["Fig."], f"chapter {chapter} shows no numbered figure"


def test_theory_page_has_exercises_with_hidden_solutions():
    html = (HTML / "book" / "toy_theory.html").read_text()
    assert html.count('class="exercise admonition"') >= 2
    assert "dropdown" in html and "solution" in html


# ---------------------------------------------------------------------------------------------
# Headless Chromium over the DevTools protocol (--remote-debugging-pipe: JSON messages ending in
# NUL, read from fd 3 and written to fd 4 of the browser).

def chromium_executable() -> str:
    exe = (os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
           or shutil.which("google-chrome"))
    if exe:
        return exe
    msg = ("Chromium is missing, so the browser checks of the built book did NOT run "
           "(`make browser` installs it where it can: root and apt-get; CHROMIUM=/path picks another)")
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg + "; CI=true requires them")
    pytest.skip(msg)


class Chromium:
    def __init__(self, exe: str):
        self.profile = tempfile.mkdtemp(prefix="book-chromium-")
        self._log = open(Path(self.profile) / "stderr.log", "wb")
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        # move the browser's ends above fd 10 so that making them fds 3 and 4 cannot clobber them
        a, b = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser, from_browser))
        os.close(to_browser), os.close(from_browser)
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--hide-scrollbars",
                 "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update", "--mute-audio",
                 # no network: every host name fails to resolve
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-quic",
                 f"--window-size={WIDTH},{SLICE}", f"--user-data-dir={self.profile}", "about:blank"]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"import os, sys; os.dup2({a}, 3); os.dup2({b}, 4); os.close({a}); "
             f"os.close({b}); os.execv(sys.argv[1], sys.argv[1:])", exe, *flags],
            pass_fds=(a, b), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log)
        os.close(a), os.close(b)
        self.messages: queue.Queue = queue.Queue()
        self.events: list[dict] = []
        self.next_id = 0
        threading.Thread(target=self._reader, daemon=True).start()
        pages = [t["targetId"] for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        page = pages[0] if pages else self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=page, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=WIDTH, height=SLICE,
                  deviceScaleFactor=1, mobile=False)

    def _reader(self):
        buffer = b""
        while chunk := os.read(self._read, 1 << 16):
            buffer += chunk
            *complete, buffer = buffer.split(b"\0")
            for message in complete:
                self.messages.put(json.loads(message))
        os.close(self._read)
        self.messages.put(None)  # the browser went away

    def _next(self, deadline: float) -> dict:
        try:
            message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            raise TimeoutError("Chromium did not answer in time") from None
        if message is None:
            log = (Path(self.profile) / "stderr.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"Chromium exited ({self.proc.poll()}):\n{log}")
        return message

    def call(self, method: str, session: bool = False, timeout: float = 60, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._next(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, event: str, timeout: float = 60) -> dict:
        """The first `event` since self.events was last emptied."""
        for message in self.events:
            if message["method"] == event:
                return message
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            if "method" in message:
                self.events.append(message)
                if message["method"] == event:
                    return message

    def evaluate(self, expression: str, timeout: float = 60):
        result = self.call("Runtime.evaluate", session=True, timeout=timeout, expression=expression,
                           awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._write)
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


# Waits for MathJax's first typesetting and for the widget manager to draw every saved view.
SETTLE = """(async () => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  const views = () => [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')];
  for (let t0 = Date.now(); Date.now() - t0 < 30000; await sleep(200))
    if (views().every(s => s.previousElementSibling && s.previousElementSibling.classList.contains('widget-subarea')
                           && s.previousElementSibling.childElementCount > 0)) break;
  await document.fonts.ready;
  await sleep(500);
})()"""

# What the reader sees: maths, widgets, figures against the text column, the code column.
INSPECT = r"""(() => {
  const article = document.querySelector('article.bd-article') || document.querySelector('main');
  const cs = getComputedStyle(article), box = article.getBoundingClientRect();
  const column = {left: box.left + parseFloat(cs.paddingLeft), right: box.right - parseFloat(cs.paddingRight)};
  column.width = column.right - column.left;
  // raw TeX left in the visible text (code and scripts aside)
  const skip = 'script, style, pre, code, textarea, mjx-container, .highlight, svg';
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const rawTex = [];
  const tex = /\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{|\$[^$\n]*\\[A-Za-z]+[^$\n]*\$/;
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement.closest(skip)) continue;
    if (tex.test(node.textContent)) rawTex.push(node.textContent.trim().slice(0, 120));
  }
  const maths = [...article.querySelectorAll('.math')];
  const widgets = [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')].map(s => {
    const area = s.previousElementSibling;
    if (!area || !area.classList.contains('widget-subarea')) return {drawn: false};
    const r = area.getBoundingClientRect();
    return {drawn: true, elements: area.querySelectorAll('*').length, width: r.width, height: r.height,
            text: area.innerText.trim().slice(0, 80)};
  });
  const figures = [...article.querySelectorAll('img')].map(img => {
    const r = img.getBoundingClientRect();
    // the width it is meant to be shown at: its width attribute (e.g. a high-resolution PNG), else its pixels
    const attr = parseFloat(img.getAttribute('width'));
    const section = img.closest('section'), heading = section && section.querySelector(':scope > h1, :scope > h2, :scope > h3');
    return {src: (img.getAttribute('src') || '').slice(0, 80), id: img.id, complete: img.complete,
            cell: [...article.querySelectorAll('div.cell')].indexOf(img.closest('div.cell')),
            section: heading ? heading.textContent.replace(/#$/, '').trim() : '',
            natural: img.naturalWidth, intended: attr > 0 && !/%/.test(img.getAttribute('width')) ? attr : img.naturalWidth,
            shown: r.width, left: r.left, right: r.right,
            widget: !!img.closest('.widget-subarea, .jupyter-widgets'), explorer: !!img.closest('.modlib-explorer'),
            caption: img.closest('figure') && img.closest('figure').querySelector('figcaption')
                     ? img.closest('figure').querySelector('figcaption').innerText.trim() : null};
  });
  let code = null;
  const pre = document.querySelector('div.cell_input div.highlight pre');
  if (pre) {
    const p = getComputedStyle(pre);
    const probe = document.createElement('span');
    probe.textContent = '0'.repeat(200);
    pre.appendChild(probe);
    const charWidth = probe.getBoundingClientRect().width / 200;
    probe.remove();
    const inner = pre.clientWidth - parseFloat(p.paddingLeft) - parseFloat(p.paddingRight);
    code = {font: p.fontFamily, size: p.fontSize, inner, charWidth, chars: Math.floor(inner / charWidth + 1e-6)};
  }
  // the main path: the words a reader sees without opening anything, code and the appendix aside
  const appendix = [...article.querySelectorAll('section')].filter(sec => {
    const h = sec.querySelector(':scope > h1, :scope > h2');
    return h && /^\s*appendix/i.test(h.textContent);
  });
  const hidden = 'script, style, pre, code, .cell_input, .highlight, mjx-container, svg, .modlib-explorer, ' +
                 '.widget-subarea, .jupyter-widgets';
  const words = article.ownerDocument.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  let mainWords = 0;
  while (words.nextNode()) {
    const el = words.currentNode.parentElement;
    if (!el || el.closest(hidden) || appendix.some(sec => sec.contains(el))) continue;
    if (!el.checkVisibility({checkVisibilityCSS: true})) continue;
    mainWords += (words.currentNode.textContent.match(/[A-Za-z0-9\u00C0-\u024F]+(?:['’-][A-Za-z]+)*/g) || []).length;
  }
  const tables = [...article.querySelectorAll('table')].filter(t => t.checkVisibility()).map(t => {
    const r = t.getBoundingClientRect(), sec = t.closest('section');
    const h = sec && sec.querySelector(':scope > h1, :scope > h2, :scope > h3');
    return {width: t.scrollWidth, right: r.left + t.scrollWidth, section: h ? h.textContent.replace(/#$/, '').trim() : ''};
  });
  const found = document.querySelector('.admonition.found');
  const foundTop = found ? found.getBoundingClientRect().top + window.scrollY : null;
  const weight = e => parseInt(getComputedStyle(e).fontWeight);
  const boldGlue = [...document.querySelectorAll('span.pasted-text')]
    .filter(s => weight(s) > weight(s.parentElement)).map(s => s.textContent.slice(0, 60));
  return {column, rawTex, maths: maths.length, mainWords, tables, foundTop, boldGlue, typeset: maths.filter(m => m.querySelector('mjx-container')).length,
          containers: document.querySelectorAll('mjx-container').length,
          mathErrors: [...document.querySelectorAll('mjx-merror')].map(e => e.textContent.slice(0, 80)),
          widgets, figures, code, height: document.documentElement.scrollHeight,
          pageWidth: document.documentElement.scrollWidth};
})()"""


def console_errors(events: list[dict]) -> list[str]:
    errors = []
    for event in events:
        params = event.get("params", {})
        if event["method"] == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            args = [a.get("value", a.get("description", "")) for a in params.get("args", [])]
            errors.append("console.error: " + " ".join(map(str, args))[:300])
        elif event["method"] == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            errors.append("uncaught: " + details.get("exception", {}).get("description", details.get("text", ""))[:300])
        elif event["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            errors.append(f"{entry['source']}: {entry['text']} {entry.get('url', '')}"[:300])
    return errors


def remote_requests(events: list[dict]) -> list[str]:
    urls = (e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent")
    return sorted({u for u in urls if not u.startswith(("file:", "data:", "blob:", "about:"))})


def save_screenshots(browser: Chromium, page: str) -> list[Path]:
    """The whole page in 1280x1600 slices, laid out in a window as tall as the page (like
    ../shared/tools/page-shots.sh): a tall window keeps the sidebars where a reader sees them."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    name = page.replace("/", "_")
    for old in SHOTS.glob(f"{name}_[0-9][0-9].png"):
        old.unlink()
    height = browser.evaluate("document.documentElement.scrollHeight")
    browser.call("Emulation.setDeviceMetricsOverride", session=True, width=WIDTH, height=min(height, WINDOW_MOST),
                 deviceScaleFactor=1, mobile=False)
    height = browser.evaluate("new Promise(r => setTimeout(() => r(document.documentElement.scrollHeight), 1000))")
    shots = []
    for i, top in enumerate(range(0, height, SLICE)):
        if i and height - top < 50:  # a sliver of page margin
            break
        clip = {"x": 0, "y": top, "width": WIDTH, "height": min(SLICE, height - top), "scale": 1}
        # past the window's 30,000 px the page is scrolled just far enough that the slice lies in the
        # window (capturing beyond the viewport instead re-laid the page out: slices shifted sideways,
        # skipped a screen or came out blank); clip stays in page coordinates
        if (scroll := max(0, top + clip["height"] - WINDOW_MOST)):
            browser.evaluate(f"new Promise(r => {{ window.scrollTo(0, {scroll}); "
                             "requestAnimationFrame(() => requestAnimationFrame(r)); })")
        # optimizeForSpeed: a faster PNG encoding (about a fifth less time a slice, files a quarter larger)
        data = browser.call("Page.captureScreenshot", session=True, format="png", clip=clip,
                            optimizeForSpeed=True)["data"]
        shots.append(SHOTS / f"{name}_{i:02d}.png")
        shots[-1].write_bytes(base64.b64decode(data))
    browser.evaluate("window.scrollTo(0, 0)")  # as the other checks expect the page
    browser.call("Emulation.setDeviceMetricsOverride", session=True, width=WIDTH, height=SLICE,
                 deviceScaleFactor=1, mobile=False)
    return shots


@pytest.fixture(scope="module")
def browser():
    exe = chromium_executable()
    assert (HTML / "index.html").exists(), "build the book first: make book"
    chromium = Chromium(exe)
    yield chromium
    chromium.close()


def open_page(browser: Chromium, page: str) -> None:
    """Load a built page from disk and let it settle (maths typeset, widgets drawn); browser.events
    then holds what the page did."""
    browser.events = []
    browser.call("Page.navigate", session=True, url=(HTML / f"{page}.html").as_uri())
    browser.wait_for("Page.loadEventFired", timeout=90)
    browser.evaluate(SETTLE, timeout=90)


@pytest.fixture(scope="module")
def read(browser):
    """read(page) opens a built page from disk and returns what the reader sees (once per page)."""
    seen = {}

    def read_page(page: str) -> dict:
        if page not in seen:
            open_page(browser, page)
            result = browser.evaluate(INSPECT)
            result["shots"] = save_screenshots(browser, page)
            result["errors"] = console_errors(browser.events)
            result["remote"] = remote_requests(browser.events)
            seen[page] = result
        return seen[page]

    return read_page


@pytest.mark.parametrize("page", by_page(PAGES))
def test_page_makes_no_request_off_the_machine(read, page):
    assert not read(page)["remote"], f"{page} needs the network: {read(page)['remote']}"


@pytest.mark.parametrize("page", by_page(PAGES))
def test_page_shows_no_console_error(read, page):
    assert not read(page)["errors"], "\n".join(read(page)["errors"])


@pytest.mark.parametrize("page", by_page(PAGES))
def test_page_maths_is_typeset(read, page):
    seen = read(page)
    assert not seen["rawTex"], f"raw TeX on the page: {seen['rawTex'][:5]}"
    assert seen["typeset"] == seen["maths"], f"{seen['maths'] - seen['typeset']} of {seen['maths']} formulas not typeset"
    assert not seen["mathErrors"], f"MathJax errors: {seen['mathErrors'][:5]}"
    if (HTML / f"{page}.html").read_text().count('class="math') > 0:
        assert seen["containers"] > 0


@pytest.mark.parametrize("page", by_page(PAGES))
def test_page_widgets_show_their_saved_state(read, page):
    for i, view in enumerate(read(page)["widgets"]):
        assert view["drawn"], f"widget {i} was not drawn"
        assert view["elements"] > 0 and view["width"] > 0 and view["height"] > 0, f"widget {i} is empty: {view}"


def notebook_cell(page: str, code_cell: int) -> str:
    """Where the page's n-th code cell comes from: "cell i" of the notebook (counting all cells)."""
    notebook = ROOT / f"{page}.ipynb"
    if code_cell < 0 or not notebook.exists():
        return "outside code cells"
    cells = json.loads(notebook.read_text())["cells"]
    shown = [i for i, c in enumerate(cells) if c["cell_type"] == "code"
             and "remove-cell" not in c.get("metadata", {}).get("tags", [])]
    return f"cell {shown[code_cell]}" if code_cell < len(shown) else f"code cell {code_cell}"


@pytest.mark.parametrize("page", by_page(PAGES))
def test_page_figures_fit_the_text_column(read, page):
    seen = read(page)
    column = seen["column"]
    assert seen["pageWidth"] <= WIDTH, f"the page scrolls sideways ({seen['pageWidth']} px)"
    too_wide = []
    for fig in seen["figures"]:
        assert fig["complete"] and fig["natural"] > 0, f"figure did not load: {fig['src']}"
        # wider than the column: it overflows it, or the browser shrinks it (and its lettering) to fit
        if fig["right"] > column["right"] + 1 or fig["intended"] > column["width"] + 1:
            what = "animation" if fig["id"].startswith("_anim_img") else "figure"
            too_wide.append(f"{what} in {notebook_cell(page, fig['cell'])} ({fig['section']!r}): "
                            f"{fig['intended']:.0f} px shown at {fig['shown']:.0f}")
    assert not too_wide, (f"{len(too_wide)} figures wider than the {column['width']:.0f} px text column "
                          f"(at a {WIDTH} px window):\n" + "\n".join(too_wide))


@pytest.mark.parametrize("page", by_page(NOTEBOOK_PAGES))
def test_page_figures_have_numbered_captions_naming_their_provenance(read, page):
    """Every figure a chapter draws sits in a numbered figure whose caption says which profile,
    device and seeds made it (an illustration says it is one). Animation frames, the saved views
    of widgets and the static explorers' views are not figures: the text around them captions them."""
    seen = read(page)
    bad = []
    for fig in seen["figures"]:
        if fig["id"].startswith("_anim_img") or fig["widget"] or fig["explorer"]:
            continue
        caption = fig["caption"] or ""
        if not re.match(r"Fig\. \d", caption) or not re.search(r"profile \w+ · |illustration", caption):
            bad.append(f"figure in {notebook_cell(page, fig['cell'])} ({fig['section']!r}): "
                       f"caption {caption[:80]!r}")
    assert not bad, f"{len(bad)} figures without a numbered caption naming profile, device and seeds:\n" + \
        "\n".join(bad)


@pytest.mark.parametrize("page", by_page(PAGES))
def test_page_leaves_screenshots(read, page):
    shots = read(page)["shots"]
    assert shots and all(s.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for s in shots)
    assert sum(s.stat().st_size for s in shots) > 20_000


@pytest.mark.parametrize("page", by_page(["notebooks/redundant_input_toy"]))  # beside its other checks
def test_toy_page_animation_runs(read, page):
    seen = read(page)
    frames = [f for f in seen["figures"] if f["id"].startswith("_anim_img")]
    assert frames and all(f["src"].startswith("data:image/png;base64,") for f in frames), "animation did not render"
    assert len(seen["figures"]) >= 10


@pytest.mark.parametrize("page", by_page(NOTEBOOK_PAGES))
def test_code_column_fits_the_line_limit(read, page):
    """tests/test_repository.py keeps code lines within CODE_LINE_LIMIT: the code column must show that many."""
    from test_repository import CODE_LINE_LIMIT

    code = read(page)["code"]
    assert code, "no code cell found"
    assert code["chars"] >= CODE_LINE_LIMIT, f"the code column shows {code['chars']} characters: {code}"


# A static explorer (modlib/widgets.py): its menus, the view shown, and whether that view is drawn.
EXPLORER = r"""(() => {
  const box = document.querySelector('.modlib-explorer');
  if (!box) return null;
  const parts = [...box.querySelectorAll('.modlib-part')];
  const shown = parts.map((p, i) => [p, i]).filter(([p]) => !p.hidden);
  return {selects: [...box.querySelectorAll('select[data-control]')].map(s => ({
            name: s.dataset.control, options: s.options.length, index: s.selectedIndex})),
          key: box.dataset.shown, shown: shown.map(([, i]) => i),
          drawn: shown.every(([p]) => [...p.querySelectorAll('img')].every(
            img => img.complete && img.naturalWidth > 0 && img.getBoundingClientRect().width > 0)),
          visible: shown.every(([p]) => p.getBoundingClientRect().height > 0)};
})()"""
SCROLL_TO_EXPLORER = r"""new Promise(done => {
  const box = document.querySelector('.modlib-explorer');
  box.scrollIntoView({block: 'start'});
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const r = box.getBoundingClientRect();
    done({x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: Math.min(r.height, 1500)});
  }));
})"""


def press(browser: Chromium, key: str, code: int) -> None:
    """One key pressed and released, as a reader's keyboard would send it to the focused element."""
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=key,
                     windowsVirtualKeyCode=code, nativeVirtualKeyCode=code)


@pytest.mark.parametrize("page", by_page(NOTEBOOK_PAGES))
def test_page_explorer_changes_its_view_when_a_reader_changes_a_choice(browser, page):
    """On the built page, with no kernel: each menu of the chapter's static explorer, moved one
    choice with the keyboard (focus, arrow key), shows another view, drawn in full, and moving it
    back shows the first view again; no console error on the way. A screenshot of the explorer after
    its first change is left in _build/screenshots/<page>_explorer.png."""
    open_page(browser, page)
    first = browser.evaluate(EXPLORER)
    assert first, f"{page} has no static explorer"
    assert first["drawn"] and first["visible"] and first["shown"], f"the first view is not drawn: {first}"
    moved = 0
    for i, select in enumerate(first["selects"]):
        if select["options"] < 2:
            continue
        forward, back = (("ArrowDown", 40), ("ArrowUp", 38)) if select["index"] < select["options"] - 1 \
            else (("ArrowUp", 38), ("ArrowDown", 40))
        browser.evaluate(f"document.querySelectorAll('.modlib-explorer select[data-control]')[{i}].focus()")
        press(browser, *forward)
        now = browser.evaluate(EXPLORER)
        assert now["selects"][i]["index"] != select["index"], f"{select['name']}: the key did not move the menu"
        assert now["shown"] != first["shown"], f"changing {select['name']} left the view as it was ({now['key']})"
        assert now["drawn"] and now["visible"], f"changing {select['name']}: the view is not drawn: {now}"
        if not moved:  # the explorer scrolled into the window, in page coordinates
            box = browser.evaluate(SCROLL_TO_EXPLORER)
            data = browser.call("Page.captureScreenshot", session=True, format="png", captureBeyondViewport=False,
                                clip={**box, "scale": 1})["data"]
            SHOTS.mkdir(parents=True, exist_ok=True)
            (SHOTS / f"{page.replace('/', '_')}_explorer.png").write_bytes(base64.b64decode(data))
        press(browser, *back)
        again = browser.evaluate(EXPLORER)
        assert again["shown"] == first["shown"] and again["key"] == first["key"], \
            f"{select['name']} moved back does not show the first view again"
        moved += 1
    assert moved, f"{page}: no menu of its explorer has two choices"
    errors = console_errors(browser.events)
    assert not errors, "\n".join(errors)


def test_ledger_files_are_what_the_pages_decided():
    """The book build runs every chapter at full from the store, and each rewrites its decisions in
    book/ledger/<chapter>.json (modlib.claims.save): the committed files must be what it wrote, or
    the claims ledger shows other verdicts than the pages."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    changed = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "book/ledger"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert not changed, f"the pages decided otherwise than the committed ledger (commit book/ledger):\n{changed}"


LEDGER_FILTER = """(function(){var root=document.querySelector('.modlib-ledger');
if(!root){return null;}var rows=root.querySelectorAll('tbody tr');var sel=root.querySelector('select[data-ledger=verdict]');
function shown(){return Array.prototype.filter.call(rows,function(r){return r.style.display!=='none';}).length;}
var all=shown();var out={rows:rows.length,all:all,options:sel.options.length,counts:[]};
for(var i=1;i<sel.options.length;i++){sel.selectedIndex=i;sel.dispatchEvent(new Event('change'));
out.counts.push([sel.value,shown(),Array.prototype.every.call(rows,function(r){return r.style.display==='none'||r.dataset.verdict===sel.value;})]);}
sel.selectedIndex=0;sel.dispatchEvent(new Event('change'));out.back=shown();return out;})()"""


@pytest.mark.parametrize("page", by_page(["book/ledger"]))
def test_ledger_page_filters_its_rows_without_a_kernel(browser, page):
    """The claims ledger's verdict menu, set to each verdict in turn, shows only the rows of that
    verdict (together all of them), and set back to "all" shows every row again."""
    open_page(browser, page)
    seen = browser.evaluate(LEDGER_FILTER)
    assert seen, "the ledger page has no table (.modlib-ledger)"
    assert seen["rows"] > 0 and seen["all"] == seen["rows"], seen
    assert seen["options"] >= 2, "the verdict menu has no choice"
    assert all(only for _, _, only in seen["counts"]), f"a choice shows rows of another verdict: {seen['counts']}"
    assert sum(n for _, n, _ in seen["counts"]) == seen["rows"] and seen["back"] == seen["rows"], seen
    errors = console_errors(browser.events)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("page", by_page(PAGES))
def test_page_tables_fit_the_text_column(read, page):
    seen = read(page)
    wide = [f"{t['width']:.0f} px ({t['section']!r})" for t in seen["tables"] if t["width"] > seen["column"]["width"] + 1]
    assert not wide, f"tables wider than the {seen['column']['width']:.0f} px text column: " + "; ".join(wide)


@pytest.mark.parametrize("page", by_page(PAGES))
def test_glued_values_are_set_like_the_text_around_them(read, page):
    """myst-nb sets glued values in bold; book/_static/book.css sets them as their sentence or caption."""
    bold = read(page)["boldGlue"]
    assert not bold, f"{page}: {len(bold)} glued values bolder than their text, e.g. {bold[:3]}"


@pytest.mark.parametrize("page", by_page(NOTEBOOK_PAGES))
def test_chapter_says_what_it_found_on_its_first_screen(read, page):
    """A "What we found" box (an admonition of class ``found``) starts within the first screen."""
    top = read(page)["foundTop"]
    assert top is not None, f"{page} has no 'What we found' box (class found)"
    assert top < SLICE, f"{page}'s 'What we found' box starts at {top:.0f} px, below the first screen ({SLICE} px)"


@pytest.mark.parametrize("page", by_page(NOTEBOOK_PAGES))
def test_main_path_words_are_measured(read, page):
    """The main path's words as the browser shows them (code, closed blocks and the appendix aside),
    written to _build/main_path_words.json for the closing notes and the instructors' guide; the
    issue's aim is at most 3,500 a chapter (not yet met: this measures, it does not gate)."""
    words = read(page)["mainWords"]
    assert words > 100, f"{page}: {words} words on its main path: the measure found no prose"
    path = ROOT / "_build" / "main_path_words.json"
    with open(path.with_suffix(".lock"), "w") as lock:  # the browser checks run on several workers
        fcntl.flock(lock, fcntl.LOCK_EX)
        seen = json.loads(path.read_text()) if path.exists() else {}
        seen[page] = words
        path.write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n")
