"""The SCAN data of chapter 3: grammar, meanings, the paper's splits, redrawn actions, encoding."""

from collections import Counter

import pytest
import torch

from modlib.data import scan

TL, TR = "I_TURN_LEFT", "I_TURN_RIGHT"


def test_the_grammar_has_the_papers_sizes():
    assert len(scan.verb_phrases()) == len(set(scan.verb_phrases())) == 34
    assert len(scan.sentences()) == len(set(scan.sentences())) == 102
    commands = scan.commands()
    assert len(commands) == len(set(commands)) == 102 + 2 * 102 ** 2 == 20_910
    assert commands == sorted(commands)
    assert {w for c in commands for w in c.split()} == set(scan.WORDS) and len(scan.WORDS) == 13
    assert len(scan.ACTIONS) == 6
    assert max(len(c.split()) for c in commands) == scan.MAX_WORDS == 9
    lengths = [len(scan.interpret(c)) for c in commands]
    assert min(lengths) == 1 and max(lengths) == scan.MAX_ACTIONS == 48
    assert {a for c in commands for a in scan.interpret(c)} == set(scan.ACTIONS)


@pytest.mark.parametrize("command, actions", [
    ("jump", ["I_JUMP"]),
    ("turn left", [TL]),
    ("look right", [TR, "I_LOOK"]),
    ("turn around right", [TR] * 4),
    ("turn opposite right thrice", [TR] * 6),
    ("walk around right", [TR, "I_WALK"] * 4),
    ("jump around left twice", [TL, "I_JUMP"] * 8),
    ("walk opposite right after look thrice", ["I_LOOK"] * 3 + [TR, TR, "I_WALK"]),
    ("run and turn opposite left", ["I_RUN", TL, TL]),
    ("turn right after walk", ["I_WALK", TR]),
    ("look twice and jump opposite left", ["I_LOOK", "I_LOOK", TL, TL, "I_JUMP"]),
    ("run left thrice after turn around left", [TL] * 4 + [TL, "I_RUN"] * 3),
    ("jump around left thrice and walk around right thrice", [TL, "I_JUMP"] * 12 + [TR, "I_WALK"] * 12),
])
def test_hand_checked_meanings(command, actions):
    assert scan.interpret(command) == actions


OUTSIDE = ["fly", "walk and", "turn", "walk twice twice", "walk and run and jump", "left walk", ""]


@pytest.mark.parametrize("command", OUTSIDE)
def test_strings_outside_the_grammar_fail(command):
    with pytest.raises(ValueError, match="is not a SCAN command"):
        scan.interpret(command)


def commands_of(pairs):
    return [c for c, _ in pairs]


def test_pairs_are_commands_with_their_meanings():
    train, test = scan.split("length")
    for command, actions in train[:50] + test[:50]:
        assert actions == " ".join(scan.interpret(command))


@pytest.mark.parametrize("name, primitive, rest, copies, n_test", [
    ("add-jump", "jump", 13_203, 1_467, 7_706),
    ("add-turn-left", "turn left", 19_701, 2_189, 1_208),
])
def test_add_primitive_splits_show_the_primitive_alone_only(name, primitive, rest, copies, n_test):
    train, test = scan.split(name)
    assert len(train) == rest + copies and len(test) == n_test
    counts = Counter(commands_of(train))
    assert counts[primitive] == copies and set(counts.values()) == {1, copies}
    others = [c for c in counts if c != primitive]
    assert len(others) == rest and not any(f" {primitive} " in f" {c} " for c in others)
    assert all(f" {primitive} " in f" {c} " and c != primitive for c in commands_of(test))
    assert len(set(commands_of(test))) == n_test
    assert set(counts) | set(commands_of(test)) == set(scan.commands())


def test_length_split_tests_on_longer_meanings():
    train, test = scan.split("length")
    assert (len(train), len(test)) == (16_990, 3_920)
    assert max(len(a.split()) for _, a in train) == 22
    assert {len(a.split()) for _, a in test} == {24, 25, 26, 27, 28, 30, 32, 33, 36, 40, 48}
    assert sorted(commands_of(train) + commands_of(test)) == scan.commands()


def test_simple_split_is_a_seeded_80_20_partition():
    train, test = scan.split("simple", seed=3)
    assert (len(train), len(test)) == (16_728, 4_182)
    assert sorted(commands_of(train) + commands_of(test)) == scan.commands()
    assert scan.split("simple", seed=3) == (train, test)
    assert set(commands_of(scan.split("simple", seed=4)[1])) != set(commands_of(test))


def test_unknown_split_fails_naming_the_choices():
    with pytest.raises(ValueError, match=r"^split='jump' is not valid; choose one of 'simple', 'add-jump', "
                                         r"'add-turn-left', 'length'$"):
        scan.split("jump")


def test_redrawn_actions_keep_the_structure_and_the_meanings_right():
    commands = scan.commands()
    redrawn = scan.redraw_actions(commands, torch.Generator().manual_seed(0))
    assert redrawn == scan.redraw_actions(commands, torch.Generator().manual_seed(0))
    assert redrawn != scan.redraw_actions(commands, torch.Generator().manual_seed(1))
    action_words = set(scan.PRIMITIVES)
    for old, (new, actions) in zip(commands, redrawn):
        old_words, new_words = old.split(), new.split()
        assert len(old_words) == len(new_words)
        for o, n in zip(old_words, new_words):
            assert n == o or (o in action_words and n in action_words)
        assert actions == " ".join(scan.interpret(new))
    drawn = Counter(w for new, _ in redrawn for w in new.split() if w in action_words)
    total = sum(drawn.values())
    assert all(abs(n / total - 0.25) < 0.01 for n in drawn.values())  # uniform over the four


def test_each_occurrence_is_redrawn_on_its_own():
    redrawn = scan.redraw_actions(["walk and walk"] * 400, torch.Generator().manual_seed(0))
    same = sum(c.split()[0] == c.split()[2] for c, _ in redrawn)
    assert 60 < same < 140  # a quarter of 400 when the two are independent
    assert ("walk and walk", "I_WALK I_WALK") in redrawn


def test_vocabularies():
    assert len(scan.COMMAND_VOCAB) == 16 and len(scan.ACTION_VOCAB) == 9
    for vocab in (scan.COMMAND_VOCAB, scan.ACTION_VOCAB):
        assert vocab.tokens[:3] == ("<pad>", "<sos>", "<eos>")
        assert vocab.decode(vocab.ids(list(vocab.tokens[3:]))) == list(vocab.tokens[3:])
    assert scan.ACTION_VOCAB.decode([1, 3, 4, 2, 5, 0]) == ["I_WALK", "I_LOOK"]


def test_encoding_round_trips_and_pads():
    pairs = [(c, " ".join(scan.interpret(c))) for c in scan.commands()]
    src, tgt = scan.encode(pairs)
    assert src.shape == (20_910, 9) and tgt.shape == (20_910, 50)
    assert src.dtype == tgt.dtype == torch.long
    assert scan.decode(src, tgt) == pairs
    assert (tgt[:, 0] == scan.Vocab.SOS).all()
    n_words = (src != scan.Vocab.PAD).sum(1)
    n_steps = (tgt != scan.Vocab.PAD).sum(1)
    assert n_words.tolist() == [len(c.split()) for c, _ in pairs]
    assert n_steps.tolist() == [len(a.split()) + 2 for _, a in pairs]
    assert (tgt[torch.arange(len(pairs)), n_steps - 1] == scan.Vocab.EOS).all()
    longest = scan.commands().index("jump around left thrice and walk around right thrice")
    assert tgt[longest, -1] == scan.Vocab.EOS
