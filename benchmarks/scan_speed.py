"""Scan throughput: dpcheck cold/warm with --jobs 1 and 2, against Fixit 2 and Bandit on the same files.

    .venv/bin/python benchmarks/scan_speed.py                      # sklearn+scipy+torch, all files
    .venv/bin/python benchmarks/scan_speed.py --max-lines 60000    # a capped sample of the same trees
    .venv/bin/python benchmarks/scan_speed.py --rule-costs         # + seconds per rule on the sample

Trees are the installed packages' folders (found without importing them). Every tool runs as
its own process; times are wall-clock for the whole process, peak memory is the largest
process's max RSS (for dpcheck: the main process or its largest worker). dpcheck runs as
``python -m dpcheck scan --format json``, exactly as a user runs it. Fixit is slow (~1k lines/s), so by
default it lints the first ``--fixit-lines`` lines' worth of the same files and its rate is
extrapolated; ``--fixit-lines 0`` lints everything. Targets (2 cores): cold --jobs 1 ≥ 10× Fixit
and ≥ 1× Bandit, warm ≥ 20× faster than cold, peak memory < 1 GiB.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[1]


def snapshot(work: Path) -> Path:
    """Freeze dpcheck + rules for the whole run: the cache key includes the rules' source, so
    edits made to the work tree while the benchmark runs would otherwise make "warm" cold."""
    snap = work / "snapshot"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "dpcheck", snap / "dpcheck", ignore=ignore)
    shutil.rmtree(snap / "dpcheck" / "rules", ignore_errors=True)
    shutil.copytree(REPO / "rules", snap / "dpcheck" / "rules", ignore=ignore)
    return snap


@dataclass
class Run:
    label: str
    lines: int
    seconds: float
    rss_mb: float
    extra: str = ""
    #: dpcheck only: time inside the engine, without interpreter start-up and imports
    engine_seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.lines / self.seconds if self.seconds else float("inf")


def package_folder(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {name!r} is not installed")
    return Path(list(spec.submodule_search_locations)[0])


def python_files(folder: Path) -> list[tuple[Path, int]]:
    from dpcheck.scan.config import DEFAULT_EXCLUDES
    from dpcheck.scan.discovery import discover

    out = []
    for cand in discover([folder], root=folder, default_excludes=DEFAULT_EXCLUDES):
        try:
            out.append((Path(cand.path), Path(cand.path).read_bytes().count(b"\n")))
        except OSError:
            pass
    return out


def take(files: list[tuple[Path, int]], budget: int) -> list[tuple[Path, int]]:
    """Files in path order until ``budget`` lines (all when budget <= 0)."""
    if budget <= 0:
        return files
    out, total = [], 0
    for path, n in files:
        if total >= budget:
            break
        out.append((path, n))
        total += n
    return out


def measured(
    cmd: list[str], cwd: str, env: dict[str, str] | None = None, *, with_stderr: bool = False
) -> tuple[float, float, int, bytes]:
    """Wall seconds, max RSS (MB) of the process or its largest waited-for child, exit code, output."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        err = subprocess.STDOUT if with_stderr else subprocess.DEVNULL
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        out.seek(0)
        return seconds, usage.ru_maxrss / 1024, proc.returncode, out.read()


def dpcheck_runs(targets_file: Path, work: Path, snap: Path) -> list[Run]:
    """``dpcheck scan`` exactly as a user runs it (one process, start-up included), cold then warm."""
    runs = []
    env = {**os.environ, "PYTHONPATH": str(snap)}
    targets = [line for line in targets_file.read_text().splitlines() if line]
    config = work / "pyproject.toml"  # the defaults, whatever pyproject.toml lies above the trees
    config.write_text("[tool.dpcheck]\n")
    for jobs in (1, 2):
        cache = work / f"cache-j{jobs}"
        for phase in ("cold", "warm"):
            cmd = [sys.executable, "-m", "dpcheck", "scan", "--format", "json", "--exit-zero", "--jobs", str(jobs),
                   "--cache-dir", str(cache), "--config", str(config), *targets]
            wall, rss, code, out = measured(cmd, str(work), env)
            if code != 0:
                raise SystemExit(f"dpcheck run failed ({code}): {out.decode()[-2000:]}")
            data = json.loads(out)["summary"]
            extra = (f"engine {data['seconds']:.2f}s = {data['lines'] / max(data['seconds'], 1e-9):,.0f} lines/s; "
                     f"{data['files']} files, {data['parsed']} parsed, {data['cache_hits']} cached, "
                     f"{data['findings']} findings")
            runs.append(Run(f"dpcheck {phase} --jobs {jobs}", data["lines"], wall, rss, extra, data["seconds"]))
            print(f"  {runs[-1].label:<24} {wall:8.2f}s  {runs[-1].rate:>10,.0f} lines/s  {extra}", flush=True)
    return runs


def rule_costs(files: list[tuple[Path, int]], limit: int) -> None:
    """Parse each sampled file once, then time every rule alone on it (trigger-filtered)."""
    import libcst as cst

    from dpcheck.rule import run_rules
    from dpcheck.rules import all_rules

    sample = take(files, limit)
    sources = []
    for path, _ in sample:
        try:
            sources.append(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            pass
    lines = sum(s.count("\n") for s in sources)
    start = time.perf_counter()
    modules = []
    for s in sources:
        try:
            modules.append(cst.parse_module(s))
        except Exception:  # noqa: BLE001
            modules.append(None)
    parse = time.perf_counter() - start
    print(f"\nRule costs on {len(sources)} files / {lines:,} lines (libcst parse alone: {parse:.2f}s = {lines / parse:,.0f} lines/s)")
    print(f"  {'rule':<6} {'files hit':>10} {'seconds':>9} {'lines/s on hit files':>22}")
    for rule in all_rules():
        hit_lines, spent, hits = 0, 0.0, 0
        for source, module in zip(sources, modules):
            if module is None or not rule.applies_to(source):
                continue
            hits += 1
            hit_lines += source.count("\n")
            t = time.perf_counter()
            try:
                run_rules(source, [rule], module=module, prefiltered=True)
            except Exception:  # noqa: BLE001
                pass
            spent += time.perf_counter() - t
        rate = f"{hit_lines / spent:,.0f}" if spent else "-"
        print(f"  {rule.id:<6} {hits:>5}/{len(sources):<4} {spent:9.2f} {rate:>22}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trees", default="sklearn,scipy,torch", help="comma-separated installed packages")
    p.add_argument("--max-lines", type=int, default=0, help="cap the sample at about this many lines (0 = all)")
    p.add_argument("--fixit-lines", type=int, default=30000, help="lines Fixit lints (0 = the whole sample)")
    p.add_argument("--skip-fixit", action="store_true")
    p.add_argument("--skip-bandit", action="store_true")
    p.add_argument("--rule-costs", action="store_true", help="also time each rule alone on a sample")
    p.add_argument("--rule-cost-lines", type=int, default=20000)
    args = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="dpcheck-bench-"))
    snap = snapshot(work)
    sys.path.insert(0, str(snap))
    names = [n.strip() for n in args.trees.split(",") if n.strip()]
    folders = [package_folder(n) for n in names]
    per_tree = args.max_lines // len(folders) if args.max_lines else 0
    files = [f for folder in folders for f in take(python_files(folder), per_tree)]
    lines = sum(n for _, n in files)
    print(f"Trees: {', '.join(f'{n} ({f})' for n, f in zip(names, folders))}")
    print(f"Sample: {len(files):,} files, {lines:,} lines; cores: {os.cpu_count()}; "
          f"load average at start: {os.getloadavg()[0]:.1f}\n")

    try:
        targets_file = work / "targets.txt"
        # whole trees are passed as folders (exercising discovery); capped samples as files
        targets = [str(f) for f in folders] if not args.max_lines else [str(path) for path, _ in files]
        targets_file.write_text("\n".join(targets) + "\n")
        print("dpcheck:")
        runs = dpcheck_runs(targets_file, work, snap)

        others: dict[str, Run] = {}
        if not args.skip_bandit:
            cmd = [str(BIN / "bandit"), "-q", "-f", "json", "-o", str(work / "bandit.json"), *targets]
            if not args.max_lines:
                cmd.insert(1, "-r")
            wall, rss, _, _ = measured(cmd, str(work))
            others["bandit"] = Run("bandit", lines, wall, rss)
        if not args.skip_fixit:
            subset = take(files, args.fixit_lines)
            sub_lines = sum(n for _, n in subset)
            # Fixit skips git-ignored paths (the venv holding these trees is), so it lints copies
            copies = work / "fixit-tree"
            copies.mkdir()
            for i, (pth, _) in enumerate(subset):
                shutil.copyfile(pth, copies / f"{i:05d}_{pth.name}")
            wall, rss, _, out = measured([str(BIN / "fixit"), "lint", str(copies)], str(work), with_stderr=True)
            checked = re.search(rb"(\d+) files? checked", out)
            if checked is None or int(checked.group(1)) != len(subset):
                raise SystemExit(f"fixit did not lint the {len(subset)} files: {out[-500:]!r}")
            others["fixit"] = Run("fixit (default rules)", sub_lines, wall, rss,
                                  f"{len(subset)} files; lint uses all cores")
        for run in others.values():
            print(f"  {run.label:<24} {run.seconds:8.2f}s  {run.rate:>10,.0f} lines/s  "
                  f"over {run.lines:,} lines, peak {run.rss_mb:.0f} MB {run.extra}")

        by = {r.label: r for r in runs}
        cold1, warm1 = by["dpcheck cold --jobs 1"], by["dpcheck warm --jobs 1"]
        cold2, warm2 = by["dpcheck cold --jobs 2"], by["dpcheck warm --jobs 2"]
        peak = max(r.rss_mb for r in runs)
        print("\nSummary (wall-clock, whole process):")
        checks = [("cold --jobs 1 lines/s", f"{cold1.rate:,.0f}", "")]
        if "fixit" in others:
            ratio = cold1.rate / others["fixit"].rate
            checks.append(("cold --jobs 1 vs Fixit", f"{ratio:.2f}x", "target >= 10x: " + ("met" if ratio >= 10 else "NOT met")))
        if "bandit" in others:
            ratio = cold1.rate / others["bandit"].rate
            checks.append(("cold --jobs 1 vs Bandit", f"{ratio:.2f}x", "target >= 1x: " + ("met" if ratio >= 1 else "NOT met")))
            checks.append(("cold --jobs 2 vs Bandit", f"{cold2.rate / others['bandit'].rate:.2f}x", ""))
        for jobs, cold, warm in ((1, cold1, warm1), (2, cold2, warm2)):
            ratio = cold.seconds / warm.seconds
            checks.append((f"warm speed-up --jobs {jobs}", f"{ratio:.1f}x", "target >= 20x: " + ("met" if ratio >= 20 else "NOT met")))
            engine_ratio = cold.engine_seconds / max(warm.engine_seconds, 1e-6)
            checks.append(("  same, scan only (no start-up)", f"{engine_ratio:,.0f}x", ""))
        checks.append(("--jobs 2 vs --jobs 1 (cold)", f"{cold1.seconds / cold2.seconds:.2f}x", ""))
        checks.append(("peak memory (largest process)", f"{peak:.0f} MB", "target < 1024 MB: " + ("met" if peak < 1024 else "NOT met")))
        for name, value, verdict in checks:
            print(f"  {name:<32} {value:>12}  {verdict}")
        if args.rule_costs:
            rule_costs(files, args.rule_cost_lines)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
