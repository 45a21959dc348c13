"""dpmm 0.1.9 targets: domain and frame from the schema (fast), and real fits in the ``dpmm`` env
through the worker (slow; CI creates the env with ``scripts/ci_envs.sh`` first)."""
from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpcheck.audit.worlds.datasets import load
from dpcheck.targets import dpmm_targets, remote
from dpcheck.targets.base import Column, Schema

MIXED = Schema((Column("c", "categorical", categories=("x", "y")), Column("i", "integer", lower=0, upper=5),
                Column("f", "continuous", lower=-1.0, upper=2.0)))


def test_public_domain_comes_from_the_schema() -> None:
    assert dpmm_targets.public_domain(MIXED) == {
        "c": {"categories": ["x", "y"]}, "i": {"lower": 0.0, "upper": 5.0}, "f": {"lower": -1.0, "upper": 2.0}}


def test_typed_frame_keeps_unseen_public_categories() -> None:
    frame = dpmm_targets.typed_frame(pd.DataFrame({"f": [0.5], "i": [3], "c": ["x"]}), MIXED)
    assert list(frame.columns) == ["c", "i", "f"]
    assert list(frame["c"].cat.categories) == ["x", "y"]
    assert frame["i"].dtype == np.int64 and frame["f"].dtype == float


def test_targets_are_registered_without_importing_dpmm() -> None:
    from dpcheck.targets import registry

    names = set(registry.names())
    assert {"dpmm:mst", "dpmm:aim", "dpmm:privbayes"} <= names
    for info in dpmm_targets.TARGETS:
        assert info.env == "dpmm" and info.kind == "synthesizer"
        assert json.loads(json.dumps(info.to_dict())) == info.to_dict()
    assert "dpmm" not in sys.modules


# --- real fits in the dpmm env ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def dpmm_env() -> Any:
    from dpcheck.targets import envs

    if not envs.is_ready("dpmm"):
        pytest.fail("the dpmm env is not created: run `dpcheck env create dpmm` (CI: bash scripts/ci_envs.sh)")
    yield
    remote.shutdown_workers()


FEW_ITERATIONS = {"gen_kwargs": {"n_iters": 50}}


@pytest.mark.slow
@pytest.mark.parametrize("info", dpmm_targets.TARGETS, ids=lambda i: i.name)
def test_one_fit_in_the_env_stays_in_the_public_domain(dpmm_env: None, info: Any) -> None:
    dataset = load(info.dataset)
    schema = dataset.schema
    out = remote.remote_shadow_release(info, schema.decode(dataset.with_target), schema, 1.0, 1e-5, seed=3,
                                       n_samples=40, knobs=FEW_ITERATIONS)
    assert out.shape == (40, 3)
    assert set(np.unique(out)) <= {0.0, 1.0}
    assert remote.library_version(info) == "0.1.9"


@pytest.mark.slow
def test_constant_private_columns_make_the_fit_fail_whatever_the_public_domain(dpmm_env: None) -> None:
    """The worst case D′ (only (0,0,0) rows): TableBinner drops every column as static and fails.
    The audit then sees runs that fail in one world only — membership shows in the failure."""
    info = dpmm_targets.TARGETS[0]
    dataset = load(info.dataset)
    schema = dataset.schema
    without = schema.decode(dataset.without_target)
    with pytest.raises(Exception, match="No objects to concatenate"):
        remote.remote_shadow_release(info, without, schema, 1.0, 1e-5, seed=3, n_samples=40, knobs=FEW_ITERATIONS)
