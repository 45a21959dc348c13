"""``dpcheck env``: create, list, locate and remove the separate virtualenvs of audit targets."""
from __future__ import annotations

import argparse
import json
import sys

from dpcheck.targets import envs

NAME = "env"
HELP = "Manage the separate virtualenvs of targets whose library conflicts with dpcheck's (e.g. synthcity)."
ORDER = 80


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="env_command", metavar="ACTION")
    create = sub.add_parser("create", help="create an env, or bring it up to date (idempotent)")
    create.add_argument("name", help=f"env name ({', '.join(envs.known_envs())})")
    create.add_argument("--force", action="store_true", help="delete and rebuild the env")
    create.add_argument("--verbose", "-v", action="store_true", help="show pip's output as it runs")
    listing = sub.add_parser("list", help="known envs, whether each exists, where, and how big")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument("--names", action="store_true", help="print only the env names, one a line")
    path = sub.add_parser("path", help="print an env's directory (exit 1 when it does not exist yet)")
    path.add_argument("name")
    path.add_argument("--python", action="store_true", help="print the env's python instead")
    remove = sub.add_parser("remove", help="delete an env")
    remove.add_argument("name")


def run(args: argparse.Namespace) -> int:
    from dpcheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError

    action = getattr(args, "env_command", None)
    if action is None:
        raise UsageError("dpcheck env needs an action: create, list, path or remove")
    try:
        if action == "create":
            envs.create(args.name, force=args.force, verbose=args.verbose,
                        progress=lambda msg: print(msg, flush=True))
            return EXIT_OK
        if action == "list" and args.names:
            print("\n".join(envs.known_envs()))
            return EXIT_OK
        if action == "list":
            rows = [status(name) for name in envs.known_envs()]
            if args.json:
                print(json.dumps(rows, indent=2))
            else:
                print(f"env root: {envs.env_root()}")
                for row in rows:
                    print(f"  {row['name']:<12} {row['state']:<12} {row['size']:>10}  {row['path']}")
            return EXIT_OK
        if action == "path":
            envs.requirements_file(args.name)
            target = envs.env_python(args.name) if args.python else envs.env_path(args.name)
            print(target)
            return EXIT_OK if target.exists() else EXIT_FINDINGS
        if action == "remove":
            envs.requirements_file(args.name)
            envs.remove(args.name)
            return EXIT_OK
    except envs.EnvError as exc:
        print(f"dpcheck env: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_ERROR
    raise UsageError(f"unknown env action {action!r}")


def status(name: str) -> dict:
    path = envs.env_path(name)
    if envs.is_ready(name):
        state = "ready"
    elif path.exists():
        state = "outdated" if envs.marker(name) else "incomplete"
    else:
        state = "absent"
    size = envs.human_size(envs.dir_size(path)) if path.exists() else "-"
    info = envs.marker(name) or {}
    return {"name": name, "state": state, "path": str(path), "size": size,
            "requirements": str(envs.requirements_file(name)), "created": info.get("created"),
            "seconds": info.get("seconds")}
