"""smartnoise-synth 1.0.8 (OpenDP) synthesizers as audit targets.

Every target creates its synthesizer with the documented factory
``Synthesizer.create(name, epsilon=..., **hyperparameters)`` and calls
``fit(data, transformer=..., preprocessor_eps=...)`` then ``sample(n)``
(https://docs.smartnoise.org/synth/index.html, "Getting Started").

**Public domain.** The transformer is *declared* column by column from the schema, as the
"Declaring a TableTransformer" section of https://docs.smartnoise.org/synth/transforms/index.html
shows: ``MinMaxTransformer(lower=, upper=)`` (GAN style) or ``BinTransformer(lower=, upper=)``
(cube style) for numeric columns, ``LabelTransformer`` (+ ``OneHotEncoder`` for GANs) for
categorical ones. A ``LabelTransformer`` takes no list of categories: it learns them from whatever
it is fitted on. To keep the categories public, the declared transformer is fitted on a public
frame that holds every category of the schema (and the bounds) before it is handed to ``fit``;
``Synthesizer._get_train_data`` does not refit a transformer whose ``fit_complete`` is true, so
nothing about the domain is read from the private data and no budget is spent on preprocessing.

The knob ``domain="data"`` audits the documented default instead: ``fit(data,
categorical_columns=..., continuous_columns=..., preprocessor_eps=...)`` lets snsynth infer the
transformer, so categories come from the private data and numeric bounds are estimated with
``preprocessor_eps`` (taken out of ε).

**Seeding.** PATE-GAN's and PATE-CTGAN's teacher-vote noise is ``numpy.random.laplace`` and their
networks use the global torch RNG, so ``seed_everything`` makes them reproducible. DP-GAN and
DP-CTGAN train through opacus 0.14, whose ``PrivacyEngine`` seeds its own noise generator from
``os.urandom`` (``opacus/privacy_engine.py``, secure_rng off). MWEM, MST and AIM draw their
noise through OpenDP (``snsynth.utils.laplace_noise`` / ``gaussian_noise``), which no numpy or
torch seed controls: for those "same seed, same output" cannot hold (``seedable=False``); every
audit run is still independent, which is all the audit needs.

snsynth is imported inside the targets only (never at module import): it lives in the
``smartnoise`` env (its pins need pandas < 3, the main venv has pandas 3).
"""
from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpcheck.targets.base import Schema, TargetError, TargetInfo

DOCS = "https://docs.smartnoise.org/synth/"
TRANSFORMS_DOC = DOCS + "transforms/index.html"
LIBRARY = "smartnoise-synth"
#: bins for a continuous column in cube style (snsynth's own BinTransformer default is 10)
CUBE_BINS = 10
MAX_INTEGER_BINS = 64


def public_frame(schema: Schema) -> pd.DataFrame:
    """A frame holding every public category and both bounds of every column (no private data)."""
    width = max([len(c.categories or ()) for c in schema.columns] + [2])
    codes = np.empty((width, len(schema.columns)))
    for j, column in enumerate(schema.columns):
        lower, upper = column.bounds
        if column.kind == "categorical":
            codes[:, j] = np.arange(width) % len(column.categories or ())
        else:
            codes[:, j] = np.where(np.arange(width) % 2 == 0, lower, upper)
    return schema.decode(codes)


def integer_bins(lower: float, upper: float) -> int:
    """One bin per integer value when the range is small, else the cap."""
    return int(min(max(upper - lower + 1, 2), MAX_INTEGER_BINS))


def declared_transformer(schema: Schema, style: str, bins: int = CUBE_BINS) -> Any:
    """The documented declarative ``TableTransformer`` for ``schema``, fitted on the public frame only."""
    from snsynth.transform import (BinTransformer, ChainTransformer, LabelTransformer, MinMaxTransformer,
                                   OneHotEncoder, TableTransformer)

    columns: list[Any] = []
    for column in schema.columns:
        if column.kind == "categorical":
            label = LabelTransformer(nullable=False)
            columns.append(ChainTransformer([label, OneHotEncoder()]) if style == "gan" else label)
        elif style == "gan":
            columns.append(MinMaxTransformer(lower=float(column.lower), upper=float(column.upper), nullable=False))
        else:
            count = integer_bins(column.lower, column.upper) if column.kind == "integer" else bins
            columns.append(BinTransformer(bins=count, lower=float(column.lower), upper=float(column.upper),
                                          nullable=False))
    transformer = TableTransformer(columns)
    transformer.fit(public_frame(schema), epsilon=0.0)
    if transformer.odometer.spent[0] != 0.0:
        raise TargetError("declaring the public transformer spent privacy budget: the schema lacks bounds")
    return transformer


def column_hints(schema: Schema) -> tuple[list[str], list[str]]:
    """(categorical, continuous) column names for snsynth's inferred transformer."""
    categorical = [c.name for c in schema.columns if c.kind == "categorical"]
    return categorical, [c.name for c in schema.columns if c.kind != "categorical"]


class SmartnoiseSynthesizer:
    """``Synthesizer.create(name, epsilon=ε, [delta=δ,] **knobs)``, ``fit``, ``sample``."""

    synth: ClassVar[str] = ""
    style: ClassVar[str] = "gan"  # gan: one-hot + min-max; cube: labels + bins

    def __init__(self) -> None:
        self.model: Any = None
        self.schema: Schema | None = None

    def fit(self, data: pd.DataFrame, *, schema: Schema, epsilon: float, delta: float, seed: int,
            domain: str = "public", preprocessor_eps: float = 0.0, bins: int = CUBE_BINS,
            **knobs: Any) -> "SmartnoiseSynthesizer":
        from snsynth import Synthesizer

        if domain not in ("public", "data"):
            raise ValueError(f"domain must be 'public' or 'data', got {domain!r}")
        self.schema = schema
        data = data[list(schema.names)].reset_index(drop=True)
        created = dict(knobs)
        if "delta" in self._constructor_parameters() and delta > 0:
            created["delta"] = float(delta)
        self.model = Synthesizer.create(self.synth, epsilon=float(epsilon), **created)
        if domain == "public":
            self.model.fit(data, transformer=declared_transformer(schema, self.style, bins), preprocessor_eps=0.0)
        else:
            categorical, continuous = column_hints(schema)
            self.model.fit(data, categorical_columns=categorical, continuous_columns=continuous,
                           preprocessor_eps=float(preprocessor_eps))
        return self

    def sample(self, n: int) -> pd.DataFrame:
        if self.model is None or self.schema is None:
            raise TargetError("sample() before fit()")
        out = self.model.sample(int(n))
        if not isinstance(out, pd.DataFrame):
            out = pd.DataFrame(np.asarray(out), columns=list(self.schema.names))
        return out

    def _constructor_parameters(self) -> set[str]:
        from snsynth.base import synth_map

        module_name, _, cls_name = synth_map[self.synth]["class"].rpartition(".")
        module = __import__(module_name, fromlist=[cls_name])
        return set(inspect.signature(getattr(module, cls_name).__init__).parameters)


class PATEGAN(SmartnoiseSynthesizer):
    """PATE-GAN: ``Synthesizer.create("pategan", epsilon=ε, delta=δ)`` (``snsynth.pytorch.nn.pategan.PATEGAN``
    docstring-less; hyperparameters from its constructor: batch_size, teacher_iters, student_iters).

    Trains until its moments accountant reaches ε (no epoch knob); one teacher per 1,000 rows, so the
    data needs at least 1,000 rows. https://docs.smartnoise.org/synth/synthesizers/index.html
    """

    synth = "pategan"


class PATECTGAN(SmartnoiseSynthesizer):
    """PATE-CTGAN: ``Synthesizer.create("patectgan", epsilon=ε, delta=δ, epochs=...)``
    (https://docs.smartnoise.org/synth/synthesizers/patectgan.html)."""

    synth = "patectgan"


class DPCTGAN(SmartnoiseSynthesizer):
    """DP-CTGAN (opacus DP-SGD): ``Synthesizer.create("dpctgan", epsilon=ε, delta=δ, epochs=...)``
    (https://docs.smartnoise.org/synth/synthesizers/dpctgan.html)."""

    synth = "dpctgan"


class DPGAN(SmartnoiseSynthesizer):
    """DP-GAN (opacus DP-SGD): ``Synthesizer.create("dpgan", epsilon=ε, delta=δ, epochs=...)``
    (``snsynth.pytorch.nn.dpgan.DPGAN``; https://docs.smartnoise.org/synth/synthesizers/index.html)."""

    synth = "dpgan"


class MWEM(SmartnoiseSynthesizer):
    """MWEM: ``Synthesizer.create("mwem", epsilon=ε, ...)``, categorical (cube) data only
    (https://docs.smartnoise.org/synth/synthesizers/mwem.html). Pure ε-DP: no δ."""

    synth = "mwem"
    style = "cube"


class MST(SmartnoiseSynthesizer):
    """MST: ``Synthesizer.create("mst", epsilon=ε, delta=δ)``, categorical (cube) data
    (https://docs.smartnoise.org/synth/synthesizers/mst.html)."""

    synth = "mst"
    style = "cube"


class AIM(SmartnoiseSynthesizer):
    """AIM: ``Synthesizer.create("aim", epsilon=ε, delta=δ)``, categorical (cube) data
    (https://docs.smartnoise.org/synth/synthesizers/aim.html)."""

    synth = "aim"
    style = "cube"


class PACSynth(SmartnoiseSynthesizer):
    """PAC-Synth (aggregate seeded): ``Synthesizer.create("pacsynth", epsilon=ε)``, categorical data
    (https://docs.smartnoise.org/synth/synthesizers/pac_synth.html)."""

    synth = "pacsynth"
    style = "cube"


#: smartnoise-synth states ε-DP for the synthesizer; its mechanisms are calibrated per record added or
#: removed (counts and marginals at sensitivity 1, PATE votes, DP-SGD with sampling), and the domain is public
#: only when the user declares it (the targets do; ``--hp domain=data`` audits the inferred default)
CLAIM = ("smartnoise-synth docs (synthesizers: ε-DP); counts/marginals at sensitivity 1 per record, "
         "PATE and DP-SGD accounting per record: add/remove")


def _info(cls: type, settings: dict[str, Any], dataset: str, seedable: bool, note: str = "") -> TargetInfo:
    doc = " ".join((cls.__doc__ or "").split())
    return TargetInfo(
        name=f"{LIBRARY}:{cls.synth}", library=LIBRARY, kind="synthesizer", env="smartnoise",
        factory=f"{__name__}:{cls.__name__}", settings=dict(settings),
        doc=f"{doc} Public domain through a declared TableTransformer ({TRANSFORMS_DOC}).",
        dataset=dataset, requires=("snsynth",), seedable=seedable,
        note=note or ("noise drawn through OpenDP: not reproducible from a seed" if not seedable else ""),
        neighbours="add/remove", public=("domain (declared transformer)",), claim_source=CLAIM)


#: GANs get D′ = 1,000 rows and D = 1,001 (PATE-GAN has int(rows / 1000) teachers and crashes with 0, so
#: D′ itself needs 1,000 rows — with 999 only D′ crashes and the crash reveals membership); epochs so one fit
#: takes seconds on one core
_GAN_DATA = "worstcase-continuous@1000"
_CUBE_DATA = "worstcase-categorical"
_MWEM_NOTE = ("noise drawn through OpenDP: not reproducible from a seed; MWEM sizes each histogram "
              "dimension from the min/max of the private (transformed) data (snsynth/mwem.py, "
              "_histogram_from_data_attributes), not from the transformer's public cardinality")
_OPACUS = ("opacus 0.14 seeds its noise generator from os.urandom (secure_rng off): "
           "not reproducible from a seed")

TARGETS: list[TargetInfo] = [
    _info(PATEGAN, {}, _GAN_DATA, True, "trains until its accountant reaches ε; 1 teacher at 1,000-1,001 rows"),
    _info(PATECTGAN, {"epochs": 2, "batch_size": 500, "verbose": False}, _GAN_DATA, True),
    _info(DPCTGAN, {"epochs": 2, "batch_size": 500, "verbose": False}, _GAN_DATA, False, _OPACUS),
    _info(DPGAN, {"epochs": 2, "batch_size": 64}, _GAN_DATA, False, _OPACUS),
    _info(MWEM, {"iterations": 10}, _CUBE_DATA, False, _MWEM_NOTE),
    _info(MST, {}, _CUBE_DATA, False),
    _info(AIM, {}, _CUBE_DATA, False),
]
