"""Writing result files so that a failure leaves neither a half-written file nor a ``.tmp``."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def write_atomic(path: str | Path, write: Callable[[Path], None]) -> None:
    """``write(tmp)`` then rename over ``path``; on any error the temporary file is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file (also through links, or before either exists)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def os_error_text(exc: OSError) -> str:
    """"No space left on device" rather than "[Errno 28] No space left on device: 'x'"."""
    return exc.strerror or str(exc)
