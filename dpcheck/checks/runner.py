"""Running the dynamic checks over implementations (``dpcheck test`` and the matrix): built-in
implementations in this process, the user's adapters (``package.module:Factory``) in a worker
process, so code that exits, interrupts or kills its process is reported as an error, never a pass."""
from __future__ import annotations

import sys
import time
from typing import Any

from dpcheck import impls
from dpcheck.checks import CHECK_MODULES, CheckResult, get_check


def _one_check(job: tuple[str, str]) -> CheckResult:
    name, category = job
    return get_check(category)(name)


def _foreign(name: str) -> bool:
    """An adapter of the user's (package.module:Factory): its checks run in a worker process."""
    return ":" in name and name not in impls.NAMES


def _check(name: str, category: str, pool: Any) -> CheckResult:
    """One check; user code that exits, interrupts or kills its process is an error, never a pass."""
    from dpcheck.audit.core.usercode import describe, is_ours
    from dpcheck.audit.core.workers import Failure

    try:
        if pool is None:
            return get_check(category)(name)
        ((_, result),) = list(pool.map_unordered(_one_check, [(name, category)], lambda _: None))
    except BaseException as exc:  # noqa: BLE001 - sys.exit or KeyboardInterrupt from the implementation
        if is_ours(exc):
            raise
        result = Failure(describe(exc))
    if isinstance(result, Failure):
        return CheckResult(name, category, CHECK_MODULES[category], "error",
                           f"the implementation's code stopped the check: {result.message}")
    return result


def run_checks(names: list[str], categories: list[str], *, progress: bool = True) -> list[CheckResult]:
    from dpcheck.audit.core.workers import WorkerPool

    results: list[CheckResult] = []
    pool = WorkerPool(1) if any(_foreign(n) for n in names) else None
    try:
        for name in names:
            for category in categories:
                if progress:
                    print(f"  {name:<20} {category:<20}", end="", file=sys.stderr, flush=True)
                start = time.perf_counter()
                try:
                    result = _check(name, category, pool if _foreign(name) else None)
                except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
                    result = CheckResult(name, category, CHECK_MODULES[category], "error",
                                         f"{type(exc).__name__}: {exc}")
                result.seconds = round(time.perf_counter() - start, 3)
                if progress:
                    print(f" {result.status} ({result.seconds:.1f}s)", file=sys.stderr)
                results.append(result)
    finally:
        if pool is not None:
            pool.close()
    return results
