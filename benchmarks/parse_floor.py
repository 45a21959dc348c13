"""The parse floor: how fast dpcheck could scan the DP-dense corpus if its rules cost nothing.

Every rule reads a libcst tree, so a file that reaches a rule is parsed by libcst. On the DP-dense
part of the 82-package corpus (files mentioning epsilon/ε/noise/privacy, as in real_code.py) this
times, in this one process, CPU seconds of

  * CPython's ``ast.parse`` of every file (what dpcheck's ast gate and Bandit read),
  * ``libcst.parse_module`` of every file (what the rules need),

and runs Bandit on the same files in a child process (CPU time of the child). It prints
Bandit / libcst-parse: the largest dpcheck/Bandit throughput ratio reachable while libcst parses
the files, whatever the rules do. Each timing is the best of ``--repeat`` runs.

    python benchmarks/parse_floor.py                  # corpus in ~/.cache/dpcheck-bench/real_code
    python benchmarks/parse_floor.py --repeat 3
"""
from __future__ import annotations

import argparse
import ast
import os
import time
from collections.abc import Callable
from pathlib import Path

import real_code


def cpu_seconds(parse: Callable[[str], object], texts: list[str]) -> tuple[float, int]:
    """CPU seconds to parse every text, and how many parsed."""
    ok = 0
    start = time.process_time()
    for text in texts:
        try:
            parse(text)
            ok += 1
        except Exception:  # noqa: BLE001 - a file a parser refuses costs what it cost
            pass
    return time.process_time() - start, ok


def main(argv: list[str] | None = None) -> int:
    import libcst

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache-dir", type=Path, default=real_code.DEFAULT_CACHE)
    p.add_argument("--repeat", type=int, default=1, help="timed runs per measure (best kept)")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")

    args.cache_dir.mkdir(parents=True, exist_ok=True)
    roots = real_code.fetch(real_code.CORPUS, args.cache_dir)
    files = [f for root in roots.values() for f in real_code.python_files(root.resolve())]
    dense = real_code.dp_dense(files)
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in dense]
    lines = sum(real_code.nonblank_lines(f) for f in dense)

    ast_cpu = min(cpu_seconds(ast.parse, texts)[0] for _ in range(args.repeat))
    cst_runs = [cpu_seconds(libcst.parse_module, texts) for _ in range(args.repeat)]
    cst_cpu, cst_ok = min(cst_runs)
    bandit = min((real_code.run_bandit(dense, args.cache_dir.resolve()) for _ in range(args.repeat)),
                 key=lambda t: t.cpu)

    print(f"DP-dense part: {len(dense)} files, {lines:,} non-blank lines; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; best of {args.repeat}")
    print(f"  ast.parse            cpu {ast_cpu:6.1f}s")
    print(f"  libcst.parse_module  cpu {cst_cpu:6.1f}s  ({cst_ok} of {len(texts)} files parsed)")
    print(f"  bandit (whole run)   cpu {bandit.cpu:6.1f}s")
    ceiling = bandit.cpu / cst_cpu
    verdict = "above" if ceiling >= real_code.SPEED_TARGET else "below"
    print(f"  ceiling with libcst: bandit / libcst parse = {ceiling:.2f}× ({verdict} the "
          f"{real_code.SPEED_TARGET}× target); libcst parse / ast.parse = {cst_cpu / ast_cpu:.1f}×")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
