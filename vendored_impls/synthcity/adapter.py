"""dpcheck adapters for the synthcity PATE-GAN rebuild (``Upstream``) and its corrected twin (``Fixed``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .._common import as_numeric_array
from .._torch import (integer_columns, merge_hyperparams, public_bounds, require_bounds, seed_torch,
                      single_threaded)

_HERE = Path(__file__).parent

#: Table 3 of the audit (synthcity column); max_iterations = the plugin's n_iter
DEFAULTS: dict[str, Any] = {
    "max_iterations": 1000,
    "num_teachers": 10,
    "lamda": 1e-3,
    "num_moments": 100,
    "batch_size": 200,
    "student_epochs": 10,
    "lr": 1e-4,
    "bounds": None,
    "integer_columns": None,
}
#: the twin's public training schedule: generated batches per student epoch (upstream's
#: ceil(N / batch_size) reads the private N; 4 is its value at Cervical's size, 601 to 800 rows)
FIXED_DEFAULTS: dict[str, Any] = {**DEFAULTS, "student_batches": 4}


class _SynthcityAdapter:
    framework = "torch"
    upstream = ("vanderschaarlab/synthcity (PyPI synthcity 0.2.x), "
                "src/synthcity/plugins/privacy/plugin_pategan.py")
    _fixed = False

    def __init__(self) -> None:
        self._model: Any = None
        self._seed = 0
        self._draws = 0

    def _module(self) -> Any:
        if self._fixed:
            from . import fixed as module
        else:
            from . import upstream as module
        return module

    def fit(self, data: Any, *, epsilon: float, delta: float | None, seed: int, probe: Any = None,
            **hyperparams: Any) -> "_SynthcityAdapter":
        params = merge_hyperparams(self.name, FIXED_DEFAULTS if self._fixed else DEFAULTS, hyperparams)
        x, _ = as_numeric_array(data, min_rows=int(params["num_teachers"]))
        # upstream's encoder reads bounds from the data: the buggy version ignores passed bounds
        bounds = (require_bounds(self.name, params["bounds"], x.shape[1]) if self._fixed
                  else public_bounds(params["bounds"], x.shape[1]))
        ints = integer_columns(data, x, params["integer_columns"])
        seed_torch(seed)
        extra = {"bounds": bounds, "student_batches": int(params["student_batches"])} if self._fixed else {}
        model = self._module().PATEGAN(
            n_iter=int(params["max_iterations"]), n_iter_student=int(params["student_epochs"]),
            n_teachers=int(params["num_teachers"]), epsilon=float(epsilon),
            delta=None if delta is None else float(delta), lamda=float(params["lamda"]),
            alpha=int(params["num_moments"]), batch_size=int(params["batch_size"]), lr=float(params["lr"]),
            integer_columns=ints, probe=probe, **extra,
        )
        import sklearn

        # the data is already validated: skip sklearn's per-call re-validation (pure overhead here)
        with sklearn.config_context(assume_finite=True, skip_parameter_validation=True), single_threaded():
            model.fit(x)
        self._model, self._seed, self._draws = model, seed, 0
        return self

    def sample(self, n: int) -> np.ndarray:
        if self._model is None:
            raise RuntimeError(f"{self.name}: call fit before sample")
        import torch

        self._draws += 1
        torch.manual_seed(self._seed * 7919 + self._draws)
        return self._model.generate(int(n))

    def release_model(self) -> Any:
        """The trained generator and student discriminator (the critic), with the encoder's
        min/max (``synthcity``: read from the training data; twin: the public bounds), for
        dpcheck.audit.attacks.whitebox. The teachers (kept on the vendored object between iterations) are
        not released: PATE-GAN's claim covers the generator and the student, which see the data only
        through noisy votes; teachers fitted on the rows themselves are outside it."""
        if self._model is None:
            raise RuntimeError(f"{self.name}: call fit before release_model")
        import torch

        from dpcheck.audit.attacks.whitebox import ReleasedModel, flat_parameters

        model = self._model
        encoder, student = model.encoder, model.discriminator
        width = len(np.atleast_1d(encoder.min_))

        def critic(x: np.ndarray) -> np.ndarray:
            inputs = encoder.transform(np.asarray(x, dtype=np.float64).reshape(-1, width))
            with torch.no_grad():
                scores = student(torch.as_tensor(np.asarray(inputs), dtype=torch.float32))
            return scores.numpy().astype(np.float64).ravel()

        params = {"generator": flat_parameters(model.generator), "critic": flat_parameters(student),
                  "scale_lower": encoder.min_, "scale_upper": encoder.max_}
        return ReleasedModel(params=params, critic=critic)

    def accountant_update(self, n0: np.ndarray, n1: np.ndarray, *, lamda: float, num_moments: int) -> np.ndarray:
        """Increment of alpha(1..L) from one labelled batch, computed by the plugin's ``_update_alpha``."""
        model = self._module().PATEGAN(lamda=float(lamda), alpha=int(num_moments))
        with np.errstate(all="ignore"):
            model._update_alpha(np.asarray(n0, dtype=np.float64), np.asarray(n1, dtype=np.float64))
        return model.alpha_dict.copy()


class Upstream(_SynthcityAdapter):
    name = "synthcity"
    source_files = [str(_HERE / "upstream.py")]


class Fixed(_SynthcityAdapter):
    name = "synthcity-fixed"
    source_files = [str(_HERE / "fixed.py")]
    _fixed = True
