"""What the environment sets for emmy: where it caches what it compiles (`cache_root`) and the
numeric limits read from variables (`setting`). Standard library only, so that the tools can
read them without loading xDSL, the dialects or PyTorch.

    limit = setting("EMMY_CACHE_MAX_BYTES", int, 1 << 30, lambda v: v >= 0, CubinCacheError("..."))
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def cache_root() -> Path:
    """emmy's cache directory: `$EMMY_CACHE_DIR`, else `$XDG_CACHE_HOME/emmy`, else
    `~/.cache/emmy`."""
    if root := os.environ.get("EMMY_CACHE_DIR"):
        return Path(root)
    if xdg := os.environ.get("XDG_CACHE_HOME"):
        return Path(xdg) / "emmy"
    return Path.home() / ".cache" / "emmy"


def setting(
    name: str, parse: Callable[[str], T], default: T, valid: Callable[[T], bool], error: Exception
) -> T:
    """The environment variable `name` parsed by `parse`, `default` where it is unset; `error`
    (with the value given added to its message) where it does not parse or is not `valid`."""
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = parse(text)
    except ValueError:
        value = None
    if value is None or not valid(value):
        error.args = (f"{error.args[0]}, got {text!r}",)
        raise error
    return value


def seconds(name: str, default: float | None, error: Exception) -> float | None:
    """A time limit from the environment variable `name` (see `setting`): a positive, finite
    number of seconds."""
    return setting(name, float, default, lambda value: 0 < value < float("inf"), error)
