"""Agreement sentences in the style of Marvin & Linzen (2018), with the book's own vocabulary (chapter 5,
notebooks/structural_compositionality.ipynb, section "The language tasks"; Lepori et al. 2023, section 5;
chapter 6, notebooks/pretraining_consistency.ipynb, builds its pretraining corpus from the same words).
Chapters import it as ``agreement``: ``from modlib.data import sentences as agreement``.

Two families, each with two number features that a sentence can set independently:

``"sv"``         subject-verb agreement; features ``subject`` (the head noun's number) and ``verb``
                 (the main verb's number). Templates: ``simple`` ("the pilot laughs"),
                 ``pp`` (across a prepositional phrase: "the pilot near the guards laughs"),
                 ``src`` (across a subject relative clause: "the pilot that admired the guards
                 laughs") and ``orc`` (across an object relative clause: "the pilot that the guards
                 like laughs").
``"anaphora"``   reflexive anaphora; features ``subject`` and ``pronoun`` (himself / themselves).
                 Templates: ``simple`` ("the pilot blamed himself") and ``rc`` ("the pilot that the
                 guards like blamed himself").

A sentence is grammatical when its features agree. The noun inside a phrase or clause (the
*attractor*) has a random number, and a verb inside an object relative clause agrees with it; a
verb inside a subject relative clause is in the past tense, which shows no number, so only the
two features decide agreement. :data:`VOCAB` holds every word; :func:`encode` turns sentences into
``[CLS] words [SEP]`` id tensors for a BERT built from a config.
"""

from __future__ import annotations

import torch

from modlib.profiles import check_choice, check_int

NOUNS = {"pilot": "pilots", "farmer": "farmers", "teacher": "teachers", "dancer": "dancers",
         "doctor": "doctors", "painter": "painters", "guard": "guards", "singer": "singers",
         "baker": "bakers", "sailor": "sailors", "judge": "judges", "clerk": "clerks"}
VERBS = {"laughs": "laugh", "sleeps": "sleep", "smiles": "smile", "waits": "wait", "swims": "swim",
         "sings": "sing", "talks": "talk", "runs": "run"}  # intransitive, singular -> plural
TRANSITIVE = {"likes": "like", "admires": "admire", "knows": "know", "helps": "help", "meets": "meet"}
PAST = ("admired", "helped", "blamed", "praised", "hurt", "saw", "taught", "met")  # no number shown
PREPOSITIONS = ("near", "behind", "beside", "with")
REFLEXIVES = ("himself", "themselves")
FAMILIES = {"sv": ("subject", "verb"), "anaphora": ("subject", "pronoun")}
TEMPLATES = {"sv": ("simple", "pp", "src", "orc"), "anaphora": ("simple", "rc")}
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
VOCAB = (*SPECIAL, "the", "that", *PREPOSITIONS, *NOUNS, *NOUNS.values(), *VERBS, *VERBS.values(),
         *TRANSITIVE, *TRANSITIVE.values(), *PAST, *REFLEXIVES)
IDS = {w: i for i, w in enumerate(VOCAB)}
MAX_WORDS = 9  # the longest template, "the pilot that the guards like blamed himself", has 8


def _pick(words, g: torch.Generator):
    words = tuple(words)
    return words[int(torch.randint(len(words), (), generator=g))]


def _noun(plural: bool, g: torch.Generator) -> str:
    singular = _pick(NOUNS, g)
    return NOUNS[singular] if plural else singular


def _coin(g: torch.Generator) -> bool:
    return bool(torch.randint(2, (), generator=g))


def sentence(family: str, template: str, first: bool, second: bool, g: torch.Generator) -> str:
    """One sentence of ``family`` and ``template`` whose two features (see :data:`FAMILIES`) are
    plural where ``first`` / ``second`` is True; the other words at random from ``g``."""
    check_choice("family", family, FAMILIES)
    check_choice("template", template, TEMPLATES[family])
    subject = _noun(first, g)
    attractor_plural = _coin(g)
    attractor = _noun(attractor_plural, g)
    if family == "sv":
        singular = _pick(VERBS, g)
        end = VERBS[singular] if second else singular
    else:
        end = f"{_pick(PAST, g)} {REFLEXIVES[int(second)]}"
    if template == "simple":
        middle = ""
    elif template == "pp":
        middle = f" {_pick(PREPOSITIONS, g)} the {attractor}"
    elif template == "src":
        middle = f" that {_pick(PAST, g)} the {attractor}"
    else:  # "orc" and "rc": the clause's verb agrees with the attractor
        singular = _pick(TRANSITIVE, g)
        middle = f" that the {attractor} {TRANSITIVE[singular] if attractor_plural else singular}"
    return f"the {subject}{middle} {end}"


def features(family: str, text: str) -> tuple[bool, bool]:
    """Read a sentence's two features back from its words (plural = True): the head noun (the
    second word) and the main verb or the reflexive (the last word)."""
    check_choice("family", family, FAMILIES)
    words = text.split()
    if words[1] not in NOUNS.values() and words[1] not in NOUNS:
        raise ValueError(f"{text!r} does not start with 'the' and a noun of NOUNS")
    last = words[-1]
    if family == "sv":
        if last not in VERBS and last not in VERBS.values():
            raise ValueError(f"{text!r} does not end with a verb of VERBS")
        return words[1] in NOUNS.values(), last in VERBS.values()
    if last not in REFLEXIVES:
        raise ValueError(f"{text!r} does not end with one of {REFLEXIVES}")
    return words[1] in NOUNS.values(), last == "themselves"


def grammatical(family: str, text: str) -> bool:
    """Whether the sentence's two features agree."""
    first, second = features(family, text)
    return first == second


def encode(texts: list[str], length: int = MAX_WORDS + 2) -> tuple[torch.Tensor, torch.Tensor]:
    """``[CLS] words [SEP]`` padded to ``length``: ``input_ids`` and ``attention_mask``, both
    ``long [len(texts), length]``. A word outside :data:`VOCAB` fails, naming it."""
    check_int("length", length, 3)
    ids = torch.zeros(len(texts), length, dtype=torch.long)
    for i, text in enumerate(texts):
        words = text.split()
        unknown = [w for w in words if w not in IDS]
        if unknown:
            raise ValueError(f"{text!r} has words outside VOCAB: {unknown}")
        row = [IDS["[CLS]"], *(IDS[w] for w in words), IDS["[SEP]"]]
        if len(row) > length:
            raise ValueError(f"{text!r} needs {len(row)} tokens; length={length}")
        ids[i, :len(row)] = torch.tensor(row)
    return ids, (ids != IDS["[PAD]"]).long()


def item(rng: torch.Generator, family: str, first: bool, second: bool) -> str:
    """One sentence of ``family`` (a random template) with these two features plural."""
    return sentence(family, _pick(TEMPLATES[family], rng), first, second, rng)
