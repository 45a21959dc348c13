"""smartnoise-synth 1.0.8 targets: the public-domain frame and registry (fast), and real fits in the
``smartnoise`` env through the worker (slow; CI creates the env with ``scripts/ci_envs.sh`` first)."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from dpcheck.audit.worlds.datasets import load
from dpcheck.targets import remote, smartnoise_targets
from dpcheck.targets.base import Column, Schema

MIXED = Schema((Column("c", "categorical", categories=("x", "y", "z")), Column("i", "integer", lower=0, upper=5),
                Column("f", "continuous", lower=-1.0, upper=2.0)))


def test_public_frame_holds_every_category_and_both_bounds() -> None:
    frame = smartnoise_targets.public_frame(MIXED)
    assert sorted(frame["c"]) == ["x", "y", "z"]
    assert set(frame["i"]) == {0, 5} and set(frame["f"]) == {-1.0, 2.0}


def test_integer_bins_cover_each_value_and_are_capped() -> None:
    assert smartnoise_targets.integer_bins(0, 1) == 2
    assert smartnoise_targets.integer_bins(0, 5) == 6
    assert smartnoise_targets.integer_bins(0, 10_000) == smartnoise_targets.MAX_INTEGER_BINS


def test_targets_are_registered_without_importing_snsynth() -> None:
    from dpcheck.targets import registry

    names = set(registry.names())
    for synth in ("pategan", "patectgan", "dpctgan", "dpgan", "mwem", "mst", "aim"):
        assert f"smartnoise-synth:{synth}" in names
    for info in smartnoise_targets.TARGETS:
        assert info.env == "smartnoise" and info.kind == "synthesizer" and info.library == "smartnoise-synth"
        assert "docs.smartnoise.org" in info.doc
        assert json.loads(json.dumps(info.to_dict())) == info.to_dict()
    assert "snsynth" not in sys.modules


# --- real fits in the smartnoise env ----------------------------------------------------------------

@pytest.fixture(scope="module")
def smartnoise_env() -> Any:
    from dpcheck.targets import envs

    if not envs.is_ready("smartnoise"):
        pytest.fail("the smartnoise env is not created: run `dpcheck env create smartnoise` "
                    "(CI: bash scripts/ci_envs.sh)")
    yield
    remote.shutdown_workers()


def _small(info: Any) -> tuple[Any, Any]:
    """The target's dataset (GANs keep their 1,000 rows: PATE-GAN needs them)."""
    dataset = load(info.dataset)
    return dataset.schema.decode(dataset.with_target), dataset.schema


@pytest.mark.slow
@pytest.mark.parametrize("info", smartnoise_targets.TARGETS, ids=lambda i: i.name)
def test_one_fit_in_the_env_stays_in_the_public_domain(smartnoise_env: None, info: Any) -> None:
    data, schema = _small(info)
    knobs = {"epochs": 1} if "epochs" in info.settings else {}
    out = remote.remote_shadow_release(info, data, schema, 1.0, 1e-5, seed=3, n_samples=40, knobs=knobs)
    assert out.shape == (40, 3)
    assert not np.isnan(out).any()
    lower, upper = schema.bounds()
    assert np.all(out >= lower) and np.all(out <= upper)
    if info.seedable:
        again = remote.remote_shadow_release(info, data, schema, 1.0, 1e-5, seed=3, n_samples=40, knobs=knobs)
        np.testing.assert_array_equal(out, again)
    assert remote.library_version(info) == "1.0.8"


_CHECK_TRANSFORMER = """
import json, sys
import pandas as pd
from dpcheck.targets.base import Schema
from dpcheck.targets.smartnoise_targets import declared_transformer
schema = Schema.from_dict(json.loads(sys.argv[1]))
private = pd.DataFrame({c: [0, 0, 0, 0] for c in schema.names})  # D': no row holds category 1
out = {}
for style in ("gan", "cube"):
    tt = declared_transformer(schema, style)
    encoded = tt.transform(private)
    out[style] = {"width": tt.output_width, "spent": list(tt.odometer.spent), "fit": tt.fit_complete,
                  "row": list(encoded[0])}
print(json.dumps(out))
"""


@pytest.mark.slow
def test_declared_transformer_takes_categories_from_the_schema_not_the_data(smartnoise_env: None) -> None:
    from dpcheck.targets import envs

    schema = load("worstcase-categorical").schema
    python = envs.env_python("smartnoise")
    done = subprocess.run([str(python), "-c", _CHECK_TRANSFORMER, json.dumps(schema.to_dict())],
                          capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # one-hot over both public categories per column although the data holds only category 0
    assert result["gan"]["width"] == 6 and result["gan"]["row"] == [1, 0, 1, 0, 1, 0]
    assert result["cube"]["width"] == 3 and result["cube"]["row"] == [0, 0, 0]
    for style in ("gan", "cube"):
        assert result[style]["fit"] is True and result[style]["spent"] == [0.0, 0.0]
