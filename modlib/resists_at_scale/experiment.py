"""Gradient descent resists compositionality, at scale (chapter 3, notebooks/resists_at_scale.ipynb;
Li et al., sections 5.1 and 5.2 and appendices A and B).

Two experiments, each in two settings that share the test set: in setting A a redundant input is
correlated with the answer in training, in setting B it is not, and B's training data also show
the test combinations (so the settings differ in coverage as well; the controls of
:mod:`modlib.resists_at_scale.controls` remove the correlation with the test still unseen):

- **MNIST pairs** (:mod:`modlib.data.digits`): a CNN reads two digits side by side and must name
  the left one. Setting A ties the right digit to the answer in training; setting B does not.
  Trained with the categorical hinge loss, a fresh batch every step, evaluated every step.
- **SCAN "jump"** (:mod:`modlib.data.scan`): a sequence-to-sequence LSTM with attention translates
  commands into actions. Setting A is the add-jump split ("jump" alone in training); setting B
  re-draws every action word of the training commands at random, so "jump" occurs in every
  context. Exact-match accuracy on training and test commands.

Each (experiment, setting) is one stored result (:func:`modlib.results.fetch`) holding all seeds'
accuracy curves. The defaults of :class:`ResistSettings` are the paper's. The two networks and their
training are in :mod:`modlib.resists_at_scale.networks`; this module holds the settings per
profile, the runs and what is stored.
"""

from __future__ import annotations

import time
from dataclasses import asdict

import numpy as np
import torch
from torch.nn import functional as F

from modlib import results
from modlib.data import digits, scan
from modlib.profiles import check_choice, settings_for
from modlib.resists_at_scale.controls import ControlSettings, result_names
from modlib.resists_at_scale.controls import fetch as fetch_control
from modlib.resists_at_scale.controls import settings as control_settings
from modlib.resists_at_scale.networks import (
    EXPERIMENTS,
    SETTING_NAMES,
    ResistSettings,
    Seq2Seq,
    categorical_hinge,
    digit_cnn,
    digit_pools,
    scan_eval_steps,
    train_digits,
    train_scan,
)
from modlib.runtime import describe
from modlib.training import bar

CHAPTER = "resists_at_scale"
RESULTS = tuple(f"{e}-{s}" for e in EXPERIMENTS for s in SETTING_NAMES)


PAPER = ResistSettings()
SETTINGS = {
    "smoke": PAPER.with_(seeds=1, mnist_steps=3, mnist_eval=16, mnist_final=32, scan_steps=3,
                         scan_batch=16, scan_eval=8, scan_dense=2, scan_every=2, scan_final=16,
                         embedding=8, encoder=8, decoder=16),
    # default (a reader's first run, at most 3 minutes of CPU: benchmarks/default_cpu.csv): 1 seed, SCAN
    # for 150 of its steps (past the early steps 10 to 25 the page reads, and far enough for setting A's
    # training accuracy to pass 0.8 while its test accuracy stays at 0; a SCAN step of batch 256 costs
    # about 0.2 s, two thirds of the page's time at 300), and half the evaluation pairs and commands
    # (evaluating is two thirds of an MNIST step's time)
    "default": PAPER.with_(seeds=1, scan_steps=150, scan_final=200, mnist_eval=50, mnist_final=500, scan_eval=50),
    # full: the paper's own settings; both experiments fit in the CPU budget
    "full": PAPER,
    "paper": PAPER,
}


def settings(profile: str | None = None) -> ResistSettings:
    return settings_for(SETTINGS, profile)


# ---------------------------------------------------------------- runs and the store


def estimate_seconds(
    s: ResistSettings,
    experiment: str,
    device: torch.device,
    steps: int = 3,
) -> float:
    """Training time of one setting's seeds, from timing ``steps`` updates after one to warm up
    (evaluations not counted): printed before a result is computed."""
    check_choice("experiment", experiment, EXPERIMENTS)
    if experiment == "mnist":
        model = digit_cnn().to(device)
        x, y = torch.rand(
            s.mnist_batch, 1, 28, 56, device=device
        ), torch.randint(0, 10, (s.mnist_batch,))
        loss_fn = lambda: categorical_hinge(model(x), y.to(device))  # noqa: E731
        total = s.mnist_steps
    else:
        model = Seq2Seq(len(scan.COMMAND_VOCAB), len(scan.ACTION_VOCAB),
                        s.embedding, s.encoder, s.decoder).to(device)
        src = torch.randint(
            3,
            len(scan.COMMAND_VOCAB),
            (s.scan_batch, scan.MAX_WORDS),
            device=device,
        )
        tgt = torch.randint(
            3,
            len(scan.ACTION_VOCAB),
            (s.scan_batch, scan.MAX_ACTIONS + 1),
            device=device,
        )
        loss_fn = lambda: F.cross_entropy(  # noqa: E731
            model(src, tgt).flatten(0, 1), tgt.flatten())
        total = s.scan_steps
    opt = torch.optim.Adam(model.parameters())
    for i in range(steps + 1):
        if i == 1:
            start = time.perf_counter()
        loss = loss_fn()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return (time.perf_counter() - start) / steps * total * s.seeds


def run_one(
    s: ResistSettings, name: str, device: torch.device
) -> tuple[dict, dict]:
    """Train every seed of one result, e.g. ``"mnist-A"``; returns ``(metrics, arrays)``: each
    array of :func:`train_digits` or :func:`train_scan` stacked over seeds (``[S, ...]``), plus
    ``eval_steps``."""
    check_choice("result", name, RESULTS)
    experiment, setting = name.split("-")
    minutes = estimate_seconds(s, experiment, device) / 60
    print(
        f"{name}: {s.seeds} seed(s), about {minutes:.0f} min of training on {describe(device)}"
    )
    if experiment == "mnist":
        pools, source = digit_pools()
        runs = [
            train_digits(s, setting, seed, pools, device)
            for seed in bar(range(s.seeds), name)
        ]
        steps = np.arange(s.mnist_steps + 1)
    else:
        source = "SCAN add-jump, generated from its grammar (modlib.scan)"
        runs = [
            train_scan(s, setting, seed, device) for seed in range(s.seeds)
        ]
        steps = np.array(scan_eval_steps(s))
    arrays = {k: np.stack([r[k] for r in runs]) for k in runs[0]}
    arrays["eval_steps"] = steps
    metrics = {
        "result": name,
        "data": source,
        **{
            f"{k}_mean": float(arrays[k].mean())
            for k in arrays
            if k.startswith("final_")
        },
    }
    return metrics, arrays


class ResistRuns:
    """The stored results of one profile: ``rows[name]`` for ``name`` in :data:`RESULTS` and, where
    fetched, the control results (:mod:`modlib.resists_at_scale.controls`, their settings
    ``controls``); ``missing`` names the control results a build that only reads stored results
    did not find, with why."""

    def __init__(
        self,
        s: ResistSettings,
        rows: dict[str, results.Result],
        profile: str,
        controls: ControlSettings | None = None,
        missing: dict[str, str] | None = None,
    ):
        self.settings, self.rows, self.profile = s, rows, profile
        self.controls, self.missing = controls, dict(missing or {})

    def arrays(self, name: str) -> dict:
        if name not in self.rows:
            raise ValueError(
                f"result {name!r} is not in this run; choose from {list(self.rows)}"
            )
        return self.rows[name].arrays

    def has(self, *names: str) -> bool:
        """Whether every one of ``names`` is in this run."""
        return all(n in self.rows for n in names)


def result_config(s: ResistSettings, name: str) -> dict:
    cfg = asdict(s)
    cfg.pop("experiments")
    keep = "mnist_" if name.startswith("mnist") else "scan_"
    cfg = {
        k: v
        for k, v in cfg.items()
        if not k.startswith(("mnist_", "scan_")) or k.startswith(keep)
    }
    if name.startswith("mnist"):
        for k in ("embedding", "encoder", "decoder"):
            cfg.pop(k)
        cfg["data"] = digits.mnist_source()  # the digits it learns from (modlib.results.asked)
    cfg["result"] = name
    return cfg


def run(
    profile: str,
    device: torch.device,
    *,
    s: ResistSettings | None = None,
    c: ControlSettings | None = None,
    controls: bool = True,
) -> ResistRuns:
    """Load (or compute and store) every result of ``s.experiments`` at ``profile`` and, with
    ``controls``, every control result of ``c`` (:func:`modlib.resists_at_scale.controls.result_names`)
    of those experiments. Where only stored results may be read (a book build from the store), a
    control result not stored yet is left out and named in ``missing``, so that the page shows
    the rest."""
    s = s or settings(profile)
    out = {}
    for name in RESULTS:
        if name.split("-")[0] in s.experiments:
            out[name] = results.fetch(
                CHAPTER,
                name,
                result_config(s, name),
                lambda n=name: run_one(s, n, device),
                profile=profile,
                device=describe(device),
                code=run_one,
                sources={"data": digits.available_sources()},
            )
    c = c or control_settings(profile)
    missing = {}
    for name in result_names(c) if controls else []:
        if name.split("-")[0] not in s.experiments:
            continue
        try:
            out[name] = fetch_control(c, name, profile, device)
        except results.StaleResultError as err:
            if not results.from_store_only(profile):
                raise
            missing[name] = str(err)
    return ResistRuns(s, out, profile, c, missing)
