"""processing: sampled data comes back in the input's scale — values in the range of the input
columns — and integer columns, where restored, are rounded rather than truncated."""
from __future__ import annotations

import numpy as np

from dpcheck.checks.observe import standard
from dpcheck.checks.result import CheckResult

CHECK_ID = "processing.output_scale_and_types"
#: a column passes when at least this share of sampled values lies within its bounds ± half the width
MIN_IN_RANGE = 0.5


def check(impl: str) -> CheckResult:
    obs = standard(impl)
    if obs.error or obs.samples is None:
        return CheckResult(impl, "processing", CHECK_ID, "error", f"fit/sample failed: {obs.error}")
    pd_ = obs.data
    samples = obs.samples
    problems: list[str] = []
    columns = []
    if samples.ndim != 2 or samples.shape[1] != pd_.data.shape[1]:
        problems.append(f"sample has shape {samples.shape}, input has {pd_.data.shape[1]} columns")
    else:
        for j in range(samples.shape[1]):
            lo, hi = float(pd_.lower[j]), float(pd_.upper[j])
            half = (hi - lo) / 2
            col = samples[:, j]
            share = float(np.mean((col >= lo - half) & (col <= hi + half)))
            info = {"column": j, "bounds": [lo, hi], "sample_min": float(col.min()),
                    "sample_max": float(col.max()), "share_in_range": share}
            if share < MIN_IN_RANGE:
                problems.append(f"column {j}: only {share:.0%} of sampled values within the input range "
                                f"[{lo:g}, {hi:g}] (sample spans [{col.min():.3g}, {col.max():.3g}]): output not "
                                "mapped back to the input scale")
            if j in pd_.integer_columns:
                # Table 2 does not count un-restored integer types as a bug (original returns
                # floats); only truncation is, and that is read from the output transform.
                info["integral"] = bool(np.all(np.isclose(col, np.round(col))))
            columns.append(info)
    transforms = [str(e.args[0]) for e in obs.probe.of("output_transform")]
    if any("trunc" in t for t in transforms):
        problems.append("integer columns are restored by truncation (rounds down); round first, then cast")
    evidence = {"columns": columns, "output_transforms": transforms, "rows": int(samples.shape[0])}
    if problems:
        return CheckResult(impl, "processing", CHECK_ID, "fail", "; ".join(problems), evidence)
    return CheckResult(impl, "processing", CHECK_ID, "pass",
                       "output in the input's scale; no truncation of integer columns", evidence)
