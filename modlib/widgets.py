"""ipywidgets explorers over stored results (they need a live kernel; the static book page shows
the saved first view, and the chapters add a kernel-free animation beside them)."""

from __future__ import annotations

import html

import ipywidgets as w
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from modlib import plots


def toy_explorer(sweep) -> w.VBox:
    """Epoch, seed, formulation, activation, loss and training-set controls over the toy's stored
    boundaries."""
    s = sweep.settings
    first = sweep.arrays(s.activations[0], s.losses[0], s.formulations[0], s.reveals[0])
    epochs = [int(t) for t in first["snapshot_epochs"]]
    sets = [(plots.condition_label(d, r), (d, r)) for d, r in s.conditions]
    controls = {
        "epoch": w.SelectionSlider(options=epochs, value=epochs[-1], description="epoch"),
        "seed": w.IntSlider(value=0, min=0, max=first["grids"].shape[0] - 1, description="seed"),
        "formulation": w.ToggleButtons(options=list(s.formulations), description="formulation"),
        "activation": w.ToggleButtons(options=list(s.activations), description="activation"),
        "loss": w.ToggleButtons(options=list(s.losses), description="loss"),
        "condition": w.Dropdown(options=sets, value=sets[0][1], description="training set"),
    }
    out = w.Output()

    def redraw(_=None):
        c = {k: v.value for k, v in controls.items()}
        design, reveal = c["condition"][0], c["condition"][1]
        a = sweep.arrays(c["activation"], c["loss"], c["formulation"], reveal, design)
        k = epochs.index(c["epoch"])
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(4.2, 4.2))
            plots.boundary_panel(ax, a, c["formulation"], c["seed"], k,
                                 f"epoch {c['epoch']}, seed {c['seed']}: held-out accuracy "
                                 f"{a['test_acc'][c['seed']]:.2f} (final)", design)
            plots.stamp(fig, sweep.provenance)
            plt.show()

    return _wire(controls, redraw, w.VBox([w.HBox([controls["formulation"], controls["activation"]]),
                                           w.HBox([controls["loss"], controls["condition"]]),
                                           w.HBox([controls["epoch"], controls["seed"]]), out]))


def mask_explorer(points: dict, layers: list[str]) -> w.VBox:
    """An alpha selector (the specialization table at that alpha) and a layer selector (the + / *
    mask overlap at that layer across alphas) over the stored alpha sweep of the weight-mask chapter
    (``points``: ``{alpha: result}`` from :func:`modlib.modularity.sweep`); the caption below it on
    the page names the profile, device and seeds."""
    from modlib import data, modularity

    alphas, tables, ious = modularity.sweep_arrays(points)  # [A], [A, 5, 2], [A, L]
    alpha = w.SelectionSlider(options=alphas, value=alphas[0], description="alpha")
    layer = w.Dropdown(options=[(f"layer {i + 1} ({n})", i) for i, n in enumerate(layers)], value=0,
                       description="layer")
    out = w.Output()

    def redraw(_=None):
        a = alphas.index(alpha.value)
        with out:
            out.clear_output(wait=True)
            fig, axes = plt.subplots(1, 2, figsize=(plots.COLUMN, 2.8), width_ratios=(1.3, 1))
            axes[0].imshow(tables[a], cmap="Greens", vmin=0, vmax=1, aspect="auto")
            for (i, j), v in np.ndenumerate(tables[a]):
                axes[0].text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8,
                             color="white" if v > 0.6 else "black")
            axes[0].set_xticks(range(2), [f"on {plots.times(o)}" for o in data.OPS], fontsize=8)
            axes[0].set_yticks(range(len(modularity.ROWS)), [plots.times(r) for r in modularity.ROWS],
                               fontsize=8)
            axes[0].set_title(f"accuracy at alpha = {alpha.value:g}", fontsize=9)
            axes[1].plot(alphas, ious[:, layer.value], marker="o")
            axes[1].axvline(alpha.value, color="0.6", ls=":")
            axes[1].set(xscale="log", ylim=(0, 1))
            axes[1].set_xticks(alphas, [f"{v:g}" for v in alphas], rotation=45)
            axes[1].minorticks_off()
            axes[1].set_xlabel("alpha", fontsize=8)
            axes[1].set_ylabel("IoU of + and × masks", fontsize=8)
            axes[1].set_title(layer.label, fontsize=9)
            axes[1].tick_params(labelsize=8)
            fig.tight_layout()
            plt.show()

    return _wire({"alpha": alpha, "layer": layer}, redraw, w.VBox([w.HBox([alpha, layer]), out]))


def sprite_explorer(runs, size: int) -> w.VBox:
    """Chapter 2: choose a training support and a composition; see the support (slot-0 x against
    slot-1 x), the sufficient-support check at ``size`` pixels (computed live) and the stored
    result of the matching row, if this run has one."""
    import torch

    from modlib import compositional_sprites as cs
    from modlib import sprites

    supports = ["random", "orthogonal", "orthogonal-broad", "gap", "normal",
                "diagonal δ=0.2", "diagonal δ=0.1", "diagonal δ=0.05"]
    compositions = [("soft, k = 1", ("soft", 1.0)), ("soft, k = 4", ("soft", 4.0)),
                    ("soft, k = 16", ("soft", 16.0)), ("soft, k = 64", ("soft", 64.0)),
                    ("alpha", ("alpha", 1.0))]
    controls = {"support": w.Dropdown(options=supports, value="orthogonal", description="support"),
                "composition": w.Dropdown(options=compositions, value=("soft", 1.0),
                                          description="C")}
    out = w.Output()

    def redraw(_=None):
        name = controls["support"].value
        support, delta = (name.split(" δ=")[0], float(name.split("=")[1])) if "δ" in name else (name, None)
        composition, k = controls["composition"].value
        z = sprites.sample_support(support, 600, torch.Generator().manual_seed(0),
                                   delta=delta).numpy()
        share = sprites.sufficient_support(support, composition, size, n=8, sharpness=k, delta=delta)
        row = next((r for r, spec in cs.ROWS.items()
                    if spec[:2] == (support, delta) and spec[3:] == (composition, k)
                    and spec[2] != "monolithic"), None)
        stored = (f"stored result ({row}): R² {runs.rows[row].metrics['r2_in_mean']:.2f} in-domain, "
                  f"{runs.rows[row].metrics['r2_whole_mean']:.2f} whole cube"
                  if row in runs.rows else "no stored result for this pair at this profile")
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(3.2, 3.2))
            plots.support_panel(ax, z, name)
            plots.stamp(fig, runs.provenance)
            plt.show()
        worst = share[share > 0].min()  # draws the support did not supply are 0
        text.value = (f"<pre>sufficient-support check: full rank at {worst:.0%} of a slot's\n"
                      f"outputs in the worst of 8 draws per slot\n{html.escape(stored)}</pre>")

    # text goes to its own widget: printing into an Output widget after a figure can leave the
    # kernel's last message undelivered, and the page's build waits for it
    text = w.HTML()
    return _wire(controls, redraw, w.VBox([w.HBox(list(controls.values())), out, text]))


def resists_explorer(runs) -> w.VBox:
    """Chapter 3: choose a seed; see its MNIST and SCAN curves in settings A and B (means over
    seeds dotted) and its stored translations of the shown SCAN test commands in the chosen
    setting."""
    import torch

    from modlib import resists_at_scale as rs
    from modlib import scan

    seeds = len(runs.arrays("mnist-A")["acc_train"])
    controls = {"seed": w.IntSlider(value=0, min=0, max=seeds - 1, description="seed"),
                "setting": w.ToggleButtons(options=list(rs.SETTING_NAMES), description="translations")}
    out = w.Output()
    _, test = scan.split("add-jump")
    shown = [test[i] for i in rs.shown_commands(runs.settings.seeds).tolist()]

    def redraw(_=None):
        seed, setting = controls["seed"].value, controls["setting"].value
        with out:
            out.clear_output(wait=True)
            fig, axes = plt.subplots(1, 2, figsize=(plots.COLUMN, 2.6))
            for ax, experiment in zip(axes, rs.EXPERIMENTS):
                plots.ab_curves(ax, runs, experiment, seed=seed)
                ax.set_title(f"{experiment.upper()}, seed {seed}", fontsize=9)
            axes[1].set_xscale("symlog", linthresh=10)
            axes[1].set_xlim(left=0)
            axes[1].legend(fontsize=6, loc="center right")
            plots.stamp(fig, runs.rows["scan-A"].provenance + " per setting")
            fig.tight_layout()
            plt.show()
        pred = runs.arrays(f"scan-{setting}")["shown_pred"][seed]
        lines = [f"setting {setting}, seed {seed}, the shown test commands (✓ right, ✗ wrong):"]
        for (command, truth), p in zip(shown, torch.as_tensor(pred).tolist()):
            said = " ".join(scan.ACTION_VOCAB.decode(p))
            lines.append(f"{'✓' if said == truth else '✗'} {html.escape(command)}")
        text.value = "<pre>" + "\n".join(lines) + "</pre>"

    text = w.HTML()
    return _wire(controls, redraw, w.VBox([w.HBox(list(controls.values())), out, text]))


def _wire(controls: dict, redraw, box: w.VBox) -> w.VBox:
    """Redraw on every change of ``controls``, draw once, and show ``box``."""
    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    display(box)
    return box


def structure_explorer(runs) -> w.VBox:
    """Chapter 5: choose a stored base model (trained or the untrained control) and a subroutine;
    see where its masks keep weights, layer by layer, with the overlap of the two subroutines'
    masks, and the accuracies of each mask seed's subnetwork, ablation and controls."""
    searched = [n for n, r in runs.rows.items() if r.metrics.get("subroutines")]
    if not searched:
        return w.HTML("No stored result at this profile has a mask search (no base model passed "
                      f"the gate of {runs.settings.base_gate}).")
    controls = {"result": w.Dropdown(options=searched, description="base model"),
                "subroutine": w.ToggleButtons(options=[], description="subroutine")}
    out, text = w.Output(), w.HTML()

    def subroutines(_=None):
        names = list(runs.rows[controls["result"].value].metrics["subroutines"])
        controls["subroutine"].options = names

    def redraw(_=None):
        r = runs.rows[controls["result"].value]
        subs = tuple(r.metrics["subroutines"])
        sub = controls["subroutine"].value or subs[0]
        found = r.metrics["subroutines"][sub]
        with out:
            out.clear_output(wait=True)
            fig = plots.kept_by_layer(r.arrays, subs, r.metrics["overlap"]["layers"])
            fig.axes[0].set_title(f"{controls['result'].value}: masks by layer", fontsize=9)
            plots.stamp(fig, plots.structure_provenance(runs))
            plt.show()
        chosen = ", ".join(f"{k} {v}" for k, v in found["chosen"].items())
        lines = [f"{sub} mask: {chosen}",
                 f"({'passed' if found['passed_gate'] else 'missed'} the 0.9 gate on validation)",
                 "seed  kept   subnetwork     ablated        re-init abl.   random subnet",
                 "             target other   target other   target other   target other"]
        for run in found["runs"]:
            cells = "   ".join(f"{run[m][0]:.2f}  {run[m][1]:.2f}" for m in ("hard", "complement", "reinit", "random"))
            lines.append(f"{run['seed']:>4}  {run['kept']:.3f}  {cells}")
        text.value = "<pre>" + html.escape("\n".join(lines)) + "</pre>"

    controls["result"].observe(subroutines, names="value")
    subroutines()
    return _wire(controls, redraw, w.VBox([w.HBox(list(controls.values())), out, text]))


def pretraining_explorer(runs, df, margin: float) -> w.VBox:
    """Chapter 6: choose a rule and subroutine; see every base model's ablated accuracies (target
    against other subroutine), from scratch and pretrained, one point per base model, with a chosen
    seed's two points ringed and its numbers (subnetwork and ablation, per mask seed) below; points
    above the dotted line (effect ``margin``, :data:`modlib.findings.MARGIN`) show the modular
    pattern, dashed lines mark chance.
    ``df``: :func:`modlib.findings.pretraining_effects` of ``runs``."""
    groups = [(f"{rule}: {sub}", (rule, sub)) for rule, sub in dict.fromkeys(zip(df["rule"], df["subroutine"]))]
    controls = {"group": w.Dropdown(options=groups, description="subnetwork"),
                "seed": w.IntSlider(value=0, min=0, max=int(df["seed"].max()), description="base model")}
    out, text = w.Output(), w.HTML()

    def redraw(_=None):
        rule, sub = controls["group"].value
        seed = controls["seed"].value
        rows = df[(df["rule"] == rule) & (df["subroutine"] == sub)]
        with out:
            out.clear_output(wait=True)
            fig, ax = plt.subplots(figsize=(plots.COLUMN, 4.0))
            for init, colour in plots.INIT_COLOURS.items():
                r = rows[rows["init"] == init]
                ax.plot(r["target"], r["other"], "o", color=colour, label=init, ms=5)
                mine = r[r["seed"] == seed]
                ax.plot(mine["target"], mine["other"], "o", ms=12, mfc="none", color=colour)
            ax.plot([0, 1], [0, 1], color="0.6", lw=0.8)
            ax.plot([0, 1 - margin], [margin, 1], color="0.6", lw=0.8, ls=":", label=f"effect {margin:g}")
            ax.axhline(0.25, color="0.4", ls="--", lw=0.8, label="chance")
            ax.axvline(0.25, color="0.4", ls="--", lw=0.8)
            ax.set(xlim=(0, 1.05), ylim=(0, 1.05), xlabel=f"ablated: {sub} problems (target)",
                   ylabel="ablated: other subroutine's")
            ax.set_title(f"{rule}, {sub} mask: above the dotted line (effect ≥ {margin:g}) is modular", fontsize=9)
            ax.legend(fontsize=8, frameon=False, loc="lower right")
            ax.set_aspect("equal")
            fig.tight_layout(rect=(0, 0.05, 1, 1))  # room for the provenance line below the axes
            plots.stamp(fig, plots.pretraining_provenance(runs))
            plt.show()
        lines = ["init        task   mask seed  subnetwork      ablated",
                 "                              target other    target other"]
        for init in ("scratch", "pretrained"):
            m = runs.rows[f"{rule}-{init}-{seed}"].metrics
            if not m["searched"]:
                lines.append(f"{init:<10}  {m['base']['task']:.2f}   not searched (below the base gate)")
                continue
            for run in m["subroutines"][sub]["runs"]:
                lines.append(f"{init:<10}  {m['base']['task']:.2f}   {run['seed']:>9}  "
                             f"{run['hard'][0]:.2f}  {run['hard'][1]:.2f}     "
                             f"{run['complement'][0]:.2f}  {run['complement'][1]:.2f}")
        text.value = "<pre>" + html.escape("\n".join(lines)) + "</pre>"

    return _wire(controls, redraw, w.VBox([w.HBox(list(controls.values())), out, text]))
