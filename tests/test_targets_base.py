"""The target contract: schema, encoding, seeding, registry (no real library needed here)."""
from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest

from dpcheck.audit.worlds import datasets
from dpcheck.targets import registry
from dpcheck.targets.base import Column, Schema, TargetError, TargetInfo, seed_everything, shadow_release


def mixed_schema() -> Schema:
    return Schema((Column("colour", "categorical", categories=("red", "green", "blue")),
                   Column("age", "integer", lower=18, upper=90),
                   Column("income", "continuous", lower=0.0, upper=1e5)), label="colour")


def test_schema_round_trips_through_json():
    schema = mixed_schema()
    again = Schema.from_dict(json.loads(json.dumps(schema.to_dict())))
    assert again == schema
    assert again.label == "colour"
    assert [c.name for c in again.features] == ["age", "income"]


@pytest.mark.parametrize("columns, label, message", [
    ([{"name": "a", "kind": "text"}], None, "kind must be one of"),
    ([{"name": "a", "kind": "continuous", "lower": 0}], None, "needs public bounds"),
    ([{"name": "a", "kind": "continuous", "lower": 2, "upper": 1}], None, "lower <= upper"),
    ([{"name": "a", "kind": "categorical"}], None, "needs its public categories"),
    ([{"name": "a", "kind": "categorical", "categories": [1, 1]}], None, "categories repeat"),
    ([{"name": "a", "kind": "integer", "lower": 0, "upper": 1}] * 2, None, "names repeat"),
    ([{"name": "a", "kind": "integer", "lower": 0, "upper": 1}], "b", "label 'b' is not one of"),
    ([], None, "at least one column"),
])
def test_bad_schemas_are_refused_with_the_reason(columns, label, message):
    with pytest.raises(ValueError, match=message):
        Schema.from_dict({"columns": columns, "label": label})


def test_decode_encode_round_trip_keeps_categories_and_kinds():
    schema = mixed_schema()
    values = np.array([[0, 18, 0.5], [2, 90, 1e5], [1, 40, 123.25]])
    frame = schema.decode(values)
    assert list(frame["colour"]) == ["red", "blue", "green"]
    assert frame["age"].dtype == np.int64
    np.testing.assert_array_equal(schema.encode(frame), values)


def test_encode_marks_values_outside_the_categories_as_nan():
    schema = mixed_schema()
    frame = pd.DataFrame({"colour": ["red", "purple"], "age": [20, 30], "income": [1.0, 2.0]})
    encoded = schema.encode(frame)
    assert encoded[0, 0] == 0 and np.isnan(encoded[1, 0])
    with pytest.raises(TargetError, match="lacks schema columns"):
        schema.encode(frame.drop(columns=["age"]))


def test_validate_names_the_bad_value():
    schema = mixed_schema()
    with pytest.raises(ValueError, match="outside the public bounds"):
        schema.validate(pd.DataFrame({"colour": ["red"], "age": [95], "income": [1.0]}))
    with pytest.raises(ValueError, match="not one of its categories"):
        schema.validate(pd.DataFrame({"colour": ["pink"], "age": [20], "income": [1.0]}))
    with pytest.raises(ValueError, match="non-integer"):
        schema.validate(pd.DataFrame({"colour": ["red"], "age": [20.5], "income": [1.0]}))


def test_seed_everything_controls_random_numpy_and_torch():
    import torch

    def draw(seed: int) -> tuple:
        rng = seed_everything(seed)
        return (random.random(), float(np.random.rand()), float(torch.rand(1)), float(rng.random()))

    assert draw(5) == draw(5)
    assert all(a != b for a, b in zip(draw(5), draw(6)))


@pytest.mark.parametrize("kind", datasets.WORST_CASE_KINDS)
def test_worst_case_kinds_carry_a_schema_and_differ_only_in_the_target(kind):
    data = datasets.load(kind)
    schema = data.get_schema()
    assert len(data.with_target) == len(data.without_target) + 1
    np.testing.assert_array_equal(data.with_target[:-1], data.without_target)
    np.testing.assert_array_equal(data.target, np.ones(3))  # at the upper bound / last category
    lower, upper = schema.bounds()
    np.testing.assert_array_equal(upper, data.upper)
    frame = schema.decode(data.with_target)
    schema.validate(frame)
    if kind == "worstcase-categorical":
        assert all(c.kind == "categorical" and c.categories == (0, 1) for c in schema.columns)
    if kind == "worstcase-classification":
        assert schema.label == "y"
        assert set(frame["y"][:-1]) == {0, 1}  # both classes in D′


def test_background_rows_suffix():
    data = datasets.load("worstcase-categorical@999")
    assert len(data.without_target) == 999 and data.target_index == 999
    with pytest.raises(ValueError, match="fixed target"):
        datasets.load("worstcase-categorical@999", 3)
    for bad in ("worstcase@10", "worstcase-continuous@x", "worstcase-continuous@1", "nonsense"):
        with pytest.raises(ValueError):
            datasets.check_name(bad)


class EchoMechanism:
    """Releases the column sums plus numpy-global noise: shows shadow_release seeds the global RNG."""

    def release(self, data, *, schema, epsilon, delta, seed, scale=1.0):
        return schema.encode(data).sum(axis=0) + scale * np.random.normal(size=len(schema.columns))


class EchoSynth:
    def fit(self, data, *, schema, epsilon, delta, seed, **knobs):
        self.data, self.schema = data, schema
        return self

    def sample(self, n):
        return self.data.sample(n=n, replace=True, random_state=np.random.randint(1 << 30))


def info_for(factory: str, kind: str, settings: dict | None = None) -> TargetInfo:
    return TargetInfo(name=f"test:{factory}", library="dpcheck", kind=kind, env="main",
                      factory=f"{__name__}:{factory}", settings=settings or {})


def test_shadow_release_is_seeded_and_passes_settings_and_knobs():
    data = datasets.load("worstcase-categorical")
    schema = data.get_schema()
    frame = schema.decode(data.with_target)
    info = info_for("EchoMechanism", "mechanism", {"scale": 0.0})
    np.testing.assert_array_equal(shadow_release(info, frame, schema, 1.0, 0.0, 1, 1), [1.0, 1.0, 1.0])
    a = shadow_release(info, frame, schema, 1.0, 0.0, 1, 1, {"scale": 1.0})
    assert np.array_equal(a, shadow_release(info, frame, schema, 1.0, 0.0, 1, 1, {"scale": 1.0}))
    assert not np.array_equal(a, shadow_release(info, frame, schema, 1.0, 0.0, 2, 1, {"scale": 1.0}))
    synth = shadow_release(info_for("EchoSynth", "synthesizer"), frame, schema, 1.0, 0.0, 1, 7)
    assert synth.shape == (7, 3) and set(np.unique(synth)) <= {0.0, 1.0}


def test_registry_skips_missing_modules_and_names_the_install_command(monkeypatch):
    monkeypatch.setattr(registry, "MODULES", ("dpcheck.targets.no_such_module", "dpcheck.targets.diffprivlib_targets"))
    assert "diffprivlib:GaussianNB" in registry.names()
    with pytest.raises(KeyError, match="unknown target"):
        registry.get("diffprivlib:NoSuchModel")
    missing = TargetInfo(name="fake:lib", library="fake", kind="mechanism", env="main",
                         factory="fake_lib_h6:Thing", requires=("fake_lib_h6_not_installed",))
    with pytest.raises(TargetError, match=r"pip install 'dpcheck\[real\]'"):
        registry.check_available(missing)


def test_replace_one_variant_keeps_the_row_count_and_the_targets_class():
    data = datasets.load("worstcase-classification+replace")
    assert len(data.with_target) == len(data.without_target) == 5
    np.testing.assert_array_equal(data.without_target[-1], [0, 0, 1])  # background row of class y = 1
    np.testing.assert_array_equal(data.with_target[:-1], data.without_target[:-1])
    with pytest.raises(ValueError, match=r"\+replace"):
        datasets.check_name("cervical+replace")
