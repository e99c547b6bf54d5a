"""Chapter 2's experiments on the causes its page gives (notebooks/compositional_sprites.ipynb,
"What the explanations rest on"; issue 32), stored one result per row like the rows of
:mod:`modlib.compositional_sprites.experiment`, whose models, training and R^2 they reuse unchanged:

- every row again with **data drawn per seed**, as the authors draw it (:func:`run_drawn`): seed
  ``i`` trains on its own training scenes and is scored on its own evaluation scenes, so that the
  spread over seeds includes the data's; the headline rows at :attr:`CauseSettings.seeds` seeds;
- ``alpha-open``: the alpha row with the opacity channel's initial bias raised by
  :attr:`CauseSettings.open_bias` (the exercise "Open the composition"), seed for seed the same
  networks and scenes as ``alpha`` otherwise;
- the two rows that cross composition with decoder sharing (issue 52, :data:`DECOUPLED`): the page's
  alpha row shares one decoder between the slots and composes by alpha, its soft-occlusion rows
  give each slot its own decoder, so the slot R^2 that separates them could come from either;
  ``alpha-open-separate`` composes by alpha with a decoder per slot (each opened as ``alpha-open``),
  ``orthogonal-shared`` composes by soft occlusion with one decoder for both slots;
- in every result, a step of the theorem's proof measured (it needs the theorem's assumption that the
  learned and true slot functions agree at one point): ``r2_slot [S, 2]``, the variance-weighted R^2
  of each learned slot decoder against the renderer's image of that slot alone (:func:`slot_r2`), and
  ``r2_gap [S]``, R^2 on the gap scenes alone (slot 0's x inside :data:`modlib.data.sprites.GAP`,
  every other latent uniform), and ``reach [S]``, the share of the composition's gradient that reached
  the slot decoders before training.

The page reads these rows where all are stored (:func:`page_runs`), else the rows of
``experiment``, whose seeds share one draw of scenes (seed 0's, the same as seed 0's own here).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from modlib import profiles, results
from modlib.compositional_sprites import experiment as ex
from modlib.data import sprites
from modlib.profiles import check_choices, check_int, check_range
from modlib.runtime import describe

PREFIX = "drawn-"  # a result's name: PREFIX + its row
OPEN = "alpha-open"  # the alpha row with its opacity opened at the start
# issue 52: alpha-open's claim on 5 seeds had McNemar p = 0.25, so these rows get
# CauseSettings.more_seeds more seeds, stored as PREFIX + row + MORE_SUFFIX
MORE = ("alpha", OPEN)
MORE_SUFFIX = "-more"
# issue 52: each row -> (the row of ex.ROWS whose support, composition and sharpness it keeps,
# whether its slots share one decoder); its opacity is opened as OPEN's where it composes by alpha
DECOUPLED = {"alpha-open-separate": ("alpha", False), "orthogonal-shared": ("orthogonal", True)}
HEADLINE = ("orthogonal", "orthogonal-monolithic", "alpha", OPEN, "gap", "diagonal-0.2", "diagonal-0.1",
            "diagonal-0.05")


@profiles.settings
class CauseSettings:
    """How many seeds each recomputed row gets, and how far ``alpha-open`` opens the opacity."""

    seeds: int = 5  # the headline rows (:data:`HEADLINE`)
    other_seeds: int = 3  # every other row
    open_bias: float = 0.5  # added to the opacity channel's initial bias in ``alpha-open``
    rows: tuple[str, ...] = ()  # the rows recomputed (none: this profile runs none)
    more_seeds: int = 0  # seeds of the rows of MORE after their first ``seeds`` (issue 52), one more result each
    decoupled: tuple[str, ...] = ()  # rows of DECOUPLED computed, at ``seeds`` seeds each (issue 52)

    def __post_init__(self):
        check_int("seeds", self.seeds, 1)
        check_int("other_seeds", self.other_seeds, 1)
        check_int("more_seeds", self.more_seeds, 0)
        check_range("open_bias", self.open_bias, 0.0, 10.0)
        if self.rows:
            check_choices("rows", self.rows, (*ex.ROWS, OPEN))
        if self.decoupled:
            check_choices("decoupled", self.decoupled, tuple(DECOUPLED))

    def seeds_of(self, row: str) -> int:
        return self.seeds if row in HEADLINE or row in DECOUPLED else self.other_seeds


CAUSES = {
    "smoke": CauseSettings(seeds=2, other_seeds=1, rows=("orthogonal", "alpha", OPEN), more_seeds=1,
                           decoupled=tuple(DECOUPLED)),
    "default": CauseSettings(),
    "full": CauseSettings(rows=(*ex.ROWS, OPEN), more_seeds=5, decoupled=tuple(DECOUPLED)),
    "paper": CauseSettings(),
}


def causes_settings(profile: str | None = None) -> CauseSettings:
    return profiles.settings_for(CAUSES, profile)


def seeds_text(counts: dict[str, int], more: dict[str, int]) -> str:
    """How many seeds the recomputed rows have, for the page's profile note (from the stored results)
    and its settings (from :class:`CauseSettings`): ``counts`` gives each row's seeds, ``more`` the
    seeds each row of :data:`MORE` has after them. "5 seeds in 7 rows (those the claims compare) and
    in alpha-open, 3 in the other 7; 5 more seeds (5–9) in alpha and alpha-open"."""
    from modlib import stats

    groups: dict[int, list[str]] = {}
    for row, n in counts.items():
        groups.setdefault(n, []).append(row)
    parts = []
    for i, (n, rows) in enumerate(sorted(groups.items(), reverse=True)):
        main = [r for r in rows if r != OPEN]
        which = f"{len(main)} rows" if i == 0 else f"the other {len(main)}"
        if len(groups) == 1:
            which = "each row"
        else:
            if set(main) == set(HEADLINE) - {OPEN}:
                which += " (those the claims compare)"
            if OPEN in rows and main:
                which += f" and in {OPEN}"
        parts.append(f"{n} seed{'s' * (n != 1)} in {which}" if i == 0 else f"{n} in {which}")
    text = ", ".join(parts)
    if more:
        m, first = max(more.values()), min(counts.get(r, 0) for r in more)
        span = f"{first}" if m == 1 else f"{first}–{first + m - 1}"
        text += f"; {m} more seed{'s' * (m != 1)} ({span}) in {stats.listing(more)}"
    return text


def spec(row: str) -> str:
    """The row of :data:`modlib.compositional_sprites.ROWS` whose scenes a recomputed row trains on."""
    if row in DECOUPLED:
        return DECOUPLED[row][0]
    return "alpha" if row == OPEN else row


def build(s: ex.SpriteSettings, row: str, open_bias: float) -> torch.nn.Module:
    """The untrained model of ``row``. For ``alpha-open``, ``open_bias`` is added to the initial
    bias of the opacity channel (channel 3 of the last convolution: one decoder draws both slots);
    for a row of :data:`DECOUPLED`, its row's model with the slots' decoders shared or not, the
    opacity opened in each decoder where it composes by alpha."""
    if row not in DECOUPLED:
        model = ex.build(s, spec(row))
    else:
        _, _, _, composition, sharpness = ex.ROWS[spec(row)]
        model = ex.Compositional(s, composition, sharpness, shared=DECOUPLED[row][1])
    if row == OPEN or (row in DECOUPLED and model.composition == "alpha"):
        with torch.no_grad():
            for f in dict.fromkeys(model.slots):  # each decoder once (a shared one draws both slots)
                f[-1].bias[3] += open_bias
    return model


def gap_latents(n: int, g: torch.Generator) -> torch.Tensor:
    """``n`` scenes ``[n, 2, 5]`` uniform on the cube except slot 0's x, uniform inside the gap."""
    z = torch.rand(n, sprites.SLOTS, sprites.LATENTS, generator=g)
    low, high = sprites.GAP
    z[:, 0, 0] = low + (high - low) * z[:, 0, 0]
    return z


def slot_targets(z: torch.Tensor, size: int, composition: str) -> torch.Tensor:
    """Each slot drawn alone by the renderer, ``[n, 2, C, H, W]``: RGB for soft occlusion; for alpha
    compositing the colour times opacity and the opacity (the colour under opacity 0 is not seen)."""
    if composition != "alpha":
        return sprites.render_slots(z, size)
    return _premultiplied(sprites.render_slots(z, size, rgba=True))


def _premultiplied(slots: torch.Tensor) -> torch.Tensor:
    alpha = slots[:, :, 3:].clamp(0, 1)
    return torch.cat([alpha * slots[:, :, :3], alpha], dim=2)


@torch.no_grad()
def slot_r2(model, z: torch.Tensor, size: int, composition: str, batch: int = 500) -> np.ndarray:
    """``[2]``: the R^2 (:func:`modlib.compositional_sprites.r2_score`) of each learned slot decoder's
    image against the renderer's image of that slot alone, on latents ``z [n, 2, 5]`` (unscaled): the
    step of the theorem's proof, that a model which fits a sufficient support, and agrees with the true slot
    functions at one point, recovers them."""
    model.eval()
    learned = torch.cat([model.slot_images(sprites.scale_latents(z[i:i + batch])) for i in range(0, len(z), batch)])
    model.train()
    if composition == "alpha":
        learned = _premultiplied(learned)
    target = slot_targets(z, size, composition).to(learned.device)
    return np.array([ex.r2_score(target[:, k], learned[:, k]) for k in range(sprites.SLOTS)])


@torch.no_grad()
def reach(model, z: torch.Tensor, composition: str, k: float) -> float:
    """The share of the composition's gradient that reaches the slot decoders of an untrained
    ``model`` on scaled latents ``z`` (as :func:`modlib.compositional_sprites.findings.gradient_reach`
    measures it)."""
    slots = model.slot_images(z)
    if composition == "alpha":
        opacity = slots[:, :, 3]
        return float(((opacity > 0) & (opacity < 1)).float().mean())
    return float(torch.sigmoid(-k * slots[:, 0].sum(1)).mean())


def run_drawn(s: ex.SpriteSettings, row: str, c: CauseSettings, device: torch.device,
              seeds: range | None = None) -> tuple[dict, dict]:
    """Train ``row``'s ``seeds`` (default: its first ``c.seeds_of(row)``), each on its own draw of
    scenes; returns ``(metrics, arrays)`` with the arrays of :func:`modlib.compositional_sprites.run_row`
    (``train_z`` and ``shown_*`` of the first seed) and ``r2_slot [S, 2]`` (compositional models; NaN
    for the monolithic), ``r2_gap [S]``, ``reach [S]`` (NaN for the monolithic)."""
    seeds, base = seeds or range(c.seeds_of(row)), spec(row)
    composition, k = ex.ROWS[base][3], ex.ROWS[base][4]
    s = s.with_(seeds=len(seeds))
    minutes = ex.estimate_seconds(s, base, device) / 60
    print(f"{PREFIX}{row}: {len(seeds)} seed(s) from {seeds[0]}, each on its own scenes, about {minutes:.0f} min "
          f"of training on {describe(device)}")
    z_sl = sprites.scale_latents(ex.slice_latents()).to(device)
    x_sl = sprites.scenes(ex.slice_latents(), s.size, composition, k).to(device)
    when = ex.eval_epochs(s.epochs, s.evals)
    out = {key: [] for key in ("r2_in", "r2_whole", "slice_mse", "r2_slot", "r2_gap", "reach")}
    shown = {}
    for seed in seeds:
        z_tr, x_tr = (t.to(device) for t in ex.data(s, base, s.n_train, "train", seed))
        z_in, x_in = (t.to(device) for t in ex.data(s, base, s.n_eval, "in-domain", seed))
        z_wh, x_wh = (t.to(device) for t in ex.data(s, base, s.n_eval, "whole", seed))
        g = torch.Generator().manual_seed(1_000 * seed + 3)
        z_gap = gap_latents(s.n_eval, g)
        x_gap = sprites.scenes(z_gap, s.size, composition, k).to(device)
        z_gap_scaled = sprites.scale_latents(z_gap).to(device)
        z_raw = torch.rand(s.n_eval, sprites.SLOTS, sprites.LATENTS, generator=g)  # for the slot R^2
        torch.manual_seed(seed)
        model = build(s, row, c.open_bias).to(device)
        compositional = isinstance(model, ex.Compositional)
        out["reach"].append(reach(model, z_tr[:500], composition, k) if compositional else np.nan)
        curve_in, curve_whole = [], []

        def measure(epoch):
            if epoch in when:
                curve_in.append(ex.r2_score(x_in, ex.predict(model, z_in)))
                curve_whole.append(ex.r2_score(x_wh, ex.predict(model, z_wh)))

        ex.train(model, z_tr, x_tr, s, seed, measure, desc=f"{PREFIX}{row} seed {seed}")
        out["r2_in"].append(curve_in), out["r2_whole"].append(curve_whole)
        err = ((ex.predict(model, z_sl) - x_sl) ** 2).flatten(1).mean(1)
        out["slice_mse"].append(err.reshape(ex.SLICE, ex.SLICE).cpu().numpy())
        out["r2_gap"].append(ex.r2_score(x_gap, ex.predict(model, z_gap_scaled)))
        out["r2_slot"].append(slot_r2(model, z_raw.to(device), s.size, composition) if compositional
                              else np.full(sprites.SLOTS, np.nan))
        if seed == seeds[0]:
            shown = {"shown_z": z_wh[:8].cpu().numpy(), "shown_true": x_wh[:8], "shown_pred": ex.predict(model, z_wh[:8])}
            if compositional:
                with torch.no_grad():
                    shown["shown_slots"] = model.slot_images(z_wh[:8])
            train_z = z_tr[:200].cpu().numpy()
    as_bytes = {key: (v.clamp(0, 1) * 255).round().to(torch.uint8).cpu().numpy()
                for key, v in shown.items() if key != "shown_z"}
    arrays = {"eval_epochs": np.array(when), **{key: np.array(v, dtype=float) for key, v in out.items()},
              "shown_z": shown["shown_z"], **as_bytes, "train_z": train_z}
    final_in, final_whole = arrays["r2_in"][:, -1], arrays["r2_whole"][:, -1]
    metrics = {"row": row, "r2_in_mean": float(final_in.mean()), "r2_in_std": float(final_in.std()),
               "r2_whole_mean": float(final_whole.mean()), "r2_whole_std": float(final_whole.std()),
               "r2_gap_mean": float(arrays["r2_gap"].mean())}
    return metrics, arrays


def _config(s: ex.SpriteSettings, row: str, c: CauseSettings) -> dict:
    cfg = asdict(s)
    cfg.pop("rows")
    cfg.update(seeds=c.seeds_of(row), row=list(ex.ROWS[spec(row)]), data="per seed", variant=row,
               open_bias=c.open_bias if row == OPEN else None)
    if row in DECOUPLED:
        model = "shared" if DECOUPLED[row][1] else "compositional"
        opened = cfg["row"][3] == "alpha"
        cfg.update(row=[*cfg["row"][:2], model, *cfg["row"][3:]], open_bias=c.open_bias if opened else None)
    return cfg


def names(profile: str | None = None) -> list[str]:
    """The recomputed rows' result names at ``profile``."""
    return [PREFIX + row for row in causes_settings(profile).rows]


def fetch(profile: str, row: str, device: torch.device) -> results.Result:
    """Load (or compute and store) one recomputed row at ``profile``."""
    s, c = ex.settings(profile), causes_settings(profile)
    remake = f"python -m modlib.batch --profile {profile} --executor local --workers 1 " \
             f"notebooks/{ex.CHAPTER}.ipynb"
    return results.fetch(ex.CHAPTER, PREFIX + row, _config(s, row, c), lambda: run_drawn(s, row, c, device),
                         profile=profile, device=describe(device), code=run_drawn, remake=remake)


def fetch_more(profile: str, row: str, device: torch.device) -> results.Result:
    """Load (or compute and store) the :attr:`CauseSettings.more_seeds` seeds of ``row`` (one of
    :data:`MORE`) that follow its first ``seeds``: ``drawn-<row>-more``, the arrays of
    :func:`run_drawn` over those seeds."""
    s, c = ex.settings(profile), causes_settings(profile)
    profiles.check_choice("row", row, MORE)
    seeds = range(c.seeds_of(row), c.seeds_of(row) + c.more_seeds)
    if not seeds:
        raise ValueError(f"the {profile} profile gives {row} no more seeds (more_seeds = 0)")
    config = {**_config(s, row, c), "seeds": len(seeds), "first_seed": seeds[0]}
    return results.fetch(ex.CHAPTER, PREFIX + row + MORE_SUFFIX, config,
                         lambda: run_drawn(s, row, c, device, seeds), profile=profile,
                         device=describe(device), code=run_drawn)


def _stored_rows(rows, load) -> dict[str, results.Result]:
    """``{row: load(row)}`` for those of ``rows`` stored and current (none computed)."""
    out = {}
    with results.store_only():
        for row in rows:
            try:
                out[row] = load(row)
            except results.StaleResultError:
                continue
    return out


def stored_more(profile: str) -> dict[str, results.Result]:
    """The results of :func:`fetch_more` stored now at ``profile``, by row (none computed)."""
    rows = MORE if causes_settings(profile).more_seeds else ()
    return _stored_rows(rows, lambda row: fetch_more(profile, row, torch.device("cpu")))


def stored_decoupled(profile: str) -> dict[str, results.Result]:
    """The rows of :data:`DECOUPLED` that ``profile`` computes, stored now, by row (none computed)."""
    return _stored_rows(causes_settings(profile).decoupled, lambda row: fetch(profile, row, torch.device("cpu")))


def stored(profile: str) -> dict[str, results.Result] | None:
    """Every recomputed row of ``profile`` by its row name, where all are stored and current; else
    ``None`` (computes nothing)."""
    c = causes_settings(profile)
    if not c.rows:
        return None
    out = {}
    with results.store_only():
        for row in c.rows:
            try:
                out[row] = fetch(profile, row, torch.device("cpu"))
            except results.StaleResultError:
                return None
    return out


def page_runs(profile: str, device: torch.device) -> ex.SpriteRuns:
    """The rows the chapter's page reads: the recomputed rows of ``profile`` (each seed on its own
    scenes) where all are stored, ``alpha-open`` left to the appendix; else the rows of
    :func:`modlib.compositional_sprites.run` (loaded, or computed where not stored)."""
    drawn = stored(profile)
    s = ex.settings(profile)
    if drawn is None or not set(s.rows) <= set(drawn):
        return ex.run(profile, device)
    return ex.SpriteRuns(s, {row: drawn[row] for row in s.rows}, profile)


def runs(profile: str, device: torch.device, compute: bool = False) -> ex.SpriteRuns | None:
    """The recomputed rows as a :class:`~modlib.compositional_sprites.SpriteRuns` (``alpha-open``
    among them): loaded where all are stored, computed with ``compute``, else ``None``."""
    found = ({row: fetch(profile, row, device) for row in causes_settings(profile).rows} if compute
             else stored(profile))
    if not found:
        return None
    return ex.SpriteRuns(ex.settings(profile), found, profile)
