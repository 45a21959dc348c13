"""synthcity 0.2.12 privacy plugins as audit targets (run in the ``synthcity`` env).

Every target uses synthcity's documented public API (README "Quick start" and
https://synthcity.readthedocs.io/en/latest/ "Generic plugins"): ``Plugins().get(name, **kwargs)``
to build the plugin, ``GenericDataLoader(data, target_column=...)`` to wrap the data
(synthcity.plugins.core.dataloader.GenericDataLoader docstring), ``plugin.fit(loader)`` and
``plugin.generate(count=n).dataframe()`` (synthcity.plugins.core.plugin.Plugin.fit/generate
docstrings). Only the ``privacy`` plugin category is loaded (``Plugins(categories=["privacy"])``,
as the README's "List the available generators" shows), which keeps the import small.

**Public domain.** synthcity takes no column domain: its encoder and the output constraints
(``Plugin.fit`` builds a ``Schema`` from the data, ``generate`` keeps only rows inside it) are
read from the private data. These targets therefore audit the documented default; the schema's
categories and bounds are not passed because the API has no place for them.

**Seeding.** ``Plugin.fit`` reseeds numpy, torch and ``random`` with the plugin's ``random_state``
(``synthcity.utils.reproducibility.enable_reproducible_results``), default 0 — so every target
passes ``random_state=seed``, or every shadow run would draw the same noise.

**Settings.** Iterations are cut so that one fit takes seconds on one CPU core (the values are in
each target's ``settings`` and in the report); everything else is the plugin's default.

synthcity is imported inside the targets only: it pins torch < 2.3 and numpy < 2 and lives in
its own env (``dpcheck env create synthcity``).
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from dpcheck.targets.base import Schema, TargetInfo

LIBRARY = "synthcity"
DOCS = "https://synthcity.readthedocs.io/en/latest/ (README Quick start; Plugin.fit/generate docstrings)"
FACTORY = "dpcheck.targets.synthcity_targets:SynthcityPlugin"


class SynthcityPlugin:
    """One synthcity plugin, named by the knob ``plugin``; fit on the data, then ``generate``."""

    #: plugins whose constructor takes ``epsilon`` / ``delta`` (ADS-GAN takes neither)
    TAKES_EPSILON = {"pategan", "dpgan", "privbayes", "aim"}
    TAKES_DELTA = {"pategan", "dpgan", "aim"}

    def __init__(self) -> None:
        self.plugin: Any = None
        self.columns: list[str] = []

    def fit(self, data: pd.DataFrame, *, schema: Schema, epsilon: float, delta: float, seed: int,
            plugin: str, **kwargs: Any) -> "SynthcityPlugin":
        from synthcity.plugins import Plugins
        from synthcity.plugins.core.dataloader import GenericDataLoader

        args = dict(kwargs)
        if plugin in self.TAKES_EPSILON:
            args["epsilon"] = float(epsilon)
        if plugin in self.TAKES_DELTA and delta > 0:
            args["delta"] = float(delta)
        args["random_state"] = int(seed) & 0x7FFFFFFF
        self.columns = list(schema.names)
        self.plugin = Plugins(categories=["privacy"]).get(plugin, **args)
        self.plugin.fit(GenericDataLoader(data[self.columns], target_column=schema.label))
        return self

    def sample(self, n: int) -> pd.DataFrame:
        out = self.plugin.generate(count=int(n)).dataframe()
        return out.reset_index(drop=True)


def _target(plugin: str, doc: str, settings: dict[str, Any], note: str = "", dataset: str = "",
            neighbours: str = "add/remove") -> TargetInfo:
    return TargetInfo(
        name=f"synthcity:{plugin}", library=LIBRARY, kind="synthesizer", env="synthcity", factory=FACTORY,
        settings={"plugin": plugin, **settings}, doc=f"{DOCS}; {doc}",
        dataset=dataset or "worstcase-categorical", requires=("synthcity", "torch"), note=note,
        neighbours=neighbours, public=(),
        claim_source="synthcity privacy plugins (PATE-GAN, DP-GAN via opacus DP-SGD, PrivBayes): accounting "
                     "per record added or removed; no argument takes a public domain" if neighbours != "none" else
                     "AdsGANPlugin docstring: identifiability (no ε parameter), no DP guarantee")


DOMAIN_NOTE = "synthcity takes no public domain: categories and bounds come from the private data"

TARGETS: list[TargetInfo] = [
    _target("pategan", "synthcity.plugins.privacy.plugin_pategan.PATEGANPlugin docstring",
            {"n_iter": 3, "generator_n_iter": 5, "generator_n_units_hidden": 64,
             "discriminator_n_units_hidden": 64, "n_teachers": 2, "batch_size": 64},
            note=DOMAIN_NOTE + "; PATEGAN.__init__ sets self.delta = None, so the delta passed is "
                 "ignored and 1/(n*sqrt(n)) is used"),
    _target("dpgan", "synthcity.plugins.privacy.plugin_dpgan.DPGANPlugin docstring",
            {"n_iter": 20, "n_iter_min": 10, "generator_n_units_hidden": 64,
             "discriminator_n_units_hidden": 64, "batch_size": 64},
            note=DOMAIN_NOTE + "; DP-SGD through opacus"),
    _target("adsgan", "synthcity.plugins.privacy.plugin_adsgan.AdsGANPlugin docstring",
            {"n_iter": 20, "n_iter_min": 10, "generator_n_units_hidden": 64,
             "discriminator_n_units_hidden": 64, "batch_size": 64},
            note=DOMAIN_NOTE + "; ADS-GAN takes no epsilon: it claims identifiability, not DP, so the "
                 "epsilon of the audit is only the yardstick; on the worst case its fit on D' (identical "
                 "rows) raises 'NaNs detected in the discriminator loss'", neighbours="none"),
    # PrivBayes clusters the rows with KMeans(n_clusters=10) (plugin_privbayes.py:471): >= 10 rows
    _target("privbayes", "synthcity.plugins.privacy.plugin_privbayes.PrivBayesPlugin docstring", {},
            note=DOMAIN_NOTE, dataset="worstcase-categorical@16"),
    _target("aim", "synthcity.plugins.privacy.plugin_aim.AIMPlugin docstring", {},
            note=DOMAIN_NOTE + "; the AIM domain is X.nunique() of the private data (tabular_aim.py:87); "
                 "16 x d rounds of 1000 mirror-descent steps make one fit take minutes (no knob for rounds)"),
]
