"""Masking overhead: training steps per second, plain training vs mask training, side by side.

    python benchmarks/bench_masks.py [--steps 20] [--block 5] [--gpu-steps 2000] [--gpu-block 500] [--threads N]

Models: the FNN of chapter 4's full profile and the paper's 2000x4 FNN on the addition/multiplication
input (42 -> hidden -> 20, batch 128) and a small BERT built from a config (2 layers, hidden 128, batch 32, sequence 32). Plain training is
Adam on the weights; mask training is Adam on Gumbel-sigmoid mask logits (`modlib.masks`) with 4 mask
samples per batch (the batch split into 4 chunks), computed in one forward pass per sample
(`masks.sampled_loss`: any model) or in one batched pass for all four (`MaskSet.sampled_loss`: models
that `torch.func.vmap` handles). All run through `modlib.training.adam` (as the chapters train), on
separate copies of the model, in alternating blocks of `--block` steps, so that a change in the
machine's load hits all alike. CPU always, CUDA too when present. The overhead is plain steps/s over
the faster mask column.
"""

from __future__ import annotations

import argparse
import copy
import functools
import itertools
import os
import time

os.environ.setdefault("TQDM_DISABLE", "1")  # no progress bar per block

import torch
import torch.nn.functional as F
from torch import nn

from modlib import masks, training
from modlib import weight_masks as wm
from modlib.data import digits
from modlib.models import mlp
from modlib.runtime import describe


def fnn_case(hidden, device):
    """The add/multiply FNN of shape ``hidden``: inputs ``[128, 42]``, outputs ``[128, 20]`` (2 digits x 10 logits)."""
    x, y, _ = digits.arithmetic(128)
    return (mlp(42, list(hidden), 20), x.to(device), y.to(device),
            lambda out, target: F.cross_entropy(out.reshape(-1, 10), target.reshape(-1)))


class BertLogits(nn.Module):
    """A small BERT from a config (no download): token ids ``[32, 32]`` -> logits ``[32, 4]``."""

    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertForSequenceClassification

        config = BertConfig(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                            intermediate_size=512, max_position_embeddings=64, num_labels=4)
        self.bert = BertForSequenceClassification(config)

    def forward(self, ids):
        return self.bert(input_ids=ids).logits


def bert_case(device):
    g = torch.Generator().manual_seed(0)
    ids, y = torch.randint(1000, (32, 32), generator=g), torch.randint(4, (32,), generator=g)
    return BertLogits(), ids.to(device), y.to(device), F.cross_entropy


def measure(case, device, steps: int, block: int) -> dict[str, float | None]:
    """Steps per second of plain training and of mask training (per-sample passes, one batched pass)
    on ``case``, all through :func:`modlib.training.adam`, in alternating blocks of ``block`` steps;
    ``None`` for a kind the model cannot run."""
    torch.manual_seed(0)
    model, x, y, loss_fn = case(device)
    model = model.to(device)
    looped, batched = copy.deepcopy(model), copy.deepcopy(model)
    ms_loop, ms_one = masks.attach(looped, "gumbel"), masks.attach(batched, "gumbel")

    def plain(n):
        training.adam(lambda xb, yb: loss_fn(model(xb), yb), model.parameters(), itertools.repeat((x, y)),
                      steps=n, lr=1e-3)

    def masked(ms, sampled):  # mask training with one of the two sampled losses
        def run(n):
            training.adam(lambda xb, yb: sampled(loss_fn, xb, yb, samples=4) + ms.regularizer() / len(xb),
                          ms.parameters(), itertools.repeat((x, y)), steps=n, lr=1e-2, clip=1.0)
        return run

    kinds = {"plain": plain, "mask_loop": masked(ms_loop, functools.partial(masks.sampled_loss, looped)),
             "mask_one_pass": masked(ms_one, ms_one.sampled_loss)}
    seconds = {}
    for kind, run in kinds.items():  # warm-up
        try:
            run(min(block, 10))
            seconds[kind] = 0.0
        except RuntimeError as e:  # e.g. a model that vmap cannot batch
            print(f"  {kind} on {describe(device)}: {str(e).splitlines()[0][:100]}", flush=True)
    for done in range(0, steps, block):
        for kind in seconds:
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            kinds[kind](min(block, steps - done))
            if device.type == "cuda":
                torch.cuda.synchronize()
            seconds[kind] += time.perf_counter() - start
    return {kind: steps / seconds[kind] if kind in seconds else None for kind in kinds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="timed steps of each kind on the CPU")
    parser.add_argument("--block", type=int, default=5, help="steps of one kind in a row on the CPU")
    parser.add_argument("--gpu-steps", type=int, default=2000, help="timed steps of each kind on a GPU")
    parser.add_argument("--gpu-block", type=int, default=500, help="steps of one kind in a row on a GPU")
    parser.add_argument("--threads", type=int, help="CPU threads (default: torch's choice); use fewer "
                        "than the free cores, as a busy core slows every thread of a step")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    devices = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
    print(f"timed steps of each kind: {args.steps} on the CPU, {args.gpu_steps} on a GPU; torch {torch.__version__}")
    print(f"{'model':20s} {'device':32s} {'plain steps/s':>14s} {'mask, loop':>11s} {'mask, one pass':>15s} "
          f"{'overhead':>9s}")
    cases = {f"FNN {wm.shape_name(wm.settings(p).hidden)} ({p})":
             functools.partial(fnn_case, wm.settings(p).hidden) for p in ("full", "paper")}
    for name, case in {**cases, "BERT 2x128": bert_case}.items():
        for device in devices:
            gpu = device.type == "cuda"
            rates = measure(case, device, args.gpu_steps if gpu else args.steps, args.gpu_block if gpu else args.block)
            cells = [f"{r:{w}.2f}" if r else f"{'n/a':>{w}s}"
                     for r, w in zip(rates.values(), (14, 11, 15))]
            masked = max((r for k, r in rates.items() if k != "plain" and r), default=None)
            overhead = f"{rates['plain'] / masked:8.2f}x" if masked and rates["plain"] else f"{'n/a':>9s}"
            print(f"{name:20s} {describe(device):32s} {' '.join(cells)} {overhead}", flush=True)


if __name__ == "__main__":
    main()
