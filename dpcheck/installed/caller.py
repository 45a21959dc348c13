"""Where an installed function runs: in this process, or in a target env's persistent worker.

Both callers take a batch of cases and return one ``{"value": …}`` or ``{"error": …}`` per case.
A remote caller keeps one worker alive for the whole Hypothesis run (one frame per batch, the
library imported once), so 200 examples cost 200 round trips on a pipe, not 200 processes.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from dpcheck.installed.mapping import MappingError, SignatureMap, call_many


class CallerError(RuntimeError):
    """The function cannot be reached (module, function or env missing): exit 2."""


def plain_case(case: dict[str, Any]) -> dict[str, Any]:
    """JSON-able copy of a case (numpy arrays and scalars → lists and Python numbers)."""
    out: dict[str, Any] = {}
    for key, value in case.items():
        if isinstance(value, np.ndarray):
            out[key] = value.tolist()
        elif isinstance(value, np.generic):
            out[key] = value.item()
        else:
            out[key] = value
    return out


class Caller:
    def __init__(self, function: str, smap: SignatureMap, env: str) -> None:
        self.function = function
        self.smap = smap
        self.env = env
        self.calls = 0

    def __call__(self, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.calls += len(cases)
        return self._run([plain_case(c) for c in cases])

    def one(self, case: dict[str, Any]) -> dict[str, Any]:
        return self([case])[0]

    def _run(self, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raise NotImplementedError


class LocalCaller(Caller):
    """In this process (the main env); cases pass through JSON-able form as they would remotely."""

    def __init__(self, function: str, smap: SignatureMap) -> None:
        super().__init__(function, smap, "main")
        try:
            call_many(function, smap.to_dict(), [])
        except (ImportError, AttributeError, MappingError) as exc:
            raise CallerError(f"cannot import {function} in the main env: {type(exc).__name__}: {exc}"
                              + _hint(function)) from None

    def _run(self, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return call_many(self.function, self.smap.to_dict(), cases)


class RemoteCaller(Caller):
    """In the persistent worker of ``env`` (``dpcheck env create NAME``)."""

    def __init__(self, function: str, smap: SignatureMap, env: str) -> None:
        from dpcheck.targets import remote
        from dpcheck.targets.base import TargetError
        from dpcheck.targets.remote import RemoteError

        super().__init__(function, smap, env)
        try:
            remote.python_for(env)
        except TargetError as exc:
            raise CallerError(str(exc)) from None
        try:
            self._run([])  # imports the module in the worker: a missing one is reported before any example
        except (TargetError, RemoteError) as exc:
            first = str(exc).splitlines()[0].split(" worker: ", 1)[-1]
            raise CallerError(f"cannot import {function} in the {env!r} env: {first}" + _hint(function)) from None

    def _run(self, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from dpcheck.targets.remote import remote_call

        return remote_call(self.env, self.function, self.smap.to_dict(), cases)


def _hint(function: str) -> str:
    from dpcheck.installed.mapping import ENV_OF_MODULE

    top = function.split(":")[0].split(".")[0]
    if top in ENV_OF_MODULE:
        return f" (it lives in the {ENV_OF_MODULE[top]!r} env: `dpcheck env create {ENV_OF_MODULE[top]}`, --env)"
    return ""


def make_caller(function: str, smap: SignatureMap, env: str) -> Caller:
    return LocalCaller(function, smap) if env == "main" else RemoteCaller(function, smap, env)
