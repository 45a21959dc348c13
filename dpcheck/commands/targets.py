"""``dpcheck targets``: every name ``--impl`` accepts, with its library version, env and neighbours."""
from __future__ import annotations

import argparse
import json
import sys

from dpcheck.cli import EXIT_OK

NAME = "targets"
HELP = ("List every implementation and target --impl accepts: built-ins, reference mechanisms and real-library "
        "targets (LIBRARY:NAME) with library version, env, whether the env exists, and neighbouring relation.")
ORDER = 45

GROUP_TITLE = {"built-in": "Built-in PATE-GAN implementations (vendored code and corrected twins)",
               "reference": "Reference mechanisms (dpcheck's own; correct or deliberately broken)",
               "library": "Real-library targets (LIBRARY:NAME)"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    p.add_argument("--group", choices=sorted(GROUP_TITLE), help="only one group")


def run(args: argparse.Namespace) -> int:
    from dpcheck.targets.listing import entries

    found = [e for e in entries() if args.group in (None, e.group)]
    if args.json:
        json.dump([e.to_dict() for e in found], sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return EXIT_OK
    _print_table(found)
    return EXIT_OK


def _print_table(found: list) -> None:  # noqa: ANN001 - listing.Entry objects
    from rich.table import Table

    from dpcheck.console import console

    out = console()
    for group, title in GROUP_TITLE.items():
        rows = [e for e in found if e.group == group]
        if not rows:
            continue
        table = Table(title=title, title_justify="left", show_lines=False)
        table.add_column("name", no_wrap=True)
        table.add_column("kind")
        table.add_column("library")
        table.add_column("env")
        table.add_column("neighbours")
        for e in rows:
            env = e.env if e.env_exists else f"{e.env} [red](missing)[/]"
            table.add_row(e.name, e.kind, f"{e.library} {e.version or '(not installed)'}", env, e.neighbours)
        out.print(table)
        for setup in dict.fromkeys(e.setup for e in rows if e.setup):
            missing = sorted({e.env for e in rows if e.setup == setup})
            out.print(f"not installed ({', '.join(missing)}): run `{setup}`", style="red", highlight=False)
    out.print("Use a name with `dpcheck test/audit/matrix --impl NAME`; `dpcheck env create ENV` builds a "
              "missing env.", style="dim", highlight=False)
