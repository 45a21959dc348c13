"""synthcity 0.2.12 targets: how they call the library (fast, with a recording stand-in) and real
fits in the ``synthcity`` env through the worker (slow; CI creates the env with
``scripts/ci_envs.sh`` first)."""
from __future__ import annotations

import json
import sys
import types
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpcheck.audit.worlds.datasets import load
from dpcheck.targets import remote, synthcity_targets
from dpcheck.targets.base import Column, Schema, shadow_release

SCHEMA = Schema((Column("a", "categorical", categories=(0, 1)), Column("y", "categorical", categories=(0, 1))),
                label="y")
DATA = pd.DataFrame({"a": [0, 0, 1], "y": [0, 1, 1]})


class Recorder:
    """Stands in for synthcity's Plugins / GenericDataLoader and records how they are called."""

    calls: list[tuple[str, Any]] = []

    class Plugins:
        def __init__(self, categories: list[str]) -> None:
            Recorder.calls.append(("categories", categories))

        def get(self, name: str, **kwargs: Any) -> "Recorder.Plugin":
            Recorder.calls.append(("get", (name, kwargs)))
            return Recorder.Plugin()

    class Loader:
        def __init__(self, data: pd.DataFrame, target_column: str | None = None) -> None:
            Recorder.calls.append(("loader", (list(data.columns), target_column)))
            self.data = data

        def dataframe(self) -> pd.DataFrame:
            return self.data

    class Plugin:
        def fit(self, loader: "Recorder.Loader") -> None:
            Recorder.calls.append(("fit", len(loader.dataframe())))
            self.data = loader.dataframe()

        def generate(self, count: int) -> "Recorder.Loader":
            Recorder.calls.append(("generate", count))
            return Recorder.Loader(self.data.sample(count, replace=True, random_state=0).set_index(
                pd.Index(range(100, 100 + count))))


@pytest.fixture
def fake_synthcity(monkeypatch: pytest.MonkeyPatch) -> type[Recorder]:
    Recorder.calls = []
    plugins = types.ModuleType("synthcity.plugins")
    plugins.Plugins = Recorder.Plugins  # type: ignore[attr-defined]
    dataloader = types.ModuleType("synthcity.plugins.core.dataloader")
    dataloader.GenericDataLoader = Recorder.Loader  # type: ignore[attr-defined]
    for name, module in {"synthcity": types.ModuleType("synthcity"), "synthcity.plugins": plugins,
                         "synthcity.plugins.core": types.ModuleType("synthcity.plugins.core"),
                         "synthcity.plugins.core.dataloader": dataloader}.items():
        monkeypatch.setitem(sys.modules, name, module)
    return Recorder


@pytest.mark.parametrize("info", synthcity_targets.TARGETS, ids=lambda i: i.name)
def test_each_target_calls_the_documented_api_with_the_seed_and_budget(fake_synthcity: type[Recorder],
                                                                       info: Any) -> None:
    out = shadow_release(info, DATA, SCHEMA, epsilon=0.5, delta=1e-6, seed=1234, n_samples=7)
    calls = dict(reversed(fake_synthcity.calls))  # the first call of each kind
    name, kwargs = calls["get"]
    plugin = info.name.split(":")[1]
    assert name == plugin and calls["categories"] == ["privacy"]
    assert kwargs["random_state"] == 1234  # without it synthcity reseeds every fit with 0
    assert "plugin" not in kwargs
    assert kwargs.get("epsilon") == (0.5 if plugin != "adsgan" else None)
    assert kwargs.get("delta") == (1e-6 if plugin in ("pategan", "dpgan", "aim") else None)
    assert calls["loader"] == (["a", "y"], "y")
    assert calls["generate"] == 7
    assert out.shape == (7, 2) and set(np.unique(out)) <= {0.0, 1.0}


def test_targets_are_registered_with_json_settings() -> None:
    from dpcheck.targets import registry

    names = {t.name for t in registry.all_targets()}
    for plugin in ("pategan", "dpgan", "adsgan", "privbayes", "aim"):
        assert f"synthcity:{plugin}" in names
    for info in synthcity_targets.TARGETS:
        assert info.env == "synthcity" and info.kind == "synthesizer"
        assert json.loads(json.dumps(info.to_dict())) == info.to_dict()
        assert "synthcity" not in sys.modules or isinstance(sys.modules["synthcity"], types.ModuleType)


# --- real fits in the synthcity env ---------------------------------------------------------------

@pytest.fixture(scope="module")
def synthcity_env() -> None:
    from dpcheck.targets import envs

    if not envs.is_ready("synthcity"):
        pytest.fail("the synthcity env is not created: run `dpcheck env create synthcity` "
                    "(CI: bash scripts/ci_envs.sh)")
    yield
    remote.shutdown_workers()


#: AIM is left out of the real fits: one fit on the 5-row worst case took over 3 CPU-minutes here
#: (16 x d rounds of 1000 mirror-descent steps, no knob for the rounds); its calls are checked above
REAL_FITS = [t for t in synthcity_targets.TARGETS if t.name != "synthcity:aim"]


@pytest.mark.slow
@pytest.mark.parametrize("info", REAL_FITS, ids=lambda i: i.name)
def test_one_fit_in_the_env_is_reproducible_and_in_the_domain(synthcity_env: None, info: Any) -> None:
    dataset = load(info.dataset)
    schema = dataset.schema
    data = schema.decode(dataset.with_target)
    first = remote.remote_shadow_release(info, data, schema, 1.0, 1e-5, seed=3, n_samples=40)
    assert first.shape == (40, 3)
    assert set(np.unique(first)) <= {0.0, 1.0}
    again = remote.remote_shadow_release(info, data, schema, 1.0, 1e-5, seed=3, n_samples=40)
    np.testing.assert_array_equal(first, again)  # random_state=seed makes a run reproducible
    other = remote.remote_shadow_release(info, data, schema, 1.0, 1e-5, seed=4, n_samples=40)
    assert not np.array_equal(first, other)  # and another seed gives another run
    assert remote.library_version(info) == "0.2.12"
