import json
from dataclasses import FrozenInstanceError, asdict, fields

import pytest

from modlib import profiles
from modlib import redundant_input_toy as toy
from modlib import weight_masks as wm
from modlib.models import mlp


def test_resolve_uses_argument_then_environment_then_default(monkeypatch):
    monkeypatch.delenv("MODLIB_PROFILE", raising=False)
    assert profiles.resolve() == "default"
    monkeypatch.setenv("MODLIB_PROFILE", "smoke")
    assert profiles.resolve() == "smoke"
    assert profiles.resolve("full") == "full"


def test_unknown_profile_names_it_and_the_valid_ones(monkeypatch):
    with pytest.raises(ValueError, match=r"unknown profile 'huge'.*smoke, default, full"):
        profiles.resolve("huge")
    monkeypatch.setenv("MODLIB_PROFILE", "fast")
    with pytest.raises(ValueError, match="'fast'"):
        toy.settings()


@pytest.mark.parametrize("change, message", [
    ({"epochs": -1}, r"epochs=-1 .* integer >= 0"),
    ({"seeds": 0}, r"seeds=0 .* integer >= 1"),
    ({"activations": ("relu", "gelu")}, r"activations='gelu' .* 'relu', 'tanh'"),
    ({"losses": ("hinge",)}, r"losses='hinge' .* 'mse', 'ce'"),
    ({"formulations": ("c",)}, r"formulations='c' .* 'a', 'b'"),
    ({"reveals": (1.5,)}, r"reveals=1.5 .* \[0.0, 1.0\]"),
    ({"lr": 0.0}, r"lr=0.0 .* \(0.0, 10.0\]"),
    ({"reveals": ()}, r"reveals is empty"),
])
def test_invalid_settings_fail_at_once_with_the_value_and_choices(change, message):
    with pytest.raises(ValueError, match=message):
        toy.settings("smoke").with_(**change)


def test_every_profile_has_valid_settings_and_grows():
    assert profiles.PROFILES == ("smoke", "default", "full", "paper")
    s, d, f, p = (toy.settings(name) for name in profiles.PROFILES)
    assert s.seeds < d.seeds < f.seeds
    assert d.seeds >= 10 and d.epochs == toy.PAPER_EPOCHS and f.epochs >= toy.PAPER_EPOCHS
    assert p == f  # the toy's full profile is already the paper's scale
    s, d, f, p = (wm.settings(name) for name in profiles.PROFILES)
    assert s.hidden[0] < d.hidden[0] < f.hidden[0] < p.hidden[0] == 2000 and len(p.hidden) == 4
    assert f.seeds >= 5 and p.seeds == 10 and p.mask_steps == p.base_steps == 20_000


def test_model_builder_rejects_unknown_activation():
    with pytest.raises(ValueError, match=r"activation='sigmoid' .* 'relu', 'tanh'"):
        mlp(2, [8], 1, "sigmoid")


def test_misspelled_setting_names_it_the_closest_and_the_valid_ones():
    valid = r"valid settings are seeds, hidden, base_steps, .*, cnn_mask_lr$"
    with pytest.raises(TypeError, match=r"MaskSettings has no setting 'hiden' \(did you mean 'hidden'\?\); " + valid):
        wm.MaskSettings(hiden=(3,))
    with pytest.raises(TypeError, match=r"'hiden' \(did you mean 'hidden'\?\); " + valid):
        wm.settings("smoke").with_(hiden=(3,))
    with pytest.raises(TypeError, match=r"ToySettings has no setting 'activation' \(did you mean 'activations'\?\)"):
        toy.ToySettings(seeds=2, activation=("relu",))


@pytest.mark.parametrize("make, message", [
    (lambda: toy.ToySettings(seeds=2, activations="relu"), r"activations='relu' .* list or tuple .*\('relu',\)"),
    (lambda: toy.ToySettings(seeds=2, hidden=8), r"hidden=8 .* list or tuple"),
    (lambda: wm.MaskSettings(sweep_alphas=1e-3), r"sweep_alphas=0.001 .* list or tuple .*\(0.001,\)"),
    (lambda: wm.settings("smoke").with_(sweep_shapes=None), r"sweep_shapes=None .* list or tuple$"),
    (lambda: wm.settings("smoke").with_(sweep_shapes=(400,)), r"sweep_shapes=400 .* list or tuple"),
])
def test_a_str_or_number_where_a_list_is_expected_fails_naming_the_field(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_check_choices_rejects_a_str_as_values():
    with pytest.raises(ValueError, match=r"activations='relu' .* list or tuple"):
        profiles.check_choices("activations", "relu", ("relu", "tanh"))


@pytest.mark.parametrize("s", [toy.settings("smoke"), wm.settings("full")])
def test_settings_read_back_from_json_lists_equal_the_original(s):
    config = json.loads(json.dumps(asdict(s)))
    back = type(s)(**config)
    assert back == s and hash(back) == hash(s) and asdict(back) == asdict(s)
    assert all(isinstance(getattr(back, f.name), type(getattr(s, f.name))) for f in fields(s))
    with pytest.raises(FrozenInstanceError):
        back.seeds = 3


def test_settings_decorator_works_without_checks_of_its_own():
    @profiles.settings
    class Small:
        widths: tuple[int, ...] = ()
        seed: int = 0

    assert Small(widths=[1, 2]).widths == (1, 2) and Small().with_(seed=1) == Small(seed=1)
    with pytest.raises(ValueError, match=r"widths='12' .* list or tuple"):
        Small(widths="12")
    with pytest.raises(TypeError, match=r"no setting 'seeds' \(did you mean 'seed'\?\); valid settings are widths, seed$"):
        Small().with_(seeds=1)
