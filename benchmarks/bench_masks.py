"""Masking overhead: training steps per second, plain training vs mask training, side by side.

    python benchmarks/bench_masks.py [--steps 10] [--warmup 2]

Models: the paper's 2000x4 FNN on the addition/multiplication input (42 -> 2000 x4 -> 20, batch 128)
and a small BERT built from a config (2 layers, hidden 128, batch 32, sequence 32). Plain training is
Adam on the weights; mask training is Adam on Gumbel-sigmoid mask logits with 4 mask samples per
batch (the batch split into 4 chunks). CPU always, CUDA too when present.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F
from torch import nn

from modlib import data, masks
from modlib.models import mlp
from modlib.runtime import describe


def fnn_case(device):
    model = mlp(42, [2000] * 4, 20).to(device)
    x, y, _ = data.arithmetic(128)
    x, y = x.to(device), y.to(device)
    return model, x, lambda out, target: F.cross_entropy(out.reshape(-1, 10), target.reshape(-1)), y


def bert_case(device):
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=512, max_position_embeddings=64, num_labels=4)
    bert = BertForSequenceClassification(config).to(device)

    class Logits(nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, ids):
            return self.bert(input_ids=ids).logits

    ids = torch.randint(1000, (32, 32), device=device)
    return Logits(), ids, F.cross_entropy, torch.randint(4, (32,), device=device)


def steps_per_second(step, steps: int, warmup: int, device) -> float:
    for _ in range(warmup):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps / (time.perf_counter() - start)


def measure(case, device, steps: int, warmup: int) -> tuple[float, float]:
    model, x, loss_fn, y = case(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def plain():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    plain_rate = steps_per_second(plain, steps, warmup, device)
    ms = masks.attach(model, "gumbel")
    mask_opt = torch.optim.Adam(ms.parameters(), lr=1e-2)

    def masked():
        mask_opt.zero_grad()
        loss = sum(loss_fn(model(xc), yc) for xc, yc in zip(x.chunk(4), y.chunk(4))) / 4
        (loss + ms.regularizer() / len(x)).backward()
        mask_opt.step()

    return plain_rate, steps_per_second(masked, steps, warmup, device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    devices = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
    print(f"{'model':16s} {'device':28s} {'plain steps/s':>14s} {'mask steps/s':>13s} {'overhead':>9s}")
    for name, case in (("FNN 2000x4", fnn_case), ("BERT 2x128", bert_case)):
        for device in devices:
            plain, masked = measure(case, device, args.steps, args.warmup)
            print(f"{name:16s} {describe(device):28s} {plain:14.1f} {masked:13.1f} {plain / masked:8.2f}x")


if __name__ == "__main__":
    main()
