"""The `emmy` and `emmy-opt` commands as `pip install` makes them: each imports its module
(`emmy.tools.cli`, `emmy.tools.opt`), then runs its `main`.

    $ emmy compile model.py      # Ctrl-C a second in, while Python still imports emmy
    emmy: interrupted            # exit status 130, as a Ctrl-C during the work gives

A module's `main` turns a Ctrl-C during the work into one line and 130; one that comes while
the module or what its arguments need is still being imported (a second or two of xDSL and
emmy's dialects) would otherwise end in Python's traceback of whatever import it stopped.
"""

from __future__ import annotations

import importlib
import sys

INTERRUPTED = 130
"""128 + SIGINT, what a shell reports for a command a Ctrl-C ended."""


def _run(module: str, command: str) -> int:
    try:
        return importlib.import_module(module).main()
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return INTERRUPTED


def emmy() -> int:
    return _run("emmy.tools.cli", "emmy")


def emmy_opt() -> int:
    return _run("emmy.tools.opt", "emmy-opt")
