"""Frames between dpcheck and a target worker in another virtualenv.

A frame is a JSON header and an optional binary blob, each preceded by its length (8 bytes,
big-endian). Arrays travel as ``.npy`` bytes and data frames as JSON column lists, so the two
sides may run different numpy and pandas versions (numpy 2 here, numpy 1.26 in synthcity's env).

Imports only the standard library, numpy and pandas: the worker side runs this module too.
"""
from __future__ import annotations

import io
import json
import math
import os
import select
import time
from typing import Any, BinaryIO

import numpy as np
import pandas as pd

LENGTH = 8
MAX_FRAME = 1 << 34  # 16 GiB: a guard against reading garbage as a length


class FrameError(RuntimeError):
    """The other side closed the pipe, sent garbage, or did not answer in time."""


class ClosedError(FrameError):
    """End of file: the other side exited."""


class TimeoutError_(FrameError):
    """No complete frame before the deadline."""


def pack(header: dict[str, Any], blob: bytes = b"") -> bytes:
    head = json.dumps(header, allow_nan=True).encode("utf-8")
    return b"".join((len(head).to_bytes(LENGTH, "big"), head, len(blob).to_bytes(LENGTH, "big"), blob))


def write_frame(stream: BinaryIO, header: dict[str, Any], blob: bytes = b"") -> None:
    stream.write(pack(header, blob))
    stream.flush()


def read_frame(stream: BinaryIO) -> tuple[dict[str, Any], bytes]:
    """Blocking read of one frame from a file object (the worker's side)."""
    head = _read_exact(stream, _length(_read_exact(stream, LENGTH)))
    blob = _read_exact(stream, _length(_read_exact(stream, LENGTH)))
    return _header(head), blob


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    parts, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise ClosedError("end of stream inside a frame" if parts or n != LENGTH else "end of stream")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _length(raw: bytes) -> int:
    n = int.from_bytes(raw, "big")
    if n > MAX_FRAME:
        raise FrameError(f"frame length {n} is not plausible: the stream is corrupt")
    return n


def _header(raw: bytes) -> dict[str, Any]:
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FrameError(f"frame header is not JSON: {exc}") from exc
    if not isinstance(header, dict):
        raise FrameError("frame header is not a JSON object")
    return header


class FdReader:
    """Reads frames from a raw file descriptor with a deadline (the parent's side)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()

    def read_frame(self, timeout: float | None) -> tuple[dict[str, Any], bytes]:
        deadline = None if timeout is None else time.monotonic() + timeout
        head = self._take(self._length(deadline), deadline)
        blob = self._take(self._length(deadline), deadline)
        return _header(head), blob

    def _length(self, deadline: float | None) -> int:
        return _length(self._take(LENGTH, deadline))

    def _take(self, n: int, deadline: float | None) -> bytes:
        while len(self.buffer) < n:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                raise TimeoutError_("no answer before the deadline")
            chunk = os.read(self.fd, max(1 << 16, n - len(self.buffer)))
            if not chunk:
                raise ClosedError("end of stream")
            self.buffer += chunk
        out = bytes(self.buffer[:n])
        del self.buffer[:n]
        return out


def array_to_bytes(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, np.ascontiguousarray(array), allow_pickle=False)
    return out.getvalue()


def array_from_bytes(blob: bytes) -> np.ndarray:
    return np.load(io.BytesIO(blob), allow_pickle=False)


def frame_to_json(data: pd.DataFrame) -> dict[str, Any]:
    """Columns as lists of plain Python values (ints, floats, strings, None for missing)."""
    return {"columns": [str(c) for c in data.columns],
            "values": [[_plain(v) for v in data[c].tolist()] for c in data.columns],
            "dtypes": [_kind(data[c]) for c in data.columns]}


def frame_from_json(payload: dict[str, Any]) -> pd.DataFrame:
    columns: dict[str, Any] = {}
    for name, values, kind in zip(payload["columns"], payload["values"], payload["dtypes"]):
        if kind == "int":
            columns[name] = np.asarray(values, dtype=np.int64)
        elif kind == "float":
            columns[name] = np.asarray([math.nan if v is None else v for v in values], dtype=np.float64)
        elif kind == "bool":
            columns[name] = np.asarray(values, dtype=bool)
        else:
            columns[name] = pd.Series(values, dtype=object)
    return pd.DataFrame(columns, columns=list(payload["columns"]))


def _kind(series: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(series):
        return "bool"
    if pd.api.types.is_integer_dtype(series):
        return "int"
    if pd.api.types.is_float_dtype(series):
        return "float"
    return "object"


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
