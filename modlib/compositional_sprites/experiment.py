"""Compositional vs monolithic models on multi-sprite scenes (chapter 2,
notebooks/compositional_sprites.ipynb; Wiedemer et al. 2023).

A *row* is one experiment of the paper's table (:data:`ROWS`): a training support, a model
(``"compositional"``: one decoder per slot, composed with the known C; ``"monolithic"``: one
decoder from all 10 latents), a composition function and its sharpness. Each row trains
``seeds`` models on a fixed training set drawn from its support and measures variance-weighted
R^2 (:func:`r2_score`) in-domain (fresh scenes from the support) and on the whole latent cube.
A row's seeds are one stored result (:func:`modlib.results.fetch`).

The decoders (:func:`decoder`): ``"upsample"`` is the authors' UpsampleMLP (an MLP to a 4x4 map,
then bilinear upsampling and 2x2 convolutions up to the image size); ``"mlp"`` is an MLP whose
last layer writes every pixel. The data comes from :mod:`modlib.data.sprites`.
"""

from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np
import torch
from torch import nn

from modlib import profiles, results
from modlib.data import sprites
from modlib.profiles import check_choice, check_choices, check_int, check_range, settings_for
from modlib.runtime import describe
from modlib.training import bar

CHAPTER = "compositional_sprites"
MODELS = ("compositional", "shared", "monolithic")
DECODERS = ("upsample", "mlp")
# name: (support, delta, model, composition, sharpness); the paper's table, then the sharpness sweep.
# "shared": one decoder drawing both slots, as the authors' alpha-compositing run has it
ROWS = {
    "orthogonal": ("orthogonal", None, "compositional", "soft", 1.0),
    "orthogonal-monolithic": ("orthogonal", None, "monolithic", "soft", 1.0),
    "random": ("random", None, "compositional", "soft", 1.0),
    "random-monolithic": ("random", None, "monolithic", "soft", 1.0),
    "alpha": ("orthogonal", None, "shared", "alpha", 1.0),
    "orthogonal-broad": ("orthogonal-broad", None, "compositional", "soft", 1.0),
    "gap": ("gap", None, "compositional", "soft", 1.0),
    "normal": ("normal", None, "compositional", "soft", 1.0),
    "diagonal-0.2": ("diagonal", 0.2, "compositional", "soft", 1.0),
    "diagonal-0.1": ("diagonal", 0.1, "compositional", "soft", 1.0),
    "diagonal-0.05": ("diagonal", 0.05, "compositional", "soft", 1.0),
    "sharpness-4": ("orthogonal", None, "compositional", "soft", 4.0),
    "sharpness-16": ("orthogonal", None, "compositional", "soft", 16.0),
    "sharpness-64": ("orthogonal", None, "compositional", "soft", 64.0),
}
# the paper's Table (mean over seeds; in-domain, whole latent cube), for the page's comparison
PAPER_R2 = {
    "random": (0.957, 0.957), "random-monolithic": (0.931, 0.931),
    "orthogonal": (0.957, 0.951), "orthogonal-monolithic": (0.948, -0.50),
    "alpha": (0.984, 0.979), "orthogonal-broad": (0.959, 0.954), "gap": (0.954, 0.895),
    "normal": (0.957, 0.951), "diagonal-0.2": (0.957, 0.955), "diagonal-0.1": (0.954, 0.945),
    "diagonal-0.05": (0.867, 0.589),
}
SLICE = 12  # the error map: a SLICE x SLICE grid of slot-0 x against slot-1 x


@profiles.settings
class SpriteSettings:
    """Everything that decides a row's run; the defaults are the paper's. Validated on
    construction."""

    seeds: int = 5
    size: int = 64  # image side in pixels; a power of two, at least 8
    n_train: int = 100_000
    n_eval: int = 10_000  # scenes per evaluation set (in-domain, whole cube)
    epochs: int = 2_000
    batch: int = 512
    lr: float = 1e-3
    lr_min: float = 1e-5  # the cosine schedule's end
    weight_decay: float = 1e-5
    decoder: str = "upsample"
    hidden: int = 256  # per-slot decoder width
    channels: int = 32  # per-slot decoder channels ("upsample")
    mono_hidden: int = 320  # the monolithic decoder, wider as in the paper
    mono_channels: int = 64
    evals: int = 20  # R^2 measured at this many epochs, log-spaced, the last included
    rows: tuple[str, ...] = tuple(ROWS)

    def __post_init__(self):
        for name in ("seeds", "n_train", "n_eval", "epochs", "batch", "hidden", "channels",
                     "mono_hidden", "mono_channels", "evals"):
            check_int(name, getattr(self, name), 1)
        check_int("size", self.size, 8)
        if self.size & (self.size - 1):
            raise ValueError(f"size={self.size} is not a power of two; choose 8, 16, 32 or 64")
        check_range("lr", self.lr, 0.0, 1.0, open_low=True)
        check_range("lr_min", self.lr_min, 0.0, self.lr)
        check_range("weight_decay", self.weight_decay, 0.0, 1.0)
        check_choice("decoder", self.decoder, DECODERS)
        check_choices("rows", self.rows, tuple(ROWS))


# full: what 2 CPU cores compute in about an hour and a quarter (4-6 minutes a row and seed): 16 x 16
# images, a tenth of the data, 60 epochs in batches of 64 at a higher learning rate, half the
# channels; see the chapter's section "How full differs from the paper"
FULL = SpriteSettings(seeds=3, size=16, n_train=10_000, n_eval=2_000, epochs=60, batch=64, lr=3e-3,
                      channels=16, mono_channels=32, evals=6)
SETTINGS = {
    "smoke": FULL.with_(seeds=1, n_train=256, n_eval=64, epochs=2, hidden=32, channels=8,
                        mono_hidden=32, mono_channels=8, evals=2,
                        rows=("orthogonal", "orthogonal-monolithic", "alpha")),
    "default": FULL.with_(seeds=1, n_train=6_000, n_eval=1_000, epochs=30, evals=4,
                          rows=("orthogonal", "orthogonal-monolithic")),
    "full": FULL,
    "paper": SpriteSettings(),
}


def settings(profile: str | None = None) -> SpriteSettings:
    return settings_for(SETTINGS, profile)


# the page's live demo ("To try the code above"): both models trained briefly on fresh scenes, not
# stored; the page's text names its size (3,000 scenes, 10 epochs: about half a minute of one core);
# at smoke a token size, which only checks that the code runs
DEMO = {"smoke": {"n_train": 256, "epochs": 2},
        "default": {"n_train": 3_000, "epochs": 10}}


def demo_settings(profile: str) -> SpriteSettings:
    """The live demo's settings at ``profile``: the profile's models and training, on
    :data:`DEMO`'s scenes and epochs (``default``'s at every profile but ``smoke``)."""
    return settings(profile).with_(**DEMO.get(profile, DEMO["default"]))


# ---------------------------------------------------------------- models

def decoder(d_in: int, out_channels: int, size: int, hidden: int,
            channels: int, kind: str) -> nn.Sequential:
    """Latents ``[B, d_in]`` to an image ``[B, out_channels, size, size]``: three hidden layers of
    ``hidden`` units with ELU, then either (``"mlp"``) a linear layer to every pixel, or
    (``"upsample"``, the authors') a linear layer to a ``channels x 4 x 4`` map and, per doubling
    up to ``size``, ELU, bilinear upsampling x2 and a 2x2 convolution."""
    check_choice("decoder", kind, DECODERS)
    layers: list[nn.Module] = [
        nn.Linear(d_in, hidden), nn.ELU(),
        nn.Linear(hidden, hidden), nn.ELU(),
        nn.Linear(hidden, hidden), nn.ELU()]
    if kind == "mlp":
        return nn.Sequential(
            *layers, nn.Linear(hidden, out_channels * size * size),
            nn.Unflatten(1, (out_channels, size, size)))
    layers += [nn.Linear(hidden, channels * 16),
               nn.Unflatten(1, (channels, 4, 4))]
    doublings = int(math.log2(size // 4))
    for i in range(doublings):
        out = channels if i < doublings - 1 else out_channels
        # a 2x2 convolution padded to keep the size ('same')
        layers += [nn.ELU(),
                   nn.Upsample(scale_factor=2, mode="bilinear",
                               align_corners=True),
                   nn.ZeroPad2d((0, 1, 0, 1)), nn.Conv2d(channels, out, 2)]
    return nn.Sequential(*layers)


class Compositional(nn.Module):
    """One decoder per slot (or, ``shared``, one decoder for both), composed with the known C:
    latents ``[B, 2, 5]`` (scaled, as :func:`modlib.data.sprites.scale_latents` gives them) to a scene
    ``[B, 3, H, W]``."""

    def __init__(self, s: SpriteSettings, composition: str,
                 sharpness: float = 1.0, shared: bool = False):
        super().__init__()
        c = 4 if composition == "alpha" else 3
        decoders = [decoder(sprites.LATENTS, c, s.size, s.hidden,
                            s.channels, s.decoder)
                    for _ in range(1 if shared else sprites.SLOTS)]
        self.slots = nn.ModuleList(
            decoders * sprites.SLOTS if shared else decoders)
        self.composition, self.sharpness = composition, sharpness

    def slot_images(self, z: torch.Tensor) -> torch.Tensor:
        """Each slot's image ``[B, 2, C, H, W]``."""
        return torch.stack([f(z[:, k]) for k, f in enumerate(self.slots)],
                           dim=1)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return sprites.compose(self.slot_images(z), self.composition,
                               self.sharpness)


class Monolithic(nn.Module):
    """One decoder from all 10 latents ``[B, 2, 5]`` to the scene ``[B, 3, H, W]``."""

    def __init__(self, s: SpriteSettings):
        super().__init__()
        self.net = decoder(sprites.SLOTS * sprites.LATENTS, 3, s.size, s.mono_hidden, s.mono_channels,
                           s.decoder)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z.flatten(1))


def build(s: SpriteSettings, row: str) -> nn.Module:
    """The untrained model of a row."""
    check_choice("row", row, tuple(ROWS))
    _, _, model, composition, sharpness = ROWS[row]
    if model == "monolithic":
        return Monolithic(s)
    return Compositional(s, composition, sharpness, shared=model == "shared")


# ---------------------------------------------------------------- data and measures

def data(s: SpriteSettings, row: str, n: int, split: str, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` scenes of a row: scaled latents ``[n, 2, 5]`` and images ``[n, 3, size, size]``.
    ``split``: ``"train"`` or ``"in-domain"`` (from the row's support), ``"whole"`` (uniform on
    the cube)."""
    check_choice("split", split, ("train", "in-domain", "whole"))
    support, delta, _, composition, sharpness = ROWS[row]
    g = torch.Generator().manual_seed(1_000 * seed + ("train", "in-domain", "whole").index(split))
    if split == "whole":
        support, delta = "random", None
    z = sprites.sample_support(support, n, g, delta=delta)
    return sprites.scale_latents(z), sprites.scenes(z, s.size, composition, sharpness)


def r2_score(x: torch.Tensor, x_hat: torch.Tensor) -> float:
    """Variance-weighted R^2 over all outputs (pixels x channels) of ``x, x_hat [N, ...]``:
    ``1 - sum of squared errors / sum over outputs of the variance of x`` (torchmetrics'
    ``multioutput="variance_weighted"``, here over the whole set at once)."""
    x, x_hat = x.flatten(1).double(), x_hat.flatten(1).double()
    return float(1 - ((x - x_hat) ** 2).sum() / ((x - x.mean(0)) ** 2).sum())


@torch.no_grad()
def predict(model: nn.Module, z: torch.Tensor, batch: int = 500) -> torch.Tensor:
    model.eval()
    out = torch.cat([model(z[i:i + batch]) for i in range(0, len(z), batch)])
    model.train()
    return out


def slice_latents(size: int = SLICE) -> torch.Tensor:
    """The error map's scenes: slot-0 x against slot-1 x on a ``size x size`` grid, every other
    latent of both slots at 0.5 (a square, mid-size, mid-hue): ``[size * size, 2, 5]``
    (unscaled), row-major with slot-1 x varying slowest."""
    t = torch.linspace(0, 1, size)
    x1, x0 = torch.meshgrid(t, t, indexing="ij")
    z = torch.full((size * size, sprites.SLOTS, sprites.LATENTS), 0.5)
    z[:, 0, 0], z[:, 1, 0] = x0.reshape(-1), x1.reshape(-1)
    return z


def eval_epochs(epochs: int, points: int) -> list[int]:
    """About ``points`` log-spaced epochs in 1..``epochs``, the last included."""
    return sorted({int(round(e)) for e in np.geomspace(1, epochs, points)} | {epochs})


# ---------------------------------------------------------------- training

def train(model: nn.Module, z: torch.Tensor, x: torch.Tensor,
          s: SpriteSettings, seed: int, on_epoch=None,
          desc: str = "train") -> nn.Module:
    """The paper's training: MSE, AdamW, learning rate annealed from ``lr`` to ``lr_min`` on a
    cosine over ``epochs`` passes of the fixed set ``z [n, 2, 5] -> x [n, 3, H, W]`` in shuffled
    batches. ``on_epoch(epoch)`` runs after each epoch. Trains ``model`` in place."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=s.lr,
                            weight_decay=s.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(
        opt, T_max=s.epochs, eta_min=s.lr_min)
    for epoch in bar(range(1, s.epochs + 1), desc):
        for idx in torch.randperm(len(z), generator=g).split(s.batch):
            loss = nn.functional.mse_loss(model(z[idx]), x[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        schedule.step()
        if on_epoch is not None:
            on_epoch(epoch)
    return model


def estimate_seconds(s: SpriteSettings, row: str, device: torch.device, steps: int = 3) -> float:
    """The training time of a row's seeds, from timing ``steps`` updates (after one to warm up)
    on random data: printed before a row is computed, so that a run at the paper's scale says
    what it will cost before it starts."""
    import time

    model = build(s, row).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=s.lr)
    z = torch.rand(s.batch, sprites.SLOTS, sprites.LATENTS, device=device)
    x = torch.rand(s.batch, 3, s.size, s.size, device=device)
    for i in range(steps + 1):
        if i == 1:
            start = time.perf_counter()
        loss = nn.functional.mse_loss(model(z), x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    per_step = (time.perf_counter() - start) / steps
    return per_step * math.ceil(s.n_train / s.batch) * s.epochs * s.seeds


def run_row(s: SpriteSettings, row: str, device: torch.device) -> tuple[dict, dict]:
    """Train a row's seeds; returns ``(metrics, arrays)``.

    Arrays (S seeds, E evaluation epochs, R shown scenes): ``eval_epochs [E]``; ``r2_in``,
    ``r2_whole`` ``[S, E]``; ``slice_mse [S, SLICE, SLICE]`` (per-scene MSE over the error
    map, row = slot-1 x); ``shown_z [R, 2, 5]``, ``shown_true``, ``shown_pred`` ``[R, 3, H, W]``
    (seed 0 on unseen whole-cube scenes, uint8), ``shown_slots [R, 2, C, H, W]`` (its slot
    images; compositional rows only); ``train_z [200, 2, 5]`` (training latents, for plots).
    """
    minutes = estimate_seconds(s, row, device) / 60
    print(f"{row}: {s.seeds} seed(s), about {minutes:.0f} min of training on {describe(device)}")
    z_tr, x_tr = (t.to(device) for t in data(s, row, s.n_train, "train", 0))
    z_in, x_in = (t.to(device) for t in data(s, row, s.n_eval, "in-domain", 0))
    z_wh, x_wh = (t.to(device) for t in data(s, row, s.n_eval, "whole", 0))
    z_sl = sprites.scale_latents(slice_latents()).to(device)
    x_sl = sprites.scenes(slice_latents(), s.size, *ROWS[row][3:]).to(device)
    when = eval_epochs(s.epochs, s.evals)
    r2_in, r2_whole, slice_mse, shown = [], [], [], {}
    for seed in range(s.seeds):
        torch.manual_seed(seed)
        model = build(s, row).to(device)
        curve_in, curve_whole = [], []

        def measure(epoch):
            if epoch in when:
                curve_in.append(r2_score(x_in, predict(model, z_in)))
                curve_whole.append(r2_score(x_wh, predict(model, z_wh)))

        train(model, z_tr, x_tr, s, seed, measure, desc=f"{row} seed {seed}")
        r2_in.append(curve_in), r2_whole.append(curve_whole)
        err = ((predict(model, z_sl) - x_sl) ** 2).flatten(1).mean(1)
        slice_mse.append(err.reshape(SLICE, SLICE).cpu().numpy())
        if seed == 0:
            shown = {"shown_z": z_wh[:8].cpu().numpy(), "shown_true": x_wh[:8],
                     "shown_pred": predict(model, z_wh[:8])}
            if isinstance(model, Compositional):
                with torch.no_grad():
                    shown["shown_slots"] = model.slot_images(z_wh[:8])
    as_bytes = {k: (v.clamp(0, 1) * 255).round().to(torch.uint8).cpu().numpy()
                for k, v in shown.items() if k != "shown_z"}
    arrays = {"eval_epochs": np.array(when), "r2_in": np.array(r2_in), "r2_whole": np.array(r2_whole),
              "slice_mse": np.array(slice_mse), "shown_z": shown["shown_z"], **as_bytes,
              "train_z": z_tr[:200].cpu().numpy()}
    final_in, final_whole = arrays["r2_in"][:, -1], arrays["r2_whole"][:, -1]
    metrics = {"row": row, "r2_in_mean": float(final_in.mean()), "r2_in_std": float(final_in.std()),
               "r2_whole_mean": float(final_whole.mean()), "r2_whole_std": float(final_whole.std())}
    return metrics, arrays


class SpriteRuns:
    """The stored rows of one profile, with look-ups and a table."""

    def __init__(self, s: SpriteSettings, rows: dict[str, results.Result], profile: str):
        self.settings, self.rows, self.profile = s, rows, profile

    @property
    def provenance(self) -> str:
        """Profile, device(s) and seeds of every row, for figure captions (:meth:`provenance_of`)."""
        return self.provenance_of(list(self.rows))

    def provenance_of(self, rows: list[str]) -> str:
        """Profile, device(s) and seeds of ``rows``, for a caption: ``"profile full · CPU (1 thread)
        · 5 seeds (0-4) each"``, or, where the rows differ, which seeds how many rows count:
        ``"seeds 0-4 in 7 rows, seeds 0-2 in 7 rows"``."""
        found = [self.rows[row] for row in rows]
        head = results.provenance(found).rsplit(" · ", 1)[0]  # profile · device(s)
        each = [len(r.arrays["r2_in"]) for r in found]
        counts = sorted(set(each), reverse=True)
        if len(counts) > 1:
            return f"{head} · " + ", ".join(
                f"{'seed 0' if n == 1 else f'seeds 0-{n - 1}'} in {each.count(n)} row{'s' * (each.count(n) > 1)}"
                for n in counts)
        n = counts[0]
        seeds = "seed 0" if n == 1 else f"{n} seeds (0-{n - 1})"
        return f"{head} · {seeds}" + (" each" if len(found) > 1 else "")

    def arrays(self, row: str) -> dict:
        if row not in self.rows:
            raise ValueError(f"row {row!r} is not in this run; choose from {list(self.rows)}")
        return self.rows[row].arrays

    def table(self):
        """One line per row: support, model, composition, R^2 in-domain and on the whole cube
        (mean and standard deviation over seeds), as a ``pandas.DataFrame``."""
        import pandas as pd

        lines = []
        for row, res in self.rows.items():
            support, delta, model, composition, sharpness = ROWS[row]
            m = res.metrics
            lines.append({"row": row, "support": support + (f" δ={delta}" if delta else ""),
                          "model": model, "C": composition if composition == "alpha" else
                          f"soft, k={sharpness:g}", "R² in-domain": m["r2_in_mean"],
                          "± in": m["r2_in_std"], "R² whole": m["r2_whole_mean"],
                          "± whole": m["r2_whole_std"]})
        return pd.DataFrame(lines)


def _row_config(s: SpriteSettings, row: str) -> dict:
    cfg = asdict(s)
    cfg.pop("rows")
    cfg["row"] = list(ROWS[row])
    return cfg


def run(profile: str, device: torch.device, *, s: SpriteSettings | None = None,
        rows: tuple[str, ...] | None = None) -> SpriteRuns:
    """Load (or compute and store) every row of ``s.rows`` (or ``rows``) at ``profile``."""
    s = s or settings(profile)
    out = {}
    for row in rows or s.rows:
        check_choice("row", row, tuple(ROWS))
        out[row] = results.fetch(CHAPTER, row, _row_config(s, row),
                                 lambda r=row: run_row(s, r, device),
                                 profile=profile, device=describe(device), code=run_row)
    return SpriteRuns(s, out, profile)
