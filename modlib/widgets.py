"""Every chapter's explorer, live and static: one mechanism, :func:`wire`, used by the explorer of
each chapter (its ``explorer`` module, shown in the section named here):

- chapter 1, notebooks/redundant_input_toy.ipynb, "Explore it yourself": the toy's boundaries;
- chapter 2, notebooks/compositional_sprites.ipynb, "Explore": a support and a composition;
- chapter 3, notebooks/resists_at_scale.ipynb, "Explore": one seed's curves and translations;
- chapter 4, notebooks/weight_masks.ipynb, "The regulariser's strength": the alpha sweep;
- chapter 5, notebooks/structural_compositionality.ipynb, after the masks by layer: a base model;
- chapter 6, notebooks/pretraining_consistency.ipynb, "Explore the seeds": a subnetwork and seed;
- chapter 7, notebooks/bridge.ipynb, "Explore the networks": one network whole, as its subnetworks
  and after surgery.

An explorer is a few named controls (ipywidgets) and one pure function ``render(choices)``: from
``{control name: value}`` it draws the view, a list of parts, each a matplotlib figure or an HTML
string (figures first), or returns ``None`` where that combination does not exist. Both versions
draw through it, so there is one drawing path:

- **live** (Colab, Jupyter: a kernel): each change of a control calls ``render`` and shows its
  figures and HTML under the controls;
- **static** (the book's pages: no kernel, no network): when the cell runs, ``render`` is called for
  every combination of a bounded set of choices (:func:`_choices`; a control with too many values,
  e.g. 100 seeds, names a subset and the explorer says so in ``note``). Each figure becomes a PNG
  (100 dpi, like the inline backend, reduced to :data:`PALETTE` colours) inside the HTML; each
  distinct part is written once, with the list of views it belongs to, and ``<select>`` controls
  with a few lines of plain JavaScript (:data:`SCRIPT`, inline) show the parts of the chosen view.

One display bundle carries both: a frontend with a widget manager (JupyterLab, Notebook, VS Code)
shows the live widget; the book's pages show the static HTML, because ``_config.yml``'s
``nb_mime_priority_overrides`` ranks ``text/html`` above widget views (only these bundles have both).
In Colab, and with ``MODLIB_STATIC_EXPLORERS=0``, the static version is left out: the live one is
what is read there, and the cell is quicker without it (:func:`_static_wanted`).
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import os

import ipywidgets as w
import matplotlib.pyplot as plt
from IPython.display import display

# The static explorer's behaviour, once per page (idempotent): on a change of any of its selects,
# show the parts of the chosen view; where the choices make no stored view (chapter 5: a base model
# without that subroutine), the first view with the value just chosen, and the other selects follow.
SCRIPT = """<script>
(function () {
  if (window.modlibExplorers) return;
  window.modlibExplorers = true;
  document.addEventListener("change", function (event) {
    var select = event.target, box = select.closest && select.closest(".modlib-explorer");
    if (!box || !select.matches("select[data-control]")) return;
    var selects = Array.prototype.slice.call(box.querySelectorAll("select[data-control]"));
    var views = box.getAttribute("data-views").split(" ");
    var key = selects.map(function (s) { return s.value; }).join("-");
    if (views.indexOf(key) < 0) {
      var i = selects.indexOf(select);
      key = views.filter(function (v) { return v.split("-")[i] === select.value; })[0] || views[0];
      key.split("-").forEach(function (v, j) { selects[j].value = v; });
    }
    box.querySelectorAll(".modlib-part").forEach(function (part) {
      part.hidden = part.getAttribute("data-views").split(" ").indexOf(key) < 0;
    });
    box.setAttribute("data-shown", key);
  });
})();
</script>"""

STYLE = """<style>
.modlib-explorer { margin: 0.5em 0 1em; }
.modlib-explorer-controls { display: flex; flex-wrap: wrap; gap: 0.4em 1.2em; margin-bottom: 0.4em; }
.modlib-explorer-controls label { font-size: 0.9em; }
.modlib-explorer-controls select { margin-left: 0.4em; max-width: 22em; }
.modlib-explorer img { max-width: 100%; height: auto; }
.modlib-explorer-note { font-size: 0.85em; color: var(--pst-color-text-muted, #555); margin: 0.3em 0 0; }
</style>"""

PALETTE = 64  # colours of each static view's PNG: a third of the bytes, no visible loss in these plots


def options_of(control: w.Widget) -> list[tuple[str, object]]:
    """A control's choices as ``(label, value)``: a selection widget's options, a slider's range."""
    if isinstance(control, w.widgets.widget_selection._Selection):
        return list(zip(control._options_labels, control._options_values))
    if isinstance(control, (w.IntSlider, w.BoundedIntText)):
        return [(str(v), v) for v in range(control.min, control.max + 1, control.step)]
    raise TypeError(f"no static choices for a {type(control).__name__}: name them in static=")


def _choices(controls: dict, static: dict | None) -> dict[str, list[tuple[str, object]]]:
    """The choices the static explorer offers per control: ``static[name]`` (a list of ``(label,
    value)``) where given, else all of the control's options."""
    static = static or {}
    unknown = set(static) - set(controls)
    if unknown:
        raise ValueError(f"static= names no control: {sorted(unknown)}")
    return {name: list(static.get(name) or options_of(c)) for name, c in controls.items()}


DPI, PAD = 100, 0.1  # the static views' resolution and margin (inches) around their tight box
BOX = "modlib_tight_box"  # a figure's attribute: its tight box, measured once (keep_box)


def keep_box(fig: plt.Figure) -> None:
    """Measure the box that ``savefig(bbox_inches="tight")`` crops ``fig`` to, at the static
    views' resolution, and keep it on the figure (attribute :data:`BOX`), so that :func:`_png`
    crops to it without measuring again. For a figure that an explorer draws one view after
    another in (each into its cleared axes) when the views share their layout (the same limits,
    ticks and labels, titles of one width): measuring lays the figure out once more than drawing
    it does, so a figure measured once is saved in about two thirds of the time, in the same
    pixels (tests/test_explorers.py compares them with a new figure per view)."""
    dpi = fig.dpi
    fig.set_dpi(DPI)
    try:
        fig.draw_without_rendering()
        setattr(fig, BOX, fig.get_tightbbox().padded(PAD))
    finally:
        fig.set_dpi(dpi)


def _png(fig: plt.Figure) -> bytes:
    """``fig`` as the inline backend draws it (100 dpi, tight box: the one :func:`keep_box`
    kept, if any), in a palette PNG; closes it."""
    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches=getattr(fig, BOX, None) or "tight",
                pad_inches=PAD)
    plt.close(fig)
    buffer.seek(0)
    image = Image.open(buffer).convert("RGB").quantize(PALETTE, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _part(part) -> tuple[str, bool]:
    """One part of a view as ``(HTML, is a figure)``: a figure as an embedded PNG (its ``alt`` text
    left as ``{alt}``, filled in once the views it belongs to are known), HTML as it is."""
    if isinstance(part, plt.Figure):
        data = base64.b64encode(_png(part)).decode()
        return f'<img src="data:image/png;base64,{data}" alt="{{alt}}">', True
    if isinstance(part, str):
        return part, False
    raise TypeError(f"render returned a {type(part).__name__}: a view's parts are figures or HTML strings")


def static_html(controls: dict, render, static: dict | None = None, note: str = "",
                alt: str = "explorer view") -> str:
    """The static explorer: every view of :func:`_choices`, drawn by ``render``, with ``<select>``
    controls and :data:`SCRIPT` (see the module's docstring). The view first shown is the one the
    live controls start at (else the first that exists). A view's key is the index of its choice in
    each control's list, e.g. ``"0-2"``. A figure's alt text is ``alt`` and the choices shared by
    every view it belongs to (a figure drawn alike for both settings names only the seed). A
    control with a single static choice gets no menu; its value is that choice in every view (say
    so in the ``note``)."""
    choices = _choices(controls, static)
    # a control with one choice gets no menu (a menu of one is no choice): its value is fixed
    fixed = {n: options[0][1] for n, options in choices.items() if len(options) == 1}
    names = [n for n in choices if n not in fixed]
    slots: list[dict[tuple[str, bool], list[str]]] = []  # per position in a view: {part: its views}
    keys = []
    for combo in itertools.product(*(range(len(choices[n])) for n in names)):
        chosen = {n: choices[n][i] for n, i in zip(names, combo)}
        parts = render({**fixed, **{n: value for n, (_, value) in chosen.items()}})
        if parts is None:
            continue
        key = "-".join(map(str, combo))
        keys.append(key)
        for k, part in enumerate(parts):
            if k == len(slots):
                slots.append({})
            slots[k].setdefault(_part(part), []).append(key)
    if not keys:
        raise ValueError("render drew no view for any of the static choices")
    first = []
    for n in names:
        values = [value for _, value in choices[n]]
        first.append(str(values.index(controls[n].value)) if controls[n].value in values else "0")
    shown = "-".join(first) if "-".join(first) in keys else keys[0]

    selects = []
    for i, n in enumerate(names):
        options = "".join(f'<option value="{j}"{" selected" if str(j) == shown.split("-")[i] else ""}>'
                          f"{html.escape(label)}</option>" for j, (label, _) in enumerate(choices[n]))
        selects.append(f'<label>{html.escape(controls[n].description or n)}'
                       f'<select data-control="{html.escape(n)}">{options}</select></label>')

    def described(views: list[str]) -> str:
        combos = [view.split("-") for view in views]
        shared = [f"{controls[n].description or n} {choices[n][int(combos[0][i])][0]}"
                  for i, n in enumerate(names) if len({c[i] for c in combos}) == 1]
        return html.escape(alt + (": " + ", ".join(shared) if shared else ""))

    parts = [f'<div class="modlib-part" data-views="{" ".join(views)}"'
             f'{"" if shown in views else " hidden"}>'
             f'{body.replace("{alt}", described(views)) if figure else body}</div>'
             for slot in slots for (body, figure), views in slot.items()]
    note = f'<p class="modlib-explorer-note">{note}</p>' if note else ""
    return (f'{STYLE}<div class="modlib-explorer" data-views="{" ".join(keys)}" data-shown="{shown}">'
            f'<div class="modlib-explorer-controls">{"".join(selects)}</div>'
            + "".join(parts) + note + f"</div>{SCRIPT}")


def _static_wanted() -> bool:
    """Whether :func:`wire` adds the static explorer: not in Colab (whose frontend may prefer
    HTML to a widget), not with ``MODLIB_STATIC_EXPLORERS=0``."""
    import sys

    return "google.colab" not in sys.modules and os.environ.get("MODLIB_STATIC_EXPLORERS", "1") != "0"


def wire(controls: dict, render, *, layout: list[list[str]] | None = None,
          static: dict | None = None, note: str = "", alt: str = "explorer view") -> w.VBox:
    """Show an explorer (see the module's docstring) and return its live widget.

    ``controls``: ``{name: ipywidget}``, each with a ``value`` and a ``description``; ``render``:
    ``choices -> [figure or HTML, ...] or None``; ``layout``: the live controls' rows (names; default
    one row); ``static``: ``{name: [(label, value), ...]}`` for a control whose static choices are a
    subset of its options (or, where its options change with another control's value, their
    union); ``note``: what the static version leaves out (HTML), shown under it; ``alt``: what its
    figures show, in a few words (their alt text adds the choices)."""
    out, text = w.Output(), w.HTML()

    def redraw(_=None):
        parts = render({name: c.value for name, c in controls.items()}) or []
        with out:
            out.clear_output(wait=True)
            for fig in (p for p in parts if isinstance(p, plt.Figure)):
                display(fig)
                plt.close(fig)
        # HTML goes to its own widget: printing into an Output widget after a figure can leave the
        # kernel's last message undelivered, and the page's build waits for it
        text.value = "".join(p for p in parts if isinstance(p, str))

    rows = layout or [list(controls)]
    box = w.VBox([w.HBox([controls[name] for name in row]) for row in rows] + [out, text])
    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    bundle = box._repr_mimebundle_()
    if _static_wanted():
        bundle["text/html"] = static_html(controls, render, static, note, alt)
    display(bundle, raw=True)
    return box
