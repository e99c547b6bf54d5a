"""Every chapter's explorer in both versions (modlib/widgets.py): the live widget redraws, and the
static version the book's pages show has every view it promises, each drawn, with views that differ
when a choice changes. The chapters' explorers draw the committed full-profile results, as the book
does (nothing is computed: a chapter whose full results are not stored is skipped). The live
widgets are checked with the unit tests; the static versions in the built pages, with the browser
checks (marked ``book``): the build has drawn every view already (:func:`explorer_of`).
"""

import itertools
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import torch

from modlib import results, widgets

CPU = torch.device("cpu")


def shown(monkeypatch, explore):
    """What ``explore()`` displays: ``(its live widget, the display bundle)``."""
    bundles = []
    monkeypatch.setattr(widgets, "display", lambda obj, raw=False: bundles.append(obj) if raw else None)
    box = explore()
    assert len(bundles) == 1, "an explorer displays one bundle"
    return box, bundles[0]


def parse(html: str) -> dict:
    """A static explorer's HTML: its views' keys, each menu's labels, the view first shown, and each
    part's HTML with the views it belongs to."""
    box = re.search(r'<div class="modlib-explorer" data-views="([^"]*)" data-shown="([^"]*)">', html)
    menus = re.findall(r'<select data-control="([^"]*)">(.*?)</select>', html, flags=re.S)
    parts = re.findall(r'<div class="modlib-part" data-views="([^"]*)"( hidden)?>(.*?)</div>'
                       r'(?=<div class="modlib-part"|<p class="modlib-explorer-note"|</div><script>)', html, flags=re.S)
    return {"views": box.group(1).split(), "shown": box.group(2),
            "menus": {name: re.findall(r"<option[^>]*>([^<]*)</option>", body) for name, body in menus},
            "parts": [(views.split(), bool(hidden), body) for views, hidden, body in parts]}


def check_static(html: str, expected_views: int) -> dict:
    """The checks every chapter's static explorer passes; returns the parsed explorer."""
    x = parse(html)
    assert len(x["views"]) == len(set(x["views"])) == expected_views
    sizes = [len(options) for options in x["menus"].values()]
    assert all(len(key.split("-")) == len(sizes) for key in x["views"])
    assert {key for views, _, _ in x["parts"] for key in views} == set(x["views"])  # no part of no view
    of = {key: [body for views, _, body in x["parts"] if key in views] for key in x["views"]}
    assert len({len(parts) for parts in of.values()}) == 1, "every view has as many parts"
    assert all(any("<img src=\"data:image/png;base64," in p for p in parts) for parts in of.values())
    # the first view is shown, every other part hidden
    assert x["shown"] in x["views"]
    assert all(hidden == (x["shown"] not in views) for views, hidden, _ in x["parts"])
    # every menu with two choices changes the view somewhere, and along the first view's first such menu
    for i, n in enumerate(sizes):
        if n < 2:
            continue
        pairs = [(a, b) for a, b in itertools.combinations(x["views"], 2)
                 if [u for j, u in enumerate(a.split("-")) if j != i] == [u for j, u in enumerate(b.split("-")) if j != i]]
        assert pairs and any(of[a] != of[b] for a, b in pairs), f"menu {list(x['menus'])[i]} never changes the view"
    for i, n in enumerate(sizes):
        if n > 1:
            first = x["shown"].split("-")
            neighbour = "-".join(first[:i] + [str((int(first[i]) + 1) % n)] + first[i + 1:])
            if neighbour in of:
                assert of[neighbour] != of[x["shown"]], f"menu {list(x['menus'])[i]}: the next choice shows the same view"
            break
    images = sum(len(m) * 3 // 4 for m in re.findall(r'src="data:image/png;base64,([^"]+)"', html))
    assert images <= 1_500_000, f"{images / 1e6:.2f} MB of images"
    return x


def check_live(box, controls_row: int = 0):
    """The live widget: changing its first control's value redraws (the HTML or the figure)."""
    out = box.children[-2]
    text = box.children[-1]
    control = box.children[controls_row].children[0]
    before = (text.value, len(out.outputs))
    options = getattr(control, "options", None)
    if options:
        values = [o[1] if isinstance(o, tuple) else o for o in options]
        control.value = values[(values.index(control.value) + 1) % len(values)]
    else:
        control.value = control.max if control.value != control.max else control.min
    plt.close("all")
    return before, text.value


@pytest.fixture
def full_store(monkeypatch):
    """The committed full results, read and never computed (as make book reads them)."""
    monkeypatch.setenv(results.FROM_STORE_ENV, "1")
    monkeypatch.delenv(results.ROOT_ENV, raising=False)
    monkeypatch.setenv("MODLIB_FETCH_RESULTS", "0")
    monkeypatch.delenv("MODLIB_STATIC_EXPLORERS", raising=False)


def stored(run):
    try:
        return run()
    except (results.StaleResultError, results.UnreadableResultError) as err:
        pytest.skip(f"the full results are not stored as the code computes them: {err}")


ROOT = Path(__file__).resolve().parents[1]
WHERE = ["live", pytest.param("page", marks=pytest.mark.book)]


def explorer_of(where: str, monkeypatch, page: str, explore) -> tuple[str | None, object]:
    """``(static HTML, live widget)`` of a chapter's explorer, one of them ``None``. ``"live"``
    builds the live widget alone (``MODLIB_STATIC_EXPLORERS=0``: nothing pre-rendered; the unit
    tests); ``"page"`` reads the static version from the built ``page`` (``make book`` first; the
    browser-check phase of ``make test``), which the build drew from the same stored results with
    the same code, so that its every view is drawn once per run of ``make test``, not twice."""
    if where == "live":
        monkeypatch.setenv("MODLIB_STATIC_EXPLORERS", "0")
        box, bundle = shown(monkeypatch, explore)
        assert "text/html" not in bundle
        return None, box
    built = ROOT / "_build" / "html" / f"{page}.html"
    assert built.exists(), "build the book first: make book"
    found = re.search(r'<div class="modlib-explorer".*?</script>', built.read_text(), flags=re.S)
    assert found, f"{page} shows no static explorer"
    return found.group(0), None


def test_the_mechanism_writes_each_part_once_and_follows_the_live_controls(monkeypatch):
    import ipywidgets as w

    controls = {"a": w.Dropdown(options=[("one", 1), ("two", 2), ("three", 3)], value=2, description="a"),
                "b": w.IntSlider(value=0, min=0, max=1, description="b")}

    def render(c):
        if c["a"] == 3 and c["b"] == 1:
            return None  # no such combination
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.plot([0, c["a"]])  # the figure depends on a only
        return [fig, f"<pre>a={c['a']} b={c['b']}</pre>"]

    html = widgets.static_html(controls, render, note="a note", alt="a line")
    x = parse(html)
    assert x["views"] == ["0-0", "0-1", "1-0", "1-1", "2-0"]
    assert x["menus"] == {"a": ["one", "two", "three"], "b": ["0", "1"]}
    assert x["shown"] == "1-0"  # the live controls' values
    figures = [p for p in x["parts"] if "<img" in p[2]]
    assert [views for views, _, _ in figures] == [["0-0", "0-1"], ["1-0", "1-1"], ["2-0"]]  # one per value of a
    assert 'alt="a line: a one"' in figures[0][2] and 'alt="a line: a three, b 0"' in figures[2][2]
    assert "a note" in html and widgets.SCRIPT in html
    with pytest.raises(ValueError, match="static= names no control"):
        widgets.static_html(controls, render, static={"c": [("x", 1)]})
    box, bundle = shown(monkeypatch, lambda: widgets.wire(controls, render, static={"b": [("0", 0)]}))
    assert {"application/vnd.jupyter.widget-view+json", "text/html"} <= set(bundle)
    # a control with one static choice gets no menu: its value is fixed in every view
    assert parse(bundle["text/html"])["views"] == ["0", "1", "2"]
    assert list(parse(bundle["text/html"])["menus"]) == ["a"]
    assert box.children[-1].value == "<pre>a=2 b=0</pre>"
    controls["b"].value = 1
    assert box.children[-1].value == "<pre>a=2 b=1</pre>"
    monkeypatch.setenv("MODLIB_STATIC_EXPLORERS", "0")
    _, bundle = shown(monkeypatch, lambda: widgets.wire(controls, render))
    assert "text/html" not in bundle
    plt.close("all")


@pytest.mark.parametrize("where", WHERE)
def test_chapter_1_explorer(where, full_store, monkeypatch):
    from modlib import redundant_input_toy as toy
    from modlib.redundant_input_toy import explorer

    sweep = stored(lambda: toy.run("full", CPU))
    html, box = explorer_of(where, monkeypatch, "notebooks/redundant_input_toy", lambda: explorer.toy_explorer(sweep))
    if html:
        s = sweep.settings
        sets = [c for c in s.conditions if c[0] != "binary" or c[1] in (max(s.reveals), min(s.reveals))]
        x = check_static(html, len(s.formulations) * len(s.activations) * len(s.losses) * len(sets)
                         * explorer.STATIC_SEEDS)
        # one epoch on the static page: no menu of one choice, the note and the titles name it
        assert list(x["menus"]) == ["formulation", "activation", "loss", "condition", "seed"]
        assert "the last stored epoch (4096" in html and "Pre-rendered for this page" in html
    else:
        check_live(box)  # its view is one figure, drawn into the Output widget


def test_chapter_1_views_drawn_in_kept_figures_are_new_figures(full_store):
    """The static page draws chapter 1's views one after another in a kept figure per formulation
    and design (explorer.render's ``drawn``, widgets.keep_box): each view's PNG is the one a new
    figure gives, over both formulations, every shown training set, both activations and losses
    and two seeds."""
    from modlib import redundant_input_toy as toy
    from modlib.redundant_input_toy import explorer

    sweep = stored(lambda: toy.run("full", CPU))
    s = sweep.settings
    epochs = [int(e) for e in sweep.arrays(s.activations[0], s.losses[0], s.formulations[0],
                                           s.reveals[0])["snapshot_epochs"]]
    sets = [c for c in s.conditions if c[0] != "binary" or c[1] in (max(s.reveals), min(s.reveals))]
    drawn = {}
    for f, condition, (activation, loss, seed) in itertools.product(
            s.formulations, sets, [(s.activations[0], s.losses[0], 0),
                                   (s.activations[-1], s.losses[-1], explorer.STATIC_SEEDS - 1)]):
        choices = {"formulation": f, "activation": activation, "loss": loss, "condition": condition,
                   "epoch": epochs[-1], "seed": seed}
        [kept] = explorer.render(sweep, epochs, choices, drawn)
        [new] = explorer.render(sweep, epochs, choices)
        assert widgets._png(kept) == widgets._png(new), choices
    assert len(drawn) == len(s.formulations) * len({d for d, _ in sets})


@pytest.mark.parametrize("where", WHERE)
def test_chapter_2_explorer(where, full_store, monkeypatch):
    from modlib import compositional_sprites as cs
    from modlib.compositional_sprites import explorer

    runs = stored(lambda: cs.run("full", CPU))
    html, box = explorer_of(where, monkeypatch, "notebooks/compositional_sprites",
                            lambda: explorer.sprite_explorer(runs, cs.settings("full").size))
    if html:
        x = check_static(html, len(explorer.SUPPORTS) * len(explorer.COMPOSITIONS))
        assert sum("<img" in body for _, _, body in x["parts"]) == len(explorer.SUPPORTS)  # a figure per support
    else:
        before, after = check_live(box)
        assert before[0] != after


@pytest.mark.parametrize("where", WHERE)
def test_chapter_3_explorer(where, full_store, monkeypatch):
    from modlib import resists_at_scale as rs
    from modlib.resists_at_scale import explorer

    runs = stored(lambda: rs.run("full", CPU))
    html, box = explorer_of(where, monkeypatch, "notebooks/resists_at_scale", lambda: explorer.resists_explorer(runs))
    if html:
        seeds = len(runs.arrays("mnist-A")["acc_train"])
        x = check_static(html, seeds * len(rs.SETTING_NAMES))
        assert sum("<img" in body for _, _, body in x["parts"]) == seeds  # the curves do not depend on the setting
    else:
        before, after = check_live(box)
        assert before[0] != after


@pytest.mark.parametrize("where", WHERE)
def test_chapter_4_explorer(where, full_store, monkeypatch):
    from modlib import weight_masks as wm
    from modlib.weight_masks import explorer

    S = wm.settings("full")
    res = stored(lambda: wm.run("full", CPU))
    points = wm.sweep(res, S, "alpha")
    if not points:
        pytest.skip("no alpha sweep stored at the full profile")
    layers = res["addmul"][0].metrics["layers"]
    html, box = explorer_of(where, monkeypatch, "notebooks/weight_masks", lambda: explorer.mask_explorer(points, layers))
    if html:
        check_static(html, len(points) * len(layers))
    else:
        check_live(box)


@pytest.mark.parametrize("where", WHERE)
def test_chapter_5_explorer(where, full_store, monkeypatch):
    from modlib import structural_compositionality as sc
    from modlib.structural_compositionality import explorer

    runs = stored(lambda: sc.run("full", CPU))
    searched = {n: list(r.metrics["subroutines"]) for n, r in runs.rows.items() if r.metrics.get("subroutines")}
    html, box = explorer_of(where, monkeypatch, "notebooks/structural_compositionality",
                            lambda: explorer.structure_explorer(runs))
    if html:
        x = check_static(html, sum(len(subs) for subs in searched.values()))
        assert x["menus"]["result"] == list(searched)
        assert sum("<img" in body for _, _, body in x["parts"]) == len(searched)  # a figure per base model
    else:
        before, after = check_live(box)
        assert before[0] != after


@pytest.mark.parametrize("where", WHERE)
def test_chapter_6_explorer(where, full_store, monkeypatch):
    from modlib import pretraining_consistency as pc
    from modlib.pretraining_consistency import explorer, findings

    runs = stored(lambda: pc.run("full", CPU))
    table = findings.pretraining_effects(runs)
    html, box = explorer_of(where, monkeypatch, "notebooks/pretraining_consistency",
                            lambda: explorer.pretraining_explorer(runs, table, findings.MARGIN))
    if html:
        groups = len(table[["rule", "subroutine"]].drop_duplicates())
        check_static(html, groups * (int(table["seed"].max()) + 1))
    else:
        before, after = check_live(box)
        assert before[0] != after


@pytest.mark.parametrize("where", WHERE)
def test_chapter_7_explorer_bridge(where, full_store, monkeypatch):
    from modlib import bridge as br
    from modlib.bridge import explorer

    b = br.settings("full")
    runs = stored(lambda: br.run("full", CPU))
    s = br.toy_settings("full", b)
    prov = results.provenance(list(runs.values()))
    html, box = explorer_of(where, monkeypatch, "notebooks/bridge", lambda: explorer.bridge_explorer(runs, s, prov))
    if html:
        x = check_static(html, len(b.formulations) * min(explorer.STATIC_SEEDS, b.seeds))
        assert list(x["menus"]) == ["formulation", "seed"] and "Pre-rendered for this page" in html
    else:
        before, after = check_live(box)
        assert before[0] != after


def test_bridge_explorer_from_smoke_results(monkeypatch, tmp_path):
    """Chapter 7's explorer on smoke results computed into a store of the test's own (its full
    results may not be stored yet): both versions, every view drawn from the stored networks and
    masks, and the panel of the full network shows the stored held-out accuracy."""
    from modlib import bridge as br
    from modlib import jobs
    from modlib.bridge import explorer

    monkeypatch.delenv("MODLIB_STATIC_EXPLORERS", raising=False)
    with jobs.store_at(tmp_path):
        runs = br.run("smoke", CPU)
    b = br.settings("smoke")
    s = br.toy_settings("smoke", b)
    box, bundle = shown(monkeypatch, lambda: explorer.bridge_explorer(runs, s, "smoke"))
    x = check_static(bundle["text/html"], len(b.formulations) * min(explorer.STATIC_SEEDS, b.seeds))
    assert list(x["menus"]) == ["formulation", "seed"]
    a = runs["a"].arrays
    fig, text = explorer.render({f: r.arrays for f, r in runs.items()}, s, "smoke", {"formulation": "a", "seed": 1})
    assert f"held-out {a['full_held_out'][1]:.2f}" in fig.axes[0].get_title()
    assert "weights kept" in text and len(fig.axes) == len(explorer.VIEWS)
    plt.close(fig)
    before, after = check_live(box)
    assert before[0] != after
