"""``dpcheck`` command line: one sub-command per module in ``dpcheck.commands``.

Each command module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``. Exit codes: 0 clean, 1 findings/violations, 2 usage or internal error.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import select
import sys
import traceback
from collections.abc import Sequence

from dpcheck import __version__
from dpcheck.exitcodes import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError  # noqa: F401 - commands import them from here


def _commands(only: str | None = None) -> list:
    """The command modules; with ``only``, just the one of that name when it exists (a command
    module is named like its command), so ``dpcheck scan`` never imports the audit stack."""
    import dpcheck.commands as pkg

    names = [m.name for m in pkgutil.iter_modules(pkg.__path__)]
    if only is not None and only in names:
        module = importlib.import_module(f"{pkg.__name__}.{only}")
        if getattr(module, "NAME", None) == only:
            return [module]
    modules = [importlib.import_module(f"{pkg.__name__}.{name}") for name in names]
    return sorted((m for m in modules if hasattr(m, "NAME")), key=lambda m: getattr(m, "ORDER", 50))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpcheck", description="Find privacy bugs in differentially private code.")
    parser.add_argument("--version", action="version", version=f"dpcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _commands(only):
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


#: the reader of our output went away (``dpcheck rules | head``): the shell's code for SIGPIPE, never 0
EXIT_PIPE_CLOSED = 141


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone; if so it is pointed at /dev/null so
    that the interpreter's final flush stays quiet. A broken pipe of anything else is not ours."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (AttributeError, OSError, ValueError):
        return False
    if not any(ev & (select.POLLERR | select.POLLHUP) for _, ev in events):
        return False
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = args_list[0] if args_list and not args_list[0].startswith("-") else None
    parser = build_parser(command)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if not getattr(args, "_run", None):
        parser.print_help()
        return EXIT_ERROR
    from dpcheck.audit.core.usercode import Terminated, describe, signal_received, signals_handled

    try:
        with signals_handled():
            return int(args._run(args))
    except UsageError as exc:
        print(f"dpcheck: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        if not _stdout_closed():
            print("dpcheck: internal error:", file=sys.stderr)
            traceback.print_exc()
            return EXIT_ERROR
        return EXIT_PIPE_CLOSED
    except Terminated:
        print("dpcheck: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except KeyboardInterrupt as exc:
        if signal_received() is not None:
            print("dpcheck: interrupted", file=sys.stderr)
            return 130
        print(f"dpcheck: error: code run by dpcheck raised KeyboardInterrupt without an interrupt signal "
              f"({describe(exc)}); no result", file=sys.stderr)
        return EXIT_ERROR
    except SystemExit as exc:  # user code (an implementation, a module it imports) called sys.exit
        print(f"dpcheck: error: code run by dpcheck ended early: {describe(exc)}; no result", file=sys.stderr)
        return EXIT_ERROR
    except Exception:  # noqa: BLE001 - an internal error must never look like "no findings"
        print("dpcheck: internal error:", file=sys.stderr)
        traceback.print_exc()
        return EXIT_ERROR
    except BaseException as exc:  # noqa: BLE001 - e.g. GeneratorExit from foreign code: never exit 0
        print(f"dpcheck: error: {describe(exc)}; no result", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
