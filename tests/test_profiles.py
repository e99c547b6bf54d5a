import pytest

from modlib import profiles, toy
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
    ({"steps": -1}, r"steps=-1 .* integer >= 0"),
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
    s, d, f = (toy.settings(p) for p in profiles.PROFILES)
    assert s.seeds < d.seeds < f.seeds
    assert d.seeds >= 20 and d.steps == f.steps == 1024


def test_model_builder_rejects_unknown_activation():
    with pytest.raises(ValueError, match=r"activation='sigmoid' .* 'relu', 'tanh'"):
        mlp(2, [8], 1, "sigmoid")
