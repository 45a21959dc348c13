"""data_partition: each teacher's rows over a whole run form pairwise disjoint sets within the data."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from dpcheck.checks.observe import standard
from dpcheck.checks.result import CheckResult

CHECK_ID = "partition.disjoint_teacher_rows"


def check(impl: str) -> CheckResult:
    obs = standard(impl)
    n = obs.data.data.shape[0]
    events = obs.probe.of("teacher_data")
    if obs.error and not events:
        return CheckResult(impl, "data_partition", CHECK_ID, "error", f"fit failed: {obs.error}")
    if not events:
        return CheckResult(impl, "data_partition", CHECK_ID, "not_applicable",
                           "no teacher training was observed (no teacher_data probe event)")
    seen: dict[int, set[int]] = defaultdict(set)
    for event in events:
        teacher = int(event.args[0])
        seen[teacher].update(int(i) for i in np.asarray(event.args[1]).ravel())
    out_of_range = sorted({i for rows in seen.values() for i in rows if not 0 <= i < n})
    overlaps = [
        (a, b, len(seen[a] & seen[b]))
        for a in sorted(seen) for b in sorted(seen) if a < b and seen[a] & seen[b]
    ]
    distinct = {t: len(rows) for t, rows in sorted(seen.items())}
    evidence = {
        "rows": n,
        "teachers": len(seen),
        "distinct_rows_per_teacher": distinct,
        "union": len(set().union(*seen.values())),
        "iterations": obs.hyperparams.get("max_iterations"),
    }
    if out_of_range:
        return CheckResult(impl, "data_partition", CHECK_ID, "fail",
                           f"teachers saw row indices outside the data: {out_of_range[:5]}", evidence)
    if overlaps:
        a, b, shared = overlaps[0]
        evidence["overlapping_pairs"] = [list(o) for o in overlaps[:10]]
        evidence["counterexample"] = {"teacher_a": a, "teacher_b": b, "shared_rows": sorted(seen[a] & seen[b])[:10]}
        return CheckResult(
            impl, "data_partition", CHECK_ID, "fail",
            f"teachers {a} and {b} share {shared} of {n} rows over the run "
            f"({len(overlaps)} overlapping pairs of {len(seen)} teachers); teachers must each see one fixed "
            "disjoint partition",
            evidence,
        )
    return CheckResult(impl, "data_partition", CHECK_ID, "pass",
                       f"{len(seen)} teachers saw pairwise disjoint rows over the whole run", evidence)
