"""Signature mappings: how to call an installed function with the quantities an oracle speaks of.

A mapping says which property to test (``pategan-moments``, ``laplace-scale``,
``gaussian-scale``), which argument of the function gets which quantity, and how to read the
answer. It is plain JSON (``docs/testing.md`` documents every field)::

    {"property": "gaussian-scale", "formula": "analytic",
     "kwargs": {"epsilon": "epsilon", "delta": "delta", "sensitivity": "sensitivity"},
     "result": [{"call": "variance", "args": [0]}], "reads": "variance"}

Quantities: ``n0``, ``n1`` (vote counts per labelled sample), ``votes`` (= ``n1``),
``num_teachers``, ``lamda`` (PATE-GAN's λ, the inverse Laplace scale), ``orders`` (``1..L``),
``num_moments`` (``L``) for accountants; ``epsilon``, ``delta``, ``sensitivity`` for noise
calibration. A source is a quantity name, ``{"value": constant}``, or ``{"from": quantity,
"as": "numpy" | "torch" | "list" | "float" | "int", "dtype": "float64", "column": true}``.

Imports only the standard library and numpy (torch lazily, for ``"as": "torch"``): the worker in a
target's own virtualenv runs :func:`call` to build the arguments and read the result there.
"""
from __future__ import annotations

import importlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

PROPERTIES = ("pategan-moments", "laplace-scale", "gaussian-scale")
ACCOUNTANT_QUANTITIES = ("n0", "n1", "votes", "num_teachers", "lamda", "orders", "num_moments")
NOISE_QUANTITIES = ("epsilon", "delta", "sensitivity")
READS = ("moments", "scale", "variance")
#: what the returned scale is compared with (the violation test is always "below the minimal scale")
FORMULAS = {
    "pategan-moments": ("theorem5",),
    "laplace-scale": ("pure", "minimal"),
    "gaussian-scale": ("classic", "analytic", "guarantee"),
}


class MappingError(ValueError):
    """A mapping that cannot be used (unknown property, quantity, or malformed source)."""


@dataclass(frozen=True)
class SignatureMap:
    property: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: steps applied to the return value: {"attr": name} | {"item": key} | {"call": name, "args": [...]}
    result: tuple[dict[str, Any], ...] = ()
    reads: str = "scale"
    formula: str = ""
    #: ranges Hypothesis draws from (log-uniform); delta None = δ is not drawn (pure ε-DP)
    epsilon: tuple[float, float] = (1e-2, 10.0)
    delta: tuple[float, float] | None = (1e-10, 1e-2)
    sensitivity: tuple[float, float] = (1e-2, 1e2)
    lambda_range: tuple[float, float] = (1e-5, 0.3)
    rtol: float = 1e-6
    name: str = ""

    def __post_init__(self) -> None:
        if self.property not in PROPERTIES:
            raise MappingError(f"unknown property {self.property!r}; one of {', '.join(PROPERTIES)}")
        if self.reads not in READS:
            raise MappingError(f"unknown 'reads' {self.reads!r}; one of {', '.join(READS)}")
        if self.formula and self.formula not in FORMULAS[self.property]:
            raise MappingError(f"formula {self.formula!r} does not apply to {self.property}; "
                               f"one of {', '.join(FORMULAS[self.property])}")
        allowed = ACCOUNTANT_QUANTITIES if self.property == "pategan-moments" else NOISE_QUANTITIES
        for source in (*self.args, *self.kwargs.values()):
            name = _source_name(source)
            if name is not None and name not in allowed:
                raise MappingError(f"{self.property} has no quantity {name!r}; known: {', '.join(allowed)}")
        for step in self.result:
            if not isinstance(step, dict) or not ({"attr", "item", "call"} & set(step)):
                raise MappingError(f"result step {step!r} is not {{'attr'|'item'|'call': ...}}")

    @property
    def kind(self) -> str:
        return "accountant" if self.property == "pategan-moments" else "noise"

    @property
    def effective_formula(self) -> str:
        return self.formula or FORMULAS[self.property][0 if self.property != "gaussian-scale" else 2]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["args"], out["result"] = list(self.args), list(self.result)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SignatureMap":
        data = dict(data)
        base = data.pop("base", None)
        if base and base not in BUILTIN:
            raise MappingError(f"unknown base mapping {base!r}; built-in: {', '.join(BUILTIN)}")
        start = BUILTIN[base].to_dict() if base else {}
        merged = {**start, **data}
        unknown = set(merged) - set(cls.__dataclass_fields__)
        if unknown:
            raise MappingError(f"unknown mapping field(s): {', '.join(sorted(unknown))}")
        for key in ("args", "result"):
            merged[key] = tuple(merged.get(key) or ())
        for key in ("epsilon", "sensitivity", "lambda_range"):
            if key in merged:
                merged[key] = tuple(float(v) for v in merged[key])
        if merged.get("delta") is not None:
            merged["delta"] = tuple(float(v) for v in merged["delta"])
        return cls(**merged)

    def with_(self, **changes: Any) -> "SignatureMap":
        return replace(self, **changes)


def _source_name(source: Any) -> str | None:
    if isinstance(source, str):
        return source
    if isinstance(source, dict):
        if "value" in source:
            return None
        if "from" in source:
            return str(source["from"])
    raise MappingError(f"source {source!r} is not a quantity name, {{'value': …}} or {{'from': …}}")


BUILTIN: dict[str, SignatureMap] = {
    # the PATE-GAN accountant signature of smartnoise-synth, borealis and the TF original's port:
    # moments_acc(num_teachers, votes, lap_scale, l_list) with torch tensors, votes = the count of
    # teachers voting 1 as a float64 column, orders l = 1..L as int64; returns α(1..L) summed over the batch
    "pategan-moments": SignatureMap(
        "pategan-moments",
        args=("num_teachers", {"from": "votes", "as": "torch", "dtype": "float64", "column": True},
              "lamda", {"from": "orders", "as": "torch", "dtype": "int64"}),
        reads="moments", formula="theorem5", name="pategan-moments"),
    "laplace-scale": SignatureMap(
        "laplace-scale", kwargs={"epsilon": "epsilon", "sensitivity": "sensitivity"}, reads="scale",
        formula="pure", delta=None, name="laplace-scale"),
    "gaussian-scale": SignatureMap(
        "gaussian-scale", kwargs={"epsilon": "epsilon", "delta": "delta", "sensitivity": "sensitivity"},
        reads="scale", formula="guarantee", name="gaussian-scale"),
}

_DIFFPRIVLIB_VARIANCE = ({"call": "variance", "args": [0]},)
#: installed functions dpcheck knows: the env they run in and their mapping
KNOWN: dict[str, tuple[str, SignatureMap]] = {
    "snsynth.pytorch.nn.privacy_utils:moments_acc": ("smartnoise", BUILTIN["pategan-moments"]),
    # diffprivlib's public way to the scale is the mechanism's variance(value) (laplace.py:107,
    # gaussian.py: variance = scale²); Laplace with δ > 0 uses ε − log(1 − δ)
    "diffprivlib.mechanisms:Laplace": ("main", BUILTIN["laplace-scale"].with_(
        kwargs={"epsilon": "epsilon", "delta": "delta", "sensitivity": "sensitivity"},
        result=_DIFFPRIVLIB_VARIANCE, reads="variance", formula="minimal", delta=(1e-10, 1e-2),
        name="laplace-scale (diffprivlib variance)")),
    # Gaussian is the classic mechanism, documented for ε ≤ 1 ("Must be in (0, 1]")
    "diffprivlib.mechanisms:Gaussian": ("main", BUILTIN["gaussian-scale"].with_(
        result=_DIFFPRIVLIB_VARIANCE, reads="variance", formula="classic", epsilon=(1e-2, 1.0),
        name="gaussian-scale (diffprivlib classic, ε ≤ 1)")),
    "diffprivlib.mechanisms:GaussianAnalytic": ("main", BUILTIN["gaussian-scale"].with_(
        result=_DIFFPRIVLIB_VARIANCE, reads="variance", formula="analytic",
        name="gaussian-scale (diffprivlib analytic)")),
    "dpcheck.installed.opendp_calibration:laplace_scale": ("main", BUILTIN["laplace-scale"].with_(
        name="laplace-scale (opendp binary search)")),
    "dpcheck.installed.opendp_calibration:gaussian_scale": ("main", BUILTIN["gaussian-scale"].with_(
        name="gaussian-scale (opendp zCDP → (ε, δ))")),
}
#: a module prefix → the env its library lives in, for functions not in KNOWN
ENV_OF_MODULE = {"snsynth": "smartnoise", "snsql": "smartnoise", "synthcity": "synthcity", "dpmm": "dpmm"}


def load(spec: str | None, function: str, kind: str) -> SignatureMap:
    """The mapping named ``spec`` (built-in name or JSON file), else the known one for ``function``,
    else the built-in default of ``kind`` (``accountant`` → pategan-moments)."""
    if spec:
        if spec in BUILTIN:
            return BUILTIN[spec]
        path = Path(spec)
        if not path.is_file():
            raise MappingError(f"--map {spec!r} is neither a built-in mapping ({', '.join(BUILTIN)}) nor a file")
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise MappingError(f"{path}: not JSON: {exc}") from None
        return SignatureMap.from_dict({"name": path.name, **data})
    if function in KNOWN:
        return KNOWN[function][1]
    if kind == "accountant":
        return BUILTIN["pategan-moments"]
    raise MappingError(f"no mapping known for {function}: pass --map laplace-scale, --map gaussian-scale or "
                       "--map FILE.json (docs/testing.md)")


def env_for(function: str) -> str:
    if function in KNOWN:
        return KNOWN[function][0]
    return ENV_OF_MODULE.get(function.split(":")[0].split(".")[0], "main")


# --------------------------------------------------------------------------- calling (both sides)


def resolve(function: str) -> Callable[..., Any]:
    """Import ``package.module:attr.path``; ImportError/AttributeError name what is missing."""
    if ":" not in function:
        raise MappingError(f"{function!r} is not MODULE:FUNCTION")
    module_name, _, attr_path = function.partition(":")
    module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr_path.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise MappingError(f"{function} is not callable")
    return obj


def quantities(case: dict[str, Any]) -> dict[str, Any]:
    """The case plus the derived quantities (votes = n1, orders = 1..L)."""
    out = dict(case)
    if "n1" in case:
        out.setdefault("votes", case["n1"])
    if "num_moments" in case:
        out.setdefault("orders", list(range(1, int(case["num_moments"]) + 1)))
    return out


def _convert(source: Any, values: dict[str, Any]) -> Any:
    if isinstance(source, str):
        if source not in values:
            raise MappingError(f"quantity {source!r} is not part of this case")
        return values[source]
    if "value" in source:
        return source["value"]
    value = values[source["from"]]
    kind = source.get("as", "numpy")
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    array = np.asarray(value, dtype=source.get("dtype"))
    if source.get("column"):
        array = array.reshape(-1, 1)
    if kind == "list":
        return array.tolist()
    if kind == "numpy":
        return array
    if kind == "torch":
        import torch

        return torch.as_tensor(array)
    raise MappingError(f"unknown conversion 'as': {kind!r} (numpy, torch, list, float, int)")


def _plain(value: Any) -> Any:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    array = np.asarray(value, dtype=np.float64)
    return float(array) if array.ndim == 0 else array.ravel().tolist()


def call(function: Callable[..., Any], smap: SignatureMap, case: dict[str, Any]) -> Any:
    """Call ``function`` on one case through ``smap``; a float, or a list of floats."""
    values = quantities(case)
    args = [_convert(s, values) for s in smap.args]
    kwargs = {name: _convert(s, values) for name, s in smap.kwargs.items()}
    value = function(*args, **kwargs)
    for step in smap.result:
        if "attr" in step:
            value = getattr(value, step["attr"])
        elif "item" in step:
            value = value[step["item"]]
        else:
            value = getattr(value, step["call"])(*step.get("args", []), **step.get("kwargs", {}))
    return _plain(value)


def call_many(function: str, smap_dict: dict[str, Any], cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every case: ``{"value": …}`` or ``{"error": "Type: message"}`` (a refusal is not a crash)."""
    fn = resolve(function)
    smap = SignatureMap.from_dict(smap_dict)
    out = []
    for case in cases:
        try:
            out.append({"value": call(fn, smap, case)})
        except Exception as exc:  # noqa: BLE001 - the library's refusal of one case is data
            out.append({"error": f"{type(exc).__name__}: {exc}"})
    return out


def scale_from(value: Any, smap: SignatureMap) -> float:
    """The noise scale (Laplace b, Gaussian σ) from what the mapping reads."""
    x = float(np.asarray(value, dtype=np.float64).ravel()[0]) if not isinstance(value, float) else value
    if smap.reads == "variance":
        return float(np.sqrt(x / 2.0)) if smap.property == "laplace-scale" else float(np.sqrt(x))
    return x
