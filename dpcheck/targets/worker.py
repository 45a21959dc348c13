"""The worker that runs shadow runs inside a target's own virtualenv.

Started by :mod:`dpcheck.targets.remote` as ``ENV/bin/python -m dpcheck.targets.worker``. It
answers frames (:mod:`dpcheck.targets.wire`) on the stdin/stdout pipes it was started with, but
first moves them to private descriptors: fd 1 then points at stderr and fd 0 at /dev/null, so a
library that prints (from Python or C) or reads stdin cannot corrupt the protocol.

Requests (``op``): ``hello``; ``versions`` (distribution versions); ``missing`` (which import
names cannot be found); ``run`` (one :func:`dpcheck.targets.base.shadow_release`); ``call``
(an installed function on a batch of cases through a signature mapping,
:func:`dpcheck.installed.mapping.call_many`; answers ``results``); ``exit``.
Answers carry ``ok``; a failure carries the error text and the worker's traceback.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import sys
import time
import traceback
from typing import Any, BinaryIO

from dpcheck.targets import wire


def take_protocol_fds() -> tuple[BinaryIO, BinaryIO]:
    """Private duplicates of stdin/stdout for frames; fd 0 ← /dev/null, fd 1 → stderr."""
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout.flush()
    os.dup2(2, 1)
    return proto_in, proto_out


def handle(header: dict[str, Any], blob: bytes) -> tuple[dict[str, Any], bytes]:
    op = header.get("op")
    if op == "hello":
        import dpcheck
        import numpy
        import pandas
        return {"ok": True, "pid": os.getpid(), "python": platform.python_version(),
                "executable": sys.executable, "dpcheck": dpcheck.__version__,
                "dpcheck_path": os.path.dirname(os.path.realpath(dpcheck.__file__)),
                "numpy": numpy.__version__, "pandas": pandas.__version__}, b""
    if op == "versions":
        return {"ok": True, "versions": {name: _version(name) for name in header.get("names", [])}}, b""
    if op == "missing":
        return {"ok": True, "missing": [m for m in header.get("modules", []) if not _importable(m)]}, b""
    if op == "run":
        return run(header)
    if op == "call":
        from dpcheck.installed.mapping import call_many

        return {"ok": True, "results": call_many(header["function"], header["map"], header["cases"])}, b""
    raise ValueError(f"unknown request {op!r}")


def run(header: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    from dpcheck.targets.base import Schema, TargetInfo, shadow_release

    info = TargetInfo.from_dict(header["info"])
    schema = Schema.from_dict(header["schema"])
    data = wire.frame_from_json(header["data"])
    start = time.perf_counter()
    out = shadow_release(info, data, schema, float(header["epsilon"]), float(header["delta"]),
                         int(header["seed"]), int(header["n_samples"]), header.get("knobs") or {})
    seconds = time.perf_counter() - start
    return {"ok": True, "seconds": seconds}, wire.array_to_bytes(out)


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def serve(proto_in: BinaryIO, proto_out: BinaryIO) -> int:
    while True:
        try:
            header, blob = wire.read_frame(proto_in)
        except wire.ClosedError:
            return 0
        if header.get("op") == "exit":
            wire.write_frame(proto_out, {"ok": True})
            return 0
        try:
            answer, out_blob = handle(header, blob)
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
            if isinstance(exc, KeyboardInterrupt):
                raise
            answer, out_blob = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                                "error_type": type(exc).__name__,
                                "traceback": traceback.format_exc()}, b""
        sys.stderr.flush()
        wire.write_frame(proto_out, answer, out_blob)


def main() -> int:
    proto_in, proto_out = take_protocol_fds()
    return serve(proto_in, proto_out)


if __name__ == "__main__":
    sys.exit(main())
