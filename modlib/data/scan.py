"""The SCAN data set (Lake & Baroni 2018), generated from its grammar; used by chapter 3
(``notebooks/resists_at_scale.ipynb``).

A *command* is a sentence of the grammar

    C -> S and S | S after S | S          S -> V twice | V thrice | V
    V -> D opposite dir | D around dir | D | U          D -> U dir | turn dir
    U -> walk | look | run | jump         dir -> left | right

(the paper writes ``D[1] opposite D[2]``: the direction word of ``D`` sits after ``opposite``). Its
meaning (:func:`interpret`) is a list of actions ``I_WALK``, ``I_LOOK``, ``I_RUN``, ``I_JUMP``,
``I_TURN_LEFT``, ``I_TURN_RIGHT``. There are 20,910 commands (:func:`commands`) of at most 9 words,
whose meanings have at most 48 actions. :func:`split` gives the paper's train/test splits as
``(command, actions)`` pairs, the actions joined by spaces; :func:`redraw_actions` swaps the
action words at random (the paper's setting B); :func:`encode` turns pairs into padded id tensors.
"""

from __future__ import annotations

import functools
import itertools

import torch

from modlib.profiles import check_choice

PRIMITIVES = {"walk": "I_WALK", "look": "I_LOOK", "run": "I_RUN", "jump": "I_JUMP"}
TURNS = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
REPEATS = {"twice": 2, "thrice": 3}
CONJUNCTIONS = ("and", "after")
WORDS = (*PRIMITIVES, "turn", *TURNS, "opposite", "around", *REPEATS, *CONJUNCTIONS)  # 13
ACTIONS = (*PRIMITIVES.values(), *TURNS.values())  # 6
MAX_WORDS = 9
MAX_ACTIONS = 48
SPLITS = ("simple", "add-jump", "add-turn-left", "length")
PRIMITIVE_COPIES = {"add-jump": ("jump", 1_467), "add-turn-left": ("turn left", 2_189)}
LONGEST_TRAIN = 22  # the length split trains on meanings of at most 22 actions, tests on the rest
TRAIN_FRACTION = 0.8  # of the simple split


def verb_phrases() -> list[str]:
    """The 34 phrases ``V`` of the grammar."""
    verbs = [*PRIMITIVES, "turn"]
    directed = [f"{v} {d}" for v, d in itertools.product(verbs, TURNS)]
    modified = [f"{v} {m} {d}" for v, m, d in itertools.product(verbs, ("opposite", "around"), TURNS)]
    return modified + directed + list(PRIMITIVES)


def sentences() -> list[str]:
    """The 102 phrases ``S`` of the grammar: each ``V`` alone, twice and thrice."""
    return [f"{v}{r}" for v in verb_phrases() for r in ("", " twice", " thrice")]


@functools.cache
def commands() -> list[str]:
    """All 20,910 commands ``C`` (``S``, ``S and S``, ``S after S``), sorted. Do not modify the list."""
    s = sentences()
    joined = [f"{a} {c} {b}" for a, c, b in itertools.product(s, CONJUNCTIONS, s)]
    return sorted(s + joined)


@functools.cache
def _known() -> frozenset[str]:
    return frozenset(commands())


def interpret(command: str) -> list[str]:
    """The actions that ``command`` means, e.g. ``"walk left twice"`` ->
    ``["I_TURN_LEFT", "I_WALK", "I_TURN_LEFT", "I_WALK"]``; a string outside the grammar fails."""
    if command not in _known():
        raise ValueError(f"command={command!r} is not a SCAN command")
    words = command.split()
    for conjunction in CONJUNCTIONS:
        if conjunction in words:
            i = words.index(conjunction)
            first, second = _sentence(words[:i]), _sentence(words[i + 1:])
            return first + second if conjunction == "and" else second + first
    return _sentence(words)


def _sentence(words: list[str]) -> list[str]:
    if words[-1] in REPEATS:
        return _verb(words[:-1]) * REPEATS[words[-1]]
    return _verb(words)


def _verb(words: list[str]) -> list[str]:
    action = [] if words[0] == "turn" else [PRIMITIVES[words[0]]]  # "turn dir" is the turn alone
    if len(words) == 1:
        return action
    turn = [TURNS[words[-1]]]
    if len(words) == 2:
        return turn + action
    return turn * 2 + action if words[1] == "opposite" else (turn + action) * 4


@functools.cache
def command_pairs() -> tuple[tuple[str, str], ...]:
    """Every SCAN command with its action sequence, ``((command, actions), ...)`` (20,910 pairs)."""
    return tuple((c, " ".join(interpret(c))) for c in commands())


def split(name: str, seed: int = 0) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The train and test ``(command, actions)`` pairs of split ``name`` (one of :data:`SPLITS`):

    - ``"simple"``: a random 80/20 split of all commands (16,728 / 4,182), drawn from ``seed``;
    - ``"add-jump"``: train on the 13,203 commands without ``jump`` plus ``jump`` itself 1,467 times
      (14,670 rows), test on the 7,706 other commands with ``jump``;
    - ``"add-turn-left"``: likewise with ``turn left``, 2,189 times (21,890 rows / 1,208);
    - ``"length"``: train on meanings of at most 22 actions (16,990), test on the longer ones, 24 to
      48 actions (3,920).

    ``seed`` matters to ``"simple"`` only. The simple split's pairs come in a random order, the
    others' sorted by command, the repeated primitive last.
    """
    check_choice("split", name, SPLITS)
    pairs = command_pairs()
    if name == "simple":
        order = torch.randperm(len(pairs), generator=torch.Generator().manual_seed(seed)).tolist()
        n_train = round(TRAIN_FRACTION * len(pairs))
        return [pairs[i] for i in order[:n_train]], [pairs[i] for i in order[n_train:]]
    if name == "length":
        short = [len(p[1].split()) <= LONGEST_TRAIN for p in pairs]
        return ([p for p, s in zip(pairs, short) if s], [p for p, s in zip(pairs, short) if not s])
    primitive, copies = PRIMITIVE_COPIES[name]
    with_it = [f" {primitive} " in f" {c} " for c, _ in pairs]
    train = [p for p, w in zip(pairs, with_it) if not w]
    test = [p for p, w in zip(pairs, with_it) if w and p[0] != primitive]
    return train + [(primitive, " ".join(interpret(primitive)))] * copies, test


def redraw_actions(commands: list[str], generator: torch.Generator) -> list[tuple[str, str]]:
    """``(command, actions)`` pairs for ``commands`` with every action word (walk, look, run, jump)
    replaced, each on its own, by one of the four drawn uniformly from ``generator``; the actions
    are those of the new command."""
    words = [c.split() for c in commands]
    n = sum(w in PRIMITIVES for ws in words for w in ws)
    draws = iter(torch.randint(len(PRIMITIVES), (n,), generator=generator).tolist())
    primitives = list(PRIMITIVES)
    new = [" ".join(primitives[next(draws)] if w in PRIMITIVES else w for w in ws) for ws in words]
    return [(c, " ".join(interpret(c))) for c in new]


class Vocab:
    """Ids for ``tokens`` after the special tokens ``<pad>`` (0), ``<sos>`` (1) and ``<eos>`` (2)."""

    PAD, SOS, EOS = 0, 1, 2

    def __init__(self, tokens: tuple[str, ...]):
        self.tokens = ("<pad>", "<sos>", "<eos>", *tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def ids(self, tokens: list[str]) -> list[int]:
        return [self.index[t] for t in tokens]

    def decode(self, ids: list[int]) -> list[str]:
        """The tokens of ``ids`` up to the first ``<eos>``, without ``<pad>`` and ``<sos>``."""
        out = []
        for i in ids:
            if i == self.EOS:
                break
            if i not in (self.PAD, self.SOS):
                out.append(self.tokens[i])
        return out


COMMAND_VOCAB = Vocab(WORDS)  # 16 ids
ACTION_VOCAB = Vocab(ACTIONS)  # 9 ids


def encode(pairs: list[tuple[str, str]]) -> tuple[torch.Tensor, torch.Tensor]:
    """``(src [N, 9], tgt [N, 50])`` long tensors for ``N`` pairs: ``src`` the command's word ids
    (:data:`COMMAND_VOCAB`), ``tgt`` ``<sos>``, the action ids (:data:`ACTION_VOCAB`) and ``<eos>``;
    both padded with ``<pad>`` (0)."""
    src, tgt = [], []
    for command, actions in pairs:
        words = COMMAND_VOCAB.ids(command.split())
        steps = [Vocab.SOS, *ACTION_VOCAB.ids(actions.split()), Vocab.EOS]
        src.append(words + [Vocab.PAD] * (MAX_WORDS - len(words)))
        tgt.append(steps + [Vocab.PAD] * (MAX_ACTIONS + 2 - len(steps)))
    return torch.tensor(src, dtype=torch.long), torch.tensor(tgt, dtype=torch.long)


def decode(src: torch.Tensor, tgt: torch.Tensor) -> list[tuple[str, str]]:
    """The ``(command, actions)`` pairs of ``src [N, 9]`` and ``tgt [N, 50]``: :func:`encode` undone."""
    return [(" ".join(COMMAND_VOCAB.decode(s)), " ".join(ACTION_VOCAB.decode(t)))
            for s, t in zip(src.tolist(), tgt.tolist())]


# --- frames: where an action word sits (chapter 3's control) --------------------------------------

SLOT = "X"  # an action word's place in a frame
# the 7 verb-phrase frames of an action word: alone, or with a direction, "opposite" or "around"
VERB_FRAMES = (SLOT, *(f"{SLOT} {m}{d}" for m in ("", "opposite ", "around ") for d in TURNS))


def clauses(command: str) -> list[list[str]]:
    """The words of each sentence ``S`` of ``command``: one list, or two around "and" / "after"."""
    words = command.split()
    for conjunction in CONJUNCTIONS:
        if conjunction in words:
            i = words.index(conjunction)
            return [words[:i], words[i + 1:]]
    return [words]


def occurrences(command: str) -> list[tuple[str, str, str]]:
    """Each action word of ``command`` with its frames: ``(word, verb frame, clause frame)``, the
    frames written with :data:`SLOT` for the word, e.g. ``"jump around left twice and walk"`` ->
    ``[("jump", "X around left", "X around left twice"), ("walk", "X", "X")]``."""
    out = []
    for words in clauses(command):
        if words[0] in PRIMITIVES:  # an action word opens its sentence; "turn ..." has none
            clause = " ".join([SLOT, *words[1:]])
            verb = " ".join([SLOT, *(w for w in words[1:] if w not in REPEATS)])
            out.append((words[0], verb, clause))
    return out


def frame_split(word: str, held_out: tuple[str, ...]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Every command once, split by where ``word`` sits: training, the commands in which ``word``
    never sits in one of the ``held_out`` verb frames (:data:`VERB_FRAMES`); test, those in which it
    does at least once. The other action words stay in every frame. ``(command, actions)`` pairs,
    sorted by command."""
    check_choice("word", word, tuple(PRIMITIVES))
    for frame in held_out:
        check_choice("held-out frame", frame, VERB_FRAMES)
    train, test = [], []
    for pair in command_pairs():
        inside = any(w == word and verb in held_out for w, verb, _ in occurrences(pair[0]))
        (test if inside else train).append(pair)
    return train, test


def union_split() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The authors' setting B (their ``UniformSCANGanerator``): training on the union of the add-jump
    split's training and test commands, each once (all 20,910), test on the add-jump test commands,
    every one of which is a training command."""
    train, test = split("add-jump")
    seen, union = set(), []
    for pair in train + test:
        if pair[0] not in seen:
            seen.add(pair[0])
            union.append(pair)
    return sorted(union), test


def frame_information(commands: list[str], word: str = "jump", level: str = "clause") -> dict[str, float]:
    """How much the frame tells about the action word, over every action-word occurrence in
    ``commands`` (a training set's rows, repeats counted): ``"I(W;F)"``, the mutual information in
    bits between the word (4 values) and its frame (``level``: ``"clause"``, with its repetition, or
    ``"verb"``), ``"H(W)"``, and the same for whether the word is ``word``: ``"I(J;F)"``,
    ``"H(J)"`` (the frame removes the share ``I(J;F) / H(J)`` of the uncertainty about it). Setting A
    has "jump" in one frame only (I(J;F) / H(J) near 0.7); a split in which every word sits in
    every frame has 0."""
    check_choice("level", level, ("clause", "verb"))
    counts: dict[tuple[str, str], int] = {}
    for command in commands:
        for w, verb, clause in occurrences(command):
            key = (w, clause if level == "clause" else verb)
            counts[key] = counts.get(key, 0) + 1
    out = {}
    for name, label in (("W", lambda w: w), ("J", lambda w: w == word)):
        joint: dict[tuple, int] = {}
        for (w, f), k in counts.items():
            joint[label(w), f] = joint.get((label(w), f), 0) + k
        out[f"I({name};F)"], out[f"H({name})"] = _information(joint)
    return out


def _information(joint: dict[tuple, int]) -> tuple[float, float]:
    """``(I(A; B), H(A))`` in bits of the counts ``joint[(a, b)]``."""
    import math

    n = sum(joint.values())
    pa: dict = {}
    pb: dict = {}
    for (a, b), k in joint.items():
        pa[a] = pa.get(a, 0) + k
        pb[b] = pb.get(b, 0) + k
    mi = sum(k / n * math.log2(k * n / (pa[a] * pb[b])) for (a, b), k in joint.items() if k)
    h = -sum(k / n * math.log2(k / n) for k in pa.values() if k)
    return max(0.0, mi), h
