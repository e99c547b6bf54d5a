"""The two networks of chapter 3 (notebooks/resists_at_scale.ipynb; Li et al., sections 5.1 and 5.2
and appendices A and B), everything that decides their runs (:class:`ResistSettings`, whose
defaults are the paper's), and how each is trained and evaluated: the paper's CNN on MNIST pairs
(:mod:`modlib.data.digits`), trained with the categorical hinge loss, and the sequence-to-sequence
LSTM with attention on SCAN (:mod:`modlib.data.scan`). The settings per profile and the stored
runs are in :mod:`modlib.resists_at_scale.experiment`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from modlib import profiles
from modlib.data import digits, scan
from modlib.profiles import check_choice, check_int, check_range
from modlib.training import bar

EXPERIMENTS = ("mnist", "scan")
SETTING_NAMES = (
    digits.SETTING_NAMES
)  # "A": the redundant input correlated in training; "B": not
SHOWN = 8  # test examples whose predictions each seed stores (the same for every seed and setting)


@profiles.settings
class ResistSettings:
    """Everything that decides a run; the defaults are the paper's. Validated on construction."""

    seeds: int = 5
    # MNIST pairs (appendix A)
    mnist_steps: int = 200
    mnist_batch: int = 64
    mnist_lr: float = 1e-3
    mnist_eval: int = (
        100  # pairs per evaluation, from each distribution, fresh every step
    )
    mnist_final: int = (
        1_000  # pairs for the final accuracies and the swap test
    )
    # SCAN add-jump (appendix B)
    scan_steps: int = 2_000
    scan_batch: int = 256  # commands drawn with replacement every step
    scan_lr: float = 0.01
    scan_decay: float = (
        0.96  # the learning rate is multiplied by this every 100 steps
    )
    scan_clip: float = 1.0  # gradient norm clipping
    scan_eval: int = (
        100  # commands per evaluation, from train and from test, fresh each time
    )
    scan_dense: int = (
        50  # evaluate every step up to this one, then every ``scan_every``
    )
    scan_every: int = 25
    scan_final: int = 1_000  # commands for the final accuracies
    embedding: int = 32
    encoder: int = (
        32  # per direction (the authors' code; the paper's text says 16)
    )
    decoder: int = 64
    experiments: tuple[str, ...] = EXPERIMENTS

    def __post_init__(self):
        for name in (
            "seeds",
            "mnist_steps",
            "mnist_batch",
            "mnist_eval",
            "mnist_final",
            "scan_steps",
            "scan_batch",
            "scan_eval",
            "scan_dense",
            "scan_every",
            "scan_final",
            "embedding",
            "encoder",
            "decoder",
        ):
            check_int(name, getattr(self, name), 1)
        for name in ("mnist_lr", "scan_lr"):
            check_range(name, getattr(self, name), 0.0, 1.0, open_low=True)
        check_range("scan_decay", self.scan_decay, 0.0, 1.0, open_low=True)
        check_range("scan_clip", self.scan_clip, 0.0, 1e6, open_low=True)
        for e in self.experiments:
            check_choice("experiments", e, EXPERIMENTS)




# ---------------------------------------------------------------- MNIST pairs


def digit_cnn() -> nn.Sequential:
    """The paper's CNN: pairs ``[B, 1, 28, 56]`` to 10 scores ``[B, 10]`` (no activation)."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),  # [B, 32, 13, 27]
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.Flatten(),  # [B, 64 * 11 * 25]
        nn.Linear(64 * 11 * 25, 64),
        nn.ReLU(),
        nn.Linear(64, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def categorical_hinge(
    scores: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    """Keras's categorical hinge loss, averaged: ``max(0, 1 + neg - pos)`` with ``pos`` the true
    class's score and ``neg`` the largest of the other scores and 0. ``scores [B, 10]``, ``y [B]``.
    """
    true = F.one_hot(y, scores.shape[1]).to(scores.dtype)
    pos = (true * scores).sum(1)
    neg = ((1 - true) * scores).amax(1)
    return (neg - pos + 1).clamp_min(0).mean()


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    return (model(x).argmax(1) == y).float().mean().item()


def train_digits(
    s: ResistSettings,
    setting: str,
    seed: int,
    pools: dict[str, digits.DigitPairs],
    device: torch.device,
) -> dict[str, np.ndarray]:
    """One CNN in one setting: Adam on a fresh batch of training pairs every step; accuracy on
    fresh training-distribution and test pairs before the first step and after each. Returns
    ``acc_train``, ``acc_test``, ``acc_swapped`` ``[steps + 1]`` (``acc_swapped``: the same
    training-distribution pairs as ``acc_train`` with each right digit replaced by a random one)
    and, on ``mnist_final`` pairs each after training, ``final_train``, ``final_test`` and
    ``swapped``."""
    g = torch.Generator().manual_seed(seed)  # the pairs drawn
    torch.manual_seed(seed)  # the weights
    model = digit_cnn().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=s.mnist_lr)
    train, test = pools["train"], pools["test"]

    def draw(pool, n, split):
        x, y, _ = pool.sample(n, setting, split, g)
        return x.to(device), y.to(device)

    curves = {"acc_train": [], "acc_test": [], "acc_swapped": []}

    def evaluate():
        x, y = draw(train, s.mnist_eval, "train")
        curves["acc_train"].append(accuracy(model, x, y))
        curves["acc_swapped"].append(
            accuracy(model, train.swap_right(x.cpu(), g).to(device), y)
        )
        curves["acc_test"].append(
            accuracy(model, *draw(test, s.mnist_eval, "test"))
        )

    evaluate()
    for _ in range(s.mnist_steps):
        x, y = draw(train, s.mnist_batch, "train")
        loss = categorical_hinge(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        evaluate()
    x, y = draw(train, s.mnist_final, "train")
    out = {k: np.array(v) for k, v in curves.items()}
    out["final_train"] = np.array(accuracy(model, x, y))
    out["final_test"] = np.array(
        accuracy(model, *draw(test, s.mnist_final, "test"))
    )
    out["swapped"] = np.array(
        accuracy(model, train.swap_right(x.cpu(), g).to(device), y)
    )
    shown, _, _ = test.sample(
        SHOWN, setting, "test", torch.Generator().manual_seed(0)
    )
    with torch.no_grad():
        out["shown_pred"] = model(shown.to(device)).argmax(1).cpu().numpy()
    return out


def digit_pools(
    quiet: bool = True,
) -> tuple[dict[str, digits.DigitPairs], str]:
    """The digits the pairs are drawn from: train pairs from MNIST's train split, test pairs from
    its test split (:func:`modlib.data.digits.mnist`), and a line naming the source.
    """
    pools, sources = {}, []
    for split in ("train", "test"):
        x, y, source = digits.mnist(split, quiet=quiet)
        pools[split] = digits.DigitPairs(x, y)
        sources.append(source)
    return pools, "; ".join(sources)


# ---------------------------------------------------------------- SCAN


class Seq2Seq(nn.Module):
    """Embedding, a bidirectional LSTM encoder and an LSTM decoder with Luong ("general")
    attention. The decoder starts from the encoder's two final states (forward, and backward
    at the first word) concatenated, so ``decoder = 2 * encoder``."""

    def __init__(
        self,
        n_words: int,
        n_actions: int,
        embedding: int,
        encoder: int,
        decoder: int,
    ):
        super().__init__()
        if decoder != 2 * encoder:
            raise ValueError(
                f"decoder={decoder} must be 2 * encoder={2 * encoder}: its first state "
                "is the encoder's two final states concatenated"
            )
        self.words = nn.Embedding(
            n_words, embedding, padding_idx=scan.Vocab.PAD
        )
        self.encoder = nn.LSTM(
            embedding, encoder, batch_first=True, bidirectional=True
        )
        self.actions = nn.Embedding(
            n_actions, embedding, padding_idx=scan.Vocab.PAD
        )
        self.cell = nn.LSTMCell(embedding, decoder)
        self.score = nn.Linear(
            2 * encoder, decoder, bias=False
        )  # h_t^T W a_s
        self.combine = nn.Linear(decoder + 2 * encoder, decoder)
        self.out = nn.Linear(decoder, n_actions)

    def encode(self, src: torch.Tensor):
        """``src [B, S]`` (padded with ``scan.Vocab.PAD``) to states ``[B, S, 2E]``, their mask
        ``[B, S]`` and the decoder's first state ``(h, c)``, each ``[B, 2E]``.
        """
        mask = src != scan.Vocab.PAD
        lengths = mask.sum(1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(
            self.words(src),
            lengths,
            batch_first=True,
            enforce_sorted=False,
        )
        states, (h, c) = self.encoder(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(
            states, batch_first=True, total_length=src.shape[1]
        )
        return (
            states,
            mask,
            (torch.cat([h[0], h[1]], 1), torch.cat([c[0], c[1]], 1)),
        )

    def step(
        self,
        prev: torch.Tensor,
        state,
        states: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor,
    ):
        """One decoder step from the previous actions ``prev [B]``: scores ``[B, A]``, the new
        state and the attention weights ``[B, S]``."""
        h, c = self.cell(self.actions(prev), state)
        logits = torch.einsum("bsd,bd->bs", keys, h).masked_fill(
            ~mask, float("-inf")
        )
        weights = logits.softmax(1)
        context = torch.einsum("bs,bse->be", weights, states)
        out = self.out(
            torch.tanh(self.combine(torch.cat([h, context], 1)))
        )
        return out, (h, c), weights

    def forward(
        self, src: torch.Tensor, tgt_in: torch.Tensor
    ) -> torch.Tensor:
        """Teacher forcing: ``tgt_in [B, T]`` (SOS, then the gold actions) to scores
        ``[B, T, A]``."""
        states, mask, state = self.encode(src)
        keys = self.score(states)
        outs = []
        for t in range(tgt_in.shape[1]):
            out, state, _ = self.step(
                tgt_in[:, t], state, states, keys, mask
            )
            outs.append(out)
        return torch.stack(outs, 1)

    @torch.no_grad()
    def greedy(
        self, src: torch.Tensor, max_len: int = scan.MAX_ACTIONS + 1
    ):
        """Greedy decoding: actions ``[B, max_len]`` (EOS then PAD after the end) and attention
        ``[B, max_len, S]``."""
        states, mask, state = self.encode(src)
        keys = self.score(states)
        prev = torch.full(
            (len(src),),
            scan.Vocab.SOS,
            dtype=torch.long,
            device=src.device,
        )
        done = torch.zeros(len(src), dtype=torch.bool, device=src.device)
        seq, attention = [], []
        for _ in range(max_len):
            out, state, weights = self.step(
                prev, state, states, keys, mask
            )
            prev = out.argmax(1).masked_fill(done, scan.Vocab.PAD)
            done |= prev == scan.Vocab.EOS
            seq.append(prev)
            attention.append(weights)
            if done.all():
                break
        return torch.stack(seq, 1), torch.stack(attention, 1)


def exact_match(
    model: Seq2Seq, src: torch.Tensor, tgt_out: torch.Tensor
) -> torch.Tensor:
    """Whether each greedy translation equals the truth ``tgt_out [B, T]`` (actions, EOS, PAD):
    ``[B]`` bool."""
    pred, _ = model.greedy(src, tgt_out.shape[1])
    pred = F.pad(
        pred, (0, tgt_out.shape[1] - pred.shape[1]), value=scan.Vocab.PAD
    )
    return (pred == tgt_out).all(1)


def scan_eval_steps(s: ResistSettings) -> list[int]:
    """The steps after which SCAN accuracy is measured (0: before training)."""
    dense = list(range(0, min(s.scan_dense, s.scan_steps) + 1))
    return dense + list(
        range(dense[-1] + s.scan_every, s.scan_steps + 1, s.scan_every)
    )


def scan_pairs(
    setting: str, seed: int
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The add-jump split's ``(command, actions)`` pairs for training and for test. Setting B
    re-draws the training commands' action words (``seed``'s draw); the test set is the same.
    """
    check_choice("setting", setting, SETTING_NAMES)
    train, test = scan.split("add-jump")
    if setting == "B":
        train = scan.redraw_actions(
            [c for c, _ in train], torch.Generator().manual_seed(seed)
        )
    return train, test


def encoded(
    pairs: list[tuple[str, str]],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(src [N, 9], tgt_in [N, 49], tgt_out [N, 49])``: the words, then SOS and the actions
    (the decoder's inputs under teacher forcing), then the actions and EOS (its targets).
    """
    src, tgt = scan.encode(
        pairs
    )  # [N, 9], [N, 50]: SOS, actions, EOS, padding
    return src, tgt[:, :-1], tgt[:, 1:]


def scan_data(
    setting: str, seed: int
) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
    """:func:`scan_pairs` :func:`encoded`: ``(src, tgt_in, tgt_out)`` for training and for test."""
    train, test = scan_pairs(setting, seed)
    return encoded(train), encoded(test)


def train_scan(
    s: ResistSettings, setting: str, seed: int, device: torch.device
) -> dict[str, np.ndarray]:
    """One seq2seq model in one setting: Adam with the paper's step decay and clipping on batches
    drawn with replacement; exact-match accuracy on fresh commands at :func:`scan_eval_steps`.
    Returns curves ``[E]``: ``acc_train`` (training commands), ``acc_train_long`` (training
    commands of more than one word), ``acc_test`` (test commands) and ``acc_unseen`` (test
    commands that are not also training commands: all of them in setting A); the final
    accuracies ``final_train``, ``final_test``, ``final_unseen`` (``scan_final`` commands each);
    ``losses [steps]``; and seed's translations of :func:`shown_commands`.
    """
    train, test = scan_pairs(setting, seed)
    seen = {c for c, _ in train}
    (tr_src, tr_in, tr_out), (te_src, te_in, te_out) = (
        encoded(train), encoded(test))
    long = torch.tensor([len(c.split()) > 1 for c, _ in train])
    unseen = torch.tensor([c not in seen for c, _ in test])
    sets = {
        "train": (tr_src, tr_in, tr_out),
        "train_long": (tr_src[long], tr_in[long], tr_out[long]),
        "test": (te_src, te_in, te_out),
        "unseen": (te_src[unseen], te_in[unseen], te_out[unseen]),
    }
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = Seq2Seq(len(scan.COMMAND_VOCAB), len(scan.ACTION_VOCAB),
                    s.embedding, s.encoder, s.decoder).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=s.scan_lr)
    decay = torch.optim.lr_scheduler.StepLR(
        opt, step_size=100, gamma=s.scan_decay
    )

    def sample(src, tgt_in, tgt_out, n):
        idx = torch.randint(0, len(src), (n,), generator=g)
        # trim the padding of this batch
        length = int((tgt_out[idx] != scan.Vocab.PAD).sum(1).max())
        return (
            src[idx].to(device),
            tgt_in[idx, :length].to(device),
            tgt_out[idx, :length].to(device),
        )

    def measure(src, tgt_in, tgt_out, n):
        return (
            exact_match(model, *sample(src, tgt_in, tgt_out, n)[::2])
            .float()
            .mean()
            .item()
        )

    when = set(scan_eval_steps(s))
    curves, losses = {name: [] for name in sets}, []
    for step in bar(
        range(s.scan_steps + 1), f"SCAN {setting} seed {seed}"
    ):
        if step in when:
            model.eval()
            for name, subset in sets.items():
                curves[name].append(measure(*subset, s.scan_eval))
            model.train()
        if step == s.scan_steps:
            break
        src, tgt_in, tgt_out = sample(tr_src, tr_in, tr_out, s.scan_batch)
        scores = model(src, tgt_in)  # [B, T, A]
        loss = F.cross_entropy(
            scores.flatten(0, 1),
            tgt_out.flatten(),
            ignore_index=scan.Vocab.PAD,
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), s.scan_clip)
        opt.step()
        decay.step()
        losses.append(loss.item())
    model.eval()
    shown = te_src[shown_commands(s.seeds)].to(device)
    pred, attention = model.greedy(shown)  # [R, T], [R, T, 9]
    width = scan.MAX_ACTIONS + 1
    out = {f"acc_{name}": np.array(v) for name, v in curves.items()}
    out.update(
        {
            f"final_{name}": np.array(measure(*sets[name], s.scan_final))
            for name in ("train", "test", "unseen")
        }
    )
    out.update(
        {
            "losses": np.array(losses),
            "shown_pred": F.pad(
                pred, (0, width - pred.shape[1]), value=scan.Vocab.PAD
            )
            .cpu()
            .numpy(),
            "shown_attention": F.pad(
                attention, (0, 0, 0, width - attention.shape[1])
            )
            .cpu()
            .numpy(),
        }
    )
    return out


def shown_commands(seeds: int) -> torch.Tensor:
    """The indices ``[SHOWN]`` of the test commands whose translations every seed stores: random
    ones among those that no seed's setting-B training set contains, so that both settings
    translate commands they never saw."""
    _, test = scan.split("add-jump")
    seen = set()
    for seed in range(seeds):
        seen |= {c for c, _ in scan_pairs("B", seed)[0]}
    order = torch.randperm(
        len(test), generator=torch.Generator().manual_seed(0)
    ).tolist()
    return torch.tensor(
        [i for i in order if test[i][0] not in seen][:SHOWN]
    )
