"""dpcheck adapters for the borealis PATE-GAN rebuild (``Upstream``) and its corrected twin (``Fixed``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .._common import as_numeric_array
from .._torch import integer_columns, merge_hyperparams, public_bounds, require_bounds, seed_torch, single_threaded

_HERE = Path(__file__).parent

#: Table 3 of the audit (borealis column); upstream has no iteration cap, 10,000 is the audit's
DEFAULTS: dict[str, Any] = {
    "max_iterations": 10_000,
    "num_teachers": 10,
    "lamda": 1e-4,
    "num_moments": 100,
    "batch_size": 64,
    "teacher_iters": 5,
    "student_iters": 5,
    "lr": 1e-4,
    "bounds": None,
    "integer_columns": None,
    "conditional": False,
    "label_column": -1,
    # twin only: public label values and their ratios for conditional generation
    "label_values": (0.0, 1.0),
    "class_ratios": None,
}


class _BorealisAdapter:
    framework = "torch"
    upstream = ("BorealisAI/private-data-generation (GitHub, master), models/pate_gan.py + utils/helper.py "
                "(+ the data handling of evaluate.py)")
    _fixed = False

    def __init__(self) -> None:
        self._model: Any = None

    def _modules(self) -> tuple[Any, Any, Any]:
        if self._fixed:
            from . import fixed_evaluate as evaluate, fixed_helper as helper, fixed_pate_gan as pate_gan
        else:
            from . import upstream_evaluate as evaluate, upstream_helper as helper, upstream_pate_gan as pate_gan
        return evaluate, helper, pate_gan

    def fit(self, data: Any, *, epsilon: float, delta: float | None, seed: int, probe: Any = None,
            **hyperparams: Any) -> "_BorealisAdapter":
        params = merge_hyperparams(self.name, DEFAULTS, hyperparams)
        k = int(params["num_teachers"])
        x, _ = as_numeric_array(data, min_rows=k)
        d = x.shape[1]
        # upstream's driver scales with bounds read from the data: the buggy version ignores passed bounds
        bounds = require_bounds(self.name, params["bounds"], d) if self._fixed else public_bounds(params["bounds"], d)
        ints = integer_columns(data, x, params["integer_columns"])
        conditional = bool(params["conditional"])
        label_col = int(params["label_column"]) % d if conditional else None
        if conditional and d < 2:
            raise ValueError(f"{self.name}: conditional mode needs a label column and at least one feature")
        features = np.delete(x, label_col, axis=1) if conditional else x
        feature_cols = [j for j in range(d) if j != label_col]

        labels = np.zeros(len(x))
        classes = None
        public_ratios = None
        if conditional and self._fixed:
            classes = np.asarray(params["label_values"], dtype=np.float64)
            if not np.isin(x[:, label_col], classes).all():
                raise ValueError(f"{self.name}: some labels are not among the public label_values {classes.tolist()}")
            labels = np.argmax(x[:, label_col][:, None] == classes[None, :], axis=1).astype(np.float64)
            ratios = params["class_ratios"]
            public_ratios = (np.full(len(classes), 1.0 / len(classes)) if ratios is None
                             else np.asarray(ratios, dtype=np.float64))
            if public_ratios.shape != classes.shape or not np.isclose(public_ratios.sum(), 1.0):
                raise ValueError(f"{self.name}: class_ratios must be {len(classes)} probabilities summing to 1")
        elif conditional:
            classes, labels = self._modules()[0].encode_labels(x[:, label_col])

        seed_torch(seed)
        evaluate, _, pate_gan = self._modules()
        if self._fixed:
            scaled, scaler = evaluate.preprocess(features, (bounds[0][feature_cols], bounds[1][feature_cols]), probe)
        else:
            scaled, scaler = evaluate.preprocess(features, probe)
        model = pate_gan.PATE_GAN(
            input_dim=features.shape[1], z_dim=max(1, features.shape[1] // 4), num_teachers=k,
            target_epsilon=float(epsilon), target_delta=1e-5 if delta is None else float(delta),
            conditional=conditional, probe=probe,
        )
        hp = pate_gan.Hyperparams(
            batch_size=int(params["batch_size"]), num_teacher_iters=int(params["teacher_iters"]),
            num_student_iters=int(params["student_iters"]), num_moments=int(params["num_moments"]),
            lap_scale=float(params["lamda"]), lr=float(params["lr"]), max_iterations=int(params["max_iterations"]),
        )
        with single_threaded():
            if self._fixed:
                model.train(scaled, labels, hp, public_class_ratios=public_ratios)
            else:
                model.train(scaled, labels, hp)
        self._model, self._scaler, self._classes = model, scaler, classes
        self._ints, self._label_col, self._d, self._probe = ints, label_col, d, probe
        self._seed, self._draws = seed, 0
        return self

    def sample(self, n: int) -> np.ndarray:
        if self._model is None:
            raise RuntimeError(f"{self.name}: call fit before sample")
        import torch

        self._draws += 1
        torch.manual_seed(self._seed * 7919 + self._draws)
        evaluate, _, _ = self._modules()
        synthetic, categories = self._model.generate(int(n), self._model.class_ratios)
        if self._fixed:
            feature_ints = np.delete(self._ints, self._label_col) if self._label_col is not None else self._ints
            out = evaluate.postprocess(synthetic, self._scaler, feature_ints, self._probe)
        else:
            out = evaluate.postprocess(synthetic, self._scaler, self._probe)
        out = np.asarray(out, dtype=np.float64)
        if self._label_col is not None:
            out = np.insert(out, self._label_col, self._classes[np.rint(categories).astype(np.int64)], axis=1)
        return out

    def release_model(self) -> Any:
        """The trained generator and student discriminator (the released critic), with the scaling
        and label encoding the model applies to its inputs (dpcheck.audit.attacks.whitebox)."""
        if self._model is None:
            raise RuntimeError(f"{self.name}: call fit before release_model")
        import torch

        from dpcheck.audit.attacks.whitebox import ReleasedModel, flat_parameters

        model, scaler, classes, label_col = self._model, self._scaler, self._classes, self._label_col
        student = model.student_disc

        def critic(x: np.ndarray) -> np.ndarray:
            x = np.asarray(x, dtype=np.float64).reshape(-1, self._d)
            features = np.delete(x, label_col, axis=1) if label_col is not None else x
            inputs = np.asarray(scaler.transform(features), dtype=np.float64)
            if label_col is not None:  # the class index the model was trained with; an unseen class gets the next one
                found = x[:, [label_col]] == np.asarray(classes)[None, :]
                codes = np.where(found.any(axis=1), found.argmax(axis=1), len(classes))
                inputs = np.column_stack([inputs, codes])
            with torch.no_grad():
                return student(torch.as_tensor(inputs, dtype=torch.float32)).numpy().astype(np.float64).ravel()

        lower, upper = ((scaler.data_min_, scaler.data_max_) if hasattr(scaler, "data_min_")
                        else (scaler.lower, scaler.upper))
        params = {"generator": flat_parameters(model.generator), "critic": flat_parameters(student), "scale_lower": lower,
                  "scale_upper": upper}
        if label_col is not None:
            params["classes"] = np.asarray(classes, dtype=np.float64)
            params["class_ratios"] = np.asarray(model.class_ratios, dtype=np.float64)
        return ReleasedModel(params=params, critic=critic)

    def accountant_update(self, n0: np.ndarray, n1: np.ndarray, *, lamda: float, num_moments: int) -> np.ndarray:
        """Increment of alpha(1..L) for one labelled batch, computed by the helper's ``moments_acc``."""
        import torch

        _, helper, _ = self._modules()
        n0 = torch.as_tensor(np.atleast_1d(np.asarray(n0, dtype=np.float64)))
        n1 = torch.as_tensor(np.atleast_1d(np.asarray(n1, dtype=np.float64)))
        l_list = 1 + torch.tensor(range(int(num_moments)))
        with np.errstate(all="ignore"):
            alpha = helper.moments_acc((n0 + n1).reshape(1, -1), n1, float(lamda), l_list)
        return alpha.numpy().astype(np.float64)


class Upstream(_BorealisAdapter):
    name = "borealis"
    source_files = [str(_HERE / f) for f in ("upstream_pate_gan.py", "upstream_helper.py", "upstream_evaluate.py")]


class Fixed(_BorealisAdapter):
    name = "borealis-fixed"
    source_files = [str(_HERE / f) for f in ("fixed_pate_gan.py", "fixed_helper.py", "fixed_evaluate.py")]
    _fixed = True
