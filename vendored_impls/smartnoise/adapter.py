"""dpcheck adapters for the smartnoise PATE-GAN rebuild (``Upstream``) and its corrected twin (``Fixed``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .._common import as_numeric_array
from .._torch import integer_columns, merge_hyperparams, public_bounds, seed_torch, single_threaded

_HERE = Path(__file__).parent

#: Table 3 of the audit (smartnoise column). num_teachers None = upstream's N/1000 (at least 1);
#: lamda None = upstream's hard-coded noise multiplier 1e-3; upstream has no iteration cap.
DEFAULTS: dict[str, Any] = {
    "max_iterations": 10_000,
    "num_teachers": None,
    "lamda": None,
    "num_moments": 100,
    "batch_size": 64,
    "teacher_iters": 5,
    "student_iters": 5,
    "latent_dim": 64,
    "binary": False,
    "lr": 1e-4,
    "bounds": None,
    "preprocessor_eps": None,
    "integer_columns": None,
}

#: share of epsilon spent on DP bounds when bounds are not passed and preprocessor_eps is not given
DEFAULT_PREPROCESSOR_SHARE = 0.1


class _SmartnoiseAdapter:
    framework = "torch"
    upstream = ("opendp/smartnoise-sdk (PyPI smartnoise-synth), synth/snsynth/pytorch/nn/pategan.py + "
                "privacy_utils.py")
    _fixed = False

    def __init__(self) -> None:
        self._model: Any = None

    def _modules(self) -> tuple[Any, Any]:
        if self._fixed:
            from . import fixed_pategan as pategan, fixed_privacy_utils as utils
        else:
            from . import upstream_pategan as pategan, upstream_privacy_utils as utils
        return pategan, utils

    def fit(self, data: Any, *, epsilon: float, delta: float | None, seed: int, probe: Any = None,
            **hyperparams: Any) -> "_SmartnoiseAdapter":
        params = merge_hyperparams(self.name, DEFAULTS, hyperparams)
        k = params["num_teachers"]
        x, _ = as_numeric_array(data, min_rows=1 if k is None else int(k))
        bounds = public_bounds(params["bounds"], x.shape[1])
        pre_eps = params["preprocessor_eps"]
        if pre_eps is None:
            pre_eps = 0.0 if bounds is not None else DEFAULT_PREPROCESSOR_SHARE * float(epsilon)
        ints = integer_columns(data, x, params["integer_columns"])
        seed_torch(seed)
        pategan, _ = self._modules()
        model = pategan.PATEGAN(
            float(epsilon), delta=None if delta is None else float(delta), binary=bool(params["binary"]),
            latent_dim=int(params["latent_dim"]), batch_size=int(params["batch_size"]),
            teacher_iters=int(params["teacher_iters"]), student_iters=int(params["student_iters"]),
        )
        if params["lamda"] is not None:
            model._lamda_override = float(params["lamda"])
        with single_threaded():
            model.train(
                x, bounds=bounds, preprocessor_eps=float(pre_eps), integer_columns=ints,
                num_teachers=None if k is None else int(k), num_moments=int(params["num_moments"]),
                lr=float(params["lr"]), max_iterations=int(params["max_iterations"]), probe=probe,
            )
        self._model, self._seed, self._draws = model, seed, 0
        return self

    def sample(self, n: int) -> np.ndarray:
        if self._model is None:
            raise RuntimeError(f"{self.name}: call fit before sample")
        import torch

        self._draws += 1
        torch.manual_seed(self._seed * 7919 + self._draws)
        return np.asarray(self._model.generate(int(n)), dtype=np.float64)

    def release_model(self) -> Any:
        """The trained generator and student discriminator (the critic), with the transformer's
        bounds (public, or estimated with DP), for dpcheck.audit.attacks.whitebox.

        Upstream's ``PATEGAN`` object keeps the generator and the transformer; its student is a
        local of ``train`` that the vendored copy keeps as ``student_disc`` so that the audit can
        assume the strongest passive release (generator and critic)."""
        if self._model is None:
            raise RuntimeError(f"{self.name}: call fit before release_model")
        import torch

        from dpcheck.audit.attacks.whitebox import ReleasedModel, flat_parameters

        model = self._model
        transformer, student = model._transformer, model.student_disc
        width = len(transformer.lower)

        def critic(x: np.ndarray) -> np.ndarray:
            inputs = transformer.transform(np.asarray(x, dtype=np.float64).reshape(-1, width))
            with torch.no_grad():
                return student(torch.as_tensor(inputs, dtype=torch.float64)).numpy().astype(np.float64).ravel()

        params = {"generator": flat_parameters(model.generator), "critic": flat_parameters(student),
                  "scale_lower": transformer.lower, "scale_upper": transformer.upper}
        return ReleasedModel(params=params, critic=critic)

    def accountant_update(self, n0: np.ndarray, n1: np.ndarray, *, lamda: float, num_moments: int) -> np.ndarray:
        """Increment of alpha(1..L) for one labelled batch, computed by ``privacy_utils.moments_acc``."""
        import torch

        _, utils = self._modules()
        n0 = torch.as_tensor(np.atleast_1d(np.asarray(n0, dtype=np.float64)))
        n1 = torch.as_tensor(np.atleast_1d(np.asarray(n1, dtype=np.float64)))
        l_list = 1 + torch.tensor(range(int(num_moments)))
        alpha = utils.moments_acc((n0 + n1).reshape(1, -1), n1, float(lamda), l_list)
        return alpha.numpy().astype(np.float64)


class Upstream(_SmartnoiseAdapter):
    name = "smartnoise"
    source_files = [str(_HERE / f) for f in ("upstream_pategan.py", "upstream_privacy_utils.py")]


class Fixed(_SmartnoiseAdapter):
    name = "smartnoise-fixed"
    source_files = [str(_HERE / f) for f in ("fixed_pategan.py", "fixed_privacy_utils.py")]
    _fixed = True
