"""Checks of the built book (`make book` first; `make test` runs them after the build).

They open the built toy page in headless Chromium, as a reader's browser would, and save a
screenshot to _build/screenshots/ for people to look at.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
TOY = HTML / "notebooks" / "redundant_input_toy.html"
SHOTS = ROOT / "_build" / "screenshots"
URL = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


def chromium(*args: str, timeout: int = 120) -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium is not installed (make test installs it: make browser)"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--allow-file-access-from-files", "--virtual-time-budget=8000"]
    done = subprocess.run([exe, *flags, *args], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def toy_html() -> str:
    assert TOY.exists(), "build the book first: make book"
    return TOY.read_text()


def test_book_has_its_pages():
    assert (HTML / "index.html").exists()
    for page in ("book/welcome", "book/how_to_run", "book/toy_theory", "notebooks/redundant_input_toy",
                 "notebooks/weight_masks"):
        assert (HTML / f"{page}.html").exists(), page


def test_pages_show_no_progress_bars():
    for page in ("redundant_input_toy", "weight_masks"):  # the build sets TQDM_DISABLE
        html = (HTML / "notebooks" / f"{page}.html").read_text()
        assert not re.search(r"\d(it/s|s/it)\]", html), f"{page} shows a progress bar"


def test_toy_page_has_figures_launch_buttons_and_provenance(toy_html):
    figures = re.findall(r'<img[^>]+src="[^"]*\.png"', toy_html)
    assert len(figures) >= 10, f"only {len(figures)} figures"
    colab = f"https://colab.research.google.com/github/{URL.split('github.com/')[1]}/blob/main/notebooks/redundant_input_toy.ipynb"
    assert colab in toy_html
    assert f'href="{URL}"' in toy_html  # repository button
    assert re.search(r"profile: (full|default): \d+ seeds", toy_html), "the page does not say its profile"


def test_toy_page_has_a_widget_and_a_kernel_free_animation(toy_html):
    assert 'type="application/vnd.jupyter.widget-state+json"' in toy_html
    assert 'type="application/vnd.jupyter.widget-view+json"' in toy_html
    assert re.search(r'<div class="animation">', toy_html)


def test_theory_page_has_exercises_with_hidden_solutions():
    html = (HTML / "book" / "toy_theory.html").read_text()
    assert html.count('class="exercise admonition"') >= 2
    assert "dropdown" in html and "solution" in html


def test_toy_page_renders_in_chromium_with_its_animation():
    dom = chromium("--dump-dom", TOY.as_uri())
    # the animation's script ran: its <img> now shows a frame
    assert re.search(r'<img id="_anim_img\w+"[^>]*src="data:image/png;base64,', dom), "animation did not render"
    assert dom.count("<img") >= 10
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / "redundant_input_toy.png"
    shot.unlink(missing_ok=True)
    chromium(f"--screenshot={shot}", "--window-size=1280,2400", TOY.as_uri())
    assert shot.exists() and shot.stat().st_size > 50_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
