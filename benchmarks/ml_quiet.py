"""Ordinary ML code stays quiet: dpcheck on machine-learning packages that make no privacy claim.

    .venv/bin/python benchmarks/ml_quiet.py            # fetch (once), scan, list every finding
    .venv/bin/python benchmarks/ml_quiet.py --check    # exit 1 on any rule finding
    .venv/bin/python benchmarks/ml_quiet.py --only sklearn,xgboost-cpu

In these packages ``epsilon``, ``eps``, ``sigma``, ``delta`` and ``noise`` are loss margins,
neighbourhood radii, optimiser and batch-norm constants, kernel widths, diffusion schedules and
augmentation noise, never a privacy budget: every finding is a false positive (issue 21, item 5).
scikit-learn, scipy and torch are scanned where the running interpreter has them installed (located
with ``importlib.util.find_spec``, never imported); the others are pinned wheels fetched with
``pip download --no-deps`` into the real-code benchmark's cache and unpacked there, never installed.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_code  # noqa: E402  (the sibling benchmark: download, unpack, line counts, dpcheck runs)


@dataclass(frozen=True)
class Installed:
    """A package of the running interpreter: ``module`` is its top-level import name."""

    dist: str
    module: str


INSTALLED: tuple[Installed, ...] = (
    Installed("scikit-learn", "sklearn"),
    Installed("scipy", "scipy"),
    Installed("torch", "torch"),
)
#: pinned wheels (the package folder inside each is scanned, not its .dist-info)
FETCHED: tuple[tuple[real_code.Dist, str], ...] = (
    (real_code.Dist("statsmodels", "0.15.0"), "statsmodels"),
    (real_code.Dist("transformers", "5.23.0"), "transformers"),
    (real_code.Dist("diffusers", "0.42.1"), "diffusers"),
    (real_code.Dist("xgboost-cpu", "3.2.0"), "xgboost"),
    (real_code.Dist("lightgbm", "4.7.0"), "lightgbm"),
)


def installed_root(pkg: Installed) -> tuple[str, Path]:
    """(``name==version``, package folder) of an installed package, located without importing it."""
    spec = importlib.util.find_spec(pkg.module)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{pkg.dist} is not installed in {sys.executable}: install it or pass --only")
    version = importlib.metadata.version(pkg.dist)
    return f"{pkg.dist}=={version}", Path(next(iter(spec.submodule_search_locations)))


def corpus(cache_dir: Path, only: set[str]) -> dict[str, Path]:
    """``name==version`` -> the folder to scan, for every package chosen."""
    out: dict[str, Path] = {}
    for pkg in INSTALLED:
        if not only or pkg.dist in only or pkg.module in only:
            name, root = installed_root(pkg)
            out[name] = root
    wanted = [(d, m) for d, m in FETCHED if not only or d.name in only or m in only]
    unpacked = real_code.fetch([d for d, _ in wanted], cache_dir)
    for dist, module in wanted:
        root = unpacked[dist.name] / module
        if not root.is_dir():
            raise SystemExit(f"{dist.folder}: no {module}/ folder in {unpacked[dist.name]}")
        out[f"{dist.name}=={dist.version}"] = root
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache-dir", type=Path, default=real_code.DEFAULT_CACHE, help="where wheels are unpacked")
    p.add_argument("--only", default="", help="comma-separated distribution or import names (default: all)")
    p.add_argument("--check", action="store_true", help="exit 1 when any rule reports a finding")
    p.add_argument("--json", type=Path, help="also write the findings here")
    p.add_argument("--select", default="", help="rule ids or prefixes passed to dpcheck (default: all)")
    p.add_argument("--dpcheck-path", type=Path,
                   help="scan with the dpcheck package found in this folder (e.g. a snapshot of another commit)")
    args = p.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    roots = corpus(args.cache_dir, only)
    tool = real_code.Dpcheck(args.dpcheck_path, args.select)

    total_lines, total_findings = 0, 0
    per_rule: Counter[str] = Counter()
    rows: list[dict[str, object]] = []
    print(f"{'package':<28} {'files':>6} {'lines':>10} {'findings':>9} {'diagnostics':>12} {'cpu s':>7}")
    for name, root in roots.items():
        files = real_code.python_files(root)
        lines = sum(real_code.nonblank_lines(f) for f in files)
        report, timing = real_code.run_dpcheck([root], root.parent, tool)
        findings = [f for f in report["findings"] if not f["rule"].startswith("DP0")]  # type: ignore[union-attr]
        diagnostics = [f for f in report["findings"] if f["rule"].startswith("DP0")]  # type: ignore[union-attr]
        print(f"{name:<28} {len(files):>6} {lines:>10,} {len(findings):>9} {len(diagnostics):>12} {timing.cpu:>7.1f}")
        for f in findings:
            line = f["span"]["start"]["line"]
            print(f"    {f['rule']} {f['path']}:{line}: {f.get('snippet', '').strip()[:100]}")
            per_rule[f["rule"]] += 1
            rows.append({"package": name, "path": f["path"], "line": line, "rule": f["rule"],
                         "snippet": f.get("snippet", ""), "message": f.get("message", "")})
        total_lines += lines
        total_findings += len(findings)
    print(f"{'total':<28} {'':>6} {total_lines:>10,} {total_findings:>9}")
    if per_rule:
        print("by rule: " + ", ".join(f"{r} {n}" for r, n in sorted(per_rule.items())))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    if args.check and total_findings:
        print(f"\nCHECK FAILED: {total_findings} finding(s) on ML code with no privacy claim (target 0)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
