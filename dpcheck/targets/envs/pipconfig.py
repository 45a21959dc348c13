"""pip's index configuration, handed to uv so that both installers see the same packages.

uv reads neither ``pip.conf`` nor ``PIP_*`` variables. On a machine whose pip finds a wheel
only through a configured ``find-links`` folder or an extra index (e.g. the local
``torch==2.13.0+cpu`` build), uv would fail to resolve a requirements file that pip installs.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field

# pip's scopes from weakest to strongest; an environment variable beats every file
_SCOPE_ORDER = ("global", "user", "site", ":env:")
_LIST_KEYS = ("find-links", "extra-index-url")


@dataclass
class IndexOptions:
    index_url: str | None = None
    extra_index_urls: list[str] = field(default_factory=list)
    find_links: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    no_index: bool = False

    def uv_args(self) -> list[str]:
        """uv flags with pip's meaning; best match across indexes, as pip resolves."""
        args: list[str] = []
        if self.no_index:
            args.append("--no-index")
        if self.index_url:
            args += ["--index-url", self.index_url]
        for url in self.extra_index_urls:
            args += ["--extra-index-url", url]
        for link in self.find_links:
            args += ["--find-links", link]
        for path in self.constraints:
            args += ["--constraint", path]
        if self.extra_index_urls or self.find_links:
            args += ["--index-strategy", "unsafe-best-match"]
        return args


def parse_config_list(text: str) -> dict[str, dict[str, str]]:
    """``pip config list`` output → {scope: {key: value}} (scope ``global``, ``user``, ``:env:`` …)."""
    scopes: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        name, sep, raw = line.partition("=")
        if not sep or "." not in name:
            continue
        scope, _, key = name.rpartition(".")
        scope = scope.split(".")[0] if not scope.startswith(":env:") else ":env:"
        try:
            value = " ".join(shlex.split(raw))
        except ValueError:
            value = raw.strip("'\"")
        scopes.setdefault(scope, {})[key] = value
    return scopes


def _env_options() -> dict[str, str]:
    """``PIP_*`` variables, which ``pip config list`` shows only when set as ``:env:``."""
    out: dict[str, str] = {}
    for key in ("index-url", "extra-index-url", "find-links", "no-index", "constraint"):
        value = os.environ.get("PIP_" + key.upper().replace("-", "_"))
        if value:
            out[key] = value
    return out


def index_options(config_text: str, env: dict[str, str] | None = None) -> IndexOptions:
    """Combine the scopes the way pip does: single values by precedence, lists by union."""
    scopes = parse_config_list(config_text)
    scopes[":env:"] = {**scopes.get(":env:", {}), **(env if env is not None else _env_options())}
    opts = IndexOptions()
    for scope in _SCOPE_ORDER:
        values = scopes.get(scope, {})
        if "index-url" in values:
            opts.index_url = values["index-url"]
        if values.get("no-index", "").lower() in ("1", "true", "yes", "on"):
            opts.no_index = True
        if "constraint" in values:
            opts.constraints = values["constraint"].split()
        for key in _LIST_KEYS:
            target = opts.find_links if key == "find-links" else opts.extra_index_urls
            for item in values.get(key, "").split():
                if item not in target:
                    target.append(item)
    return opts


def pip_index_options(python: str = sys.executable) -> IndexOptions:
    """What the pip next to ``python`` is configured to search (empty when pip cannot say)."""
    try:
        done = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return index_options("")
    return index_options(done.stdout if done.returncode == 0 else "")
