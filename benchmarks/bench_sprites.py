"""Chapter 2's renderer against a simple per-image one, and the chapter's wall time per profile.

    python benchmarks/bench_sprites.py [--images 2000] [--sizes 16 64] [--threads 1] [--no-profiles]

1. Images per second of `modlib.data.sprites.scenes` (one batched torch computation for all images) and of
   a simple per-image renderer that draws each sprite as a polygon with PIL, one scene at a time
   (two sprites, composed with the same soft occlusion in numpy), side by side in one run at each
   size, and their ratio. The PIL renderer is the kind the authors used (Spriteworld draws with
   PIL); it is not anti-aliased, so the two do not draw identical pixels.
2. The chapter's wall time per profile: `smoke` and `default` run here, in a temporary results
   store (`compositional_sprites.run`, training and evaluation, no notebook); `full` is the sum of
   the stored results' own wall times; `paper` is estimated from timed steps
   (`compositional_sprites.estimate_seconds`), one row, training only.

Measured here (2026-11-24, this project's 2-core CPU machine, torch 2.13, 1 thread, the other core
idle but for one single-threaded training job), 2,000 scenes:

     size    batched torch   PIL, per image   ratio  |difference|
       16      108,072/s        2,018/s   53.6x 0.015 of 0.017
       64        1,432/s        1,525/s    0.9x 0.004 of 0.017

    smoke: 2 s;  default: 102 s;  full: 136 min, the sum of 14 stored rows (8-12 min each);
    paper: about 4,790 h for one row (5 seeds), 11 rows in the paper's table (estimated)

At 16 x 16 pixels the per-image Python work dominates and the batched renderer is some 50 times
faster; at 64 x 64 the per-pixel work dominates, and the batched renderer, which evaluates all
three shapes' distances at every pixel of every sprite, is no faster than PIL's C rasteriser on
one thread. (`|difference|`: mean absolute pixel difference between the two, beside the mean pixel
value; PIL draws hard edges, this renderer anti-aliased ones.)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw

from modlib import compositional_sprites as cs
from modlib import results
from modlib.data import sprites


def pil_scene(z: np.ndarray, size: int) -> np.ndarray:
    """One scene ``z [2, 5]`` (latents in [0, 1]) drawn sprite by sprite with PIL and composed with
    soft occlusion (k = 1): ``[3, size, size]`` floats."""
    layers = []
    for x, y, shape, scale, hue in sprites.scale_latents(torch.from_numpy(z)).numpy():
        img = Image.new("RGB", (size, size))
        rgb = tuple(int(255 * c) for c in sprites.hsv_to_rgb(torch.tensor([hue]))[0])
        cx, cy = x * size, (1 - y) * size
        if shape == 2:  # circle of area scale^2
            r = scale / math.sqrt(math.pi) * size
            ImageDraw.Draw(img).ellipse([cx - r, cy - r, cx + r, cy + r], fill=rgb)
        else:  # triangle (3 vertices) or square (4), area scale^2
            n = 3 if shape == 0 else 4
            start = math.pi / 2 if n == 3 else math.pi / 4
            radius = scale * size / math.sqrt(n * math.sin(2 * math.pi / n) / 2)
            points = [(cx + radius * math.cos(start + 2 * math.pi * i / n),
                       cy - radius * math.sin(start + 2 * math.pi * i / n)) for i in range(n)]
            ImageDraw.Draw(img).polygon(points, fill=rgb)
        layers.append(np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255)
    top, lower = layers
    weight = 1 / (1 + np.exp(-top.sum(0, keepdims=True)))
    return top * weight + lower * (1 - weight)


def images_per_second(render, repeats: int = 3) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        n = render()
        best = min(best, time.perf_counter() - start)
    return n / best


def profile_times() -> list[tuple[str, str]]:
    """(profile, wall time) for smoke and default (run now), full (stored) and paper (estimated)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ[results.ROOT_ENV] = tmp
        for profile in ("smoke", "default"):
            start = time.perf_counter()
            cs.run(profile, torch.device("cpu"))
            rows.append((profile, f"{time.perf_counter() - start:.0f} s"))
        del os.environ[results.ROOT_ENV]
    stored = Path(results.default_root()) / "full" / cs.CHAPTER
    times = [json.loads(p.read_text())["wall_time_s"] for p in sorted(stored.glob("*.json"))]
    rows.append(("full", f"{sum(times) / 60:.0f} min, the sum of {len(times)} of {len(cs.ROWS)} "
                         f"stored rows ({min(times) / 60:.0f}-{max(times) / 60:.0f} min each)"
                 if times else "no stored rows"))
    paper = cs.settings("paper")
    hours = cs.estimate_seconds(paper, "orthogonal", torch.device("cpu")) / 3600
    rows.append(("paper", f"about {hours:,.0f} h for one row ({paper.seeds} seeds), "
                          f"{len(cs.PAPER_R2)} rows in the paper's table (estimated)"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-profiles", action="store_true", help="skip the chapter's wall times")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    z = sprites.sample_support("random", args.images, torch.Generator().manual_seed(0))
    print(f"{args.images} random scenes, {args.threads} thread(s)\n")
    print(f"{'size':>5} {'batched torch':>16} {'PIL, per image':>16} {'ratio':>7} {'|difference|':>13}")
    for size in args.sizes:
        batched = images_per_second(lambda: len(sprites.scenes(z, size)))
        per_image = images_per_second(lambda: len([pil_scene(s, size) for s in z.numpy()]))
        # the same scenes? mean absolute pixel difference, against the mean pixel value
        ours = sprites.scenes(z[:100], size).numpy()
        theirs = np.stack([pil_scene(s, size) for s in z[:100].numpy()])
        diff = f"{np.abs(ours - theirs).mean():.3f} of {ours.mean():.3f}"
        print(f"{size:>5} {batched:>12,.0f}/s {per_image:>12,.0f}/s {batched / per_image:>6.1f}x {diff:>13}")
    if not args.no_profiles:
        print("\nthe chapter's wall time (compositional_sprites.run, no notebook)")
        for profile, text in profile_times():
            print(f"{profile:>8}: {text}")


if __name__ == "__main__":
    main()
