"""What an audit is: the specification, its canonical hash, and per-run seeds.

A shadow run is a pure function of (generation spec, world, run index). The generation spec is
everything that changes the synthetic data (implementation, dataset, target, ε, δ,
hyperparameters, synthetic rows, seed) and excludes what only changes the analysis (attack,
number of runs, split, confidence), so stored runs are reused by every attack and by a larger R.
The one exception: white-box attacks store white-box features instead of synthetic data, under the
extra field ``"release": "model"`` (absent for every other attack).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

WORLD_OUT, WORLD_IN = 0, 1  # D' = D − target, D
WORLDS = (WORLD_OUT, WORLD_IN)
DEFAULT_SPLIT = (0.4, 0.2, 0.4)
ATTACKS = ("querybased", "groundhog", "release", "querybased-subsets", "groundhog-histogram",
           "groundhog-correlation", "groundhog-ensemble", "dcr", "mc-density", "tvd", "auto",
           "release-linear", "logan", "model-params", "gradient-canary", "release-query")
#: attacks that read a mechanism's released array rather than synthetic rows (gradient-canary: the
#: parameters a DP-SGD-style reference releases, dpcheck.audit.attacks.dpsgd)
RELEASE_ATTACKS = ("release", "release-linear", "gradient-canary", "release-query")
#: passive white-box attacks: they read the model an adapter releases (dpcheck.audit.attacks.whitebox); their
#: runs store white-box features, not synthetic data, under the generation field "release": "model"
WHITEBOX_ATTACKS = ("logan", "model-params")
#: where --until-verdict looks (runs per world), fixed before any run
DEFAULT_CHECKPOINTS = (50, 100, 250, 500, 1000)
#: what a spec's runs are for; part of the generation hash, so runs of one phase are never read
#: as runs of another: "audit" (the bound), "select" (target-selection mini-audits), "pilot"
#: (the --search pilot that chooses the hyperparameters)
PHASES = ("audit", "select", "pilot")
#: accepted ε: below 1e-6 the noise drowns every float64 signal, above 1000 no audit can certify anything
EPSILON_RANGE = (1e-6, 1000.0)
#: accepted δ: 0, or from 1e-100 (subnormal δ underflows in the bounds) up to, not including, 1
DELTA_MIN = 1e-100
MAX_RUNS = 1_000_000
MAX_SYNTH_ROWS = 1_000_000


def check_numbers(*, epsilon: float, delta: float, runs: int | None = None, synth_rows: int | None = None,
                  seed: int | None = None) -> None:
    """ValueError naming the first value outside its accepted range (checked before any run)."""
    low, high = EPSILON_RANGE
    if not low <= epsilon <= high:  # also NaN
        raise ValueError(f"epsilon must be between {low:g} and {high:g}, got {epsilon!r}")
    if not (delta == 0 or DELTA_MIN <= delta < 1):
        raise ValueError(f"delta must be 0 or between {DELTA_MIN:g} and 1 (exclusive), got {delta!r}")
    if runs is not None and not 5 <= runs <= MAX_RUNS:
        raise ValueError(f"runs per world must be between 5 and {MAX_RUNS:,}, got {runs}")
    if synth_rows is not None and not 1 <= synth_rows <= MAX_SYNTH_ROWS:
        raise ValueError(f"synthetic rows per run must be between 1 and {MAX_SYNTH_ROWS:,}, got {synth_rows}")
    if seed is not None and seed < 0:
        raise ValueError(f"the seed must be a non-negative integer, got {seed}")


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class AuditSpec:
    impl: str
    dataset: str = "worstcase"
    attack: str = "querybased"
    #: index of the target row in the dataset's D; None = dataset default (worst case) or auto
    target: int | str | None = None  # or "craft" / "craft:K": a crafted canary (dpcheck.audit.runners.crafting)
    epsilon: float = 1.0
    delta: float = 1e-5
    runs: int = 1000  # R per world
    synth_rows: int | None = None  # None = dataset default
    seed: int = 0
    hyperparams: dict[str, Any] = field(default_factory=dict)
    split: tuple[float, float, float] = DEFAULT_SPLIT
    confidence: float = 0.95
    #: one of PHASES: only "audit" runs enter a bound; "select" and "pilot" runs are their own, fresh runs
    phase: str = "audit"
    #: the user's own data (dataset "csv"): {"csv": path, "schema": path, "sha256": digest of both}
    data: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        from dpcheck.audit.core.canary import check_target

        check_target(self.target)
        if self.attack not in ATTACKS:
            raise ValueError(f"unknown attack {self.attack!r}; choose from {', '.join(ATTACKS)}")
        if self.phase not in PHASES:
            raise ValueError(f"unknown phase {self.phase!r}; choose from {', '.join(PHASES)}")
        check_numbers(epsilon=self.epsilon, delta=self.delta, runs=self.runs, synth_rows=self.synth_rows,
                      seed=self.seed)
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")
        if len(self.split) != 3 or min(self.split) <= 0 or abs(sum(self.split) - 1) > 1e-9:
            raise ValueError(f"split must be three positive fractions summing to 1, got {self.split}")

    def generation(self) -> dict[str, Any]:
        """The part of the spec that determines every shadow run's synthetic data."""
        generation = {
            "impl": self.impl, "dataset": self.dataset, "target": self.target,
            "epsilon": float(self.epsilon), "delta": float(self.delta),
            "synth_rows": self.synth_rows, "seed": int(self.seed),
            "hyperparams": dict(self.hyperparams), "phase": self.phase,
        }
        if self.attack in WHITEBOX_ATTACKS:  # absent otherwise, so earlier stores keep their hashes
            generation["release"] = "model"
        if self.data is not None:  # absent otherwise, so earlier stores keep their hashes
            generation["data"] = dict(self.data)
        if self.dataset == "cervical":  # runs stored under the earlier split (seed 0) are not reused
            from dpcheck.audit.core.seeds import CERVICAL_SPLIT_SEED

            generation["split_seed"] = CERVICAL_SPLIT_SEED
        return _canonical(generation)

    def generation_hash(self) -> str:
        return spec_hash(self.generation())

    def with_(self, **changes: Any) -> "AuditSpec":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["split"] = list(self.split)
        return _canonical(d)


def spec_hash(generation: dict[str, Any]) -> str:
    text = json.dumps(_canonical(generation), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def run_seed(generation: dict[str, Any], world: int, index: int) -> int:
    """The seed of one shadow run: independent of executor, worker count and order."""
    digest = int(spec_hash(generation)[:8], 16)
    seq = np.random.SeedSequence([int(generation["seed"]), digest, world, index])
    return int(seq.generate_state(1, dtype=np.uint32)[0] & 0x7FFFFFFF)


def split_sizes(runs: int, split: tuple[float, float, float]) -> tuple[int, int, int]:
    """Runs per world in (attack training, threshold validation, test); each at least one."""
    train = max(1, int(round(runs * split[0])))
    val = max(1, int(round(runs * split[1])))
    test = runs - train - val
    if test < 1:
        raise ValueError(f"{runs} runs per world leave no test runs with split {split}")
    return train, val, test
