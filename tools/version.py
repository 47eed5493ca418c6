"""`--version` for emmy's executables: the versions of emmy and the libraries it runs on, from
the installed packages' metadata, read only when asked (reading it costs start-up time).

    parser.add_argument("--version", action=ShowVersion, program="emmy", libraries=["xdsl"])
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

LIBRARY_NAMES = {"xdsl": "xDSL", "torch": "PyTorch"}


class ShowVersion(argparse.Action):
    """Prints `PROGRAM (emmy V, xDSL V, ...)`, or `emmy V (xDSL V, ...)` for emmy itself, and
    exits."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        program: str,
        libraries: Sequence[str],
        **kwargs: Any,
    ):
        self.program = program
        self.libraries = list(libraries)
        shown = " and ".join(LIBRARY_NAMES[name] for name in self.libraries)
        super().__init__(
            option_strings,
            dest=argparse.SUPPRESS,
            default=argparse.SUPPRESS,
            nargs=0,
            help=f"print the versions of {program} and {shown}, and exit",
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        from importlib.metadata import version

        libraries = ", ".join(f"{LIBRARY_NAMES[name]} {version(name)}" for name in self.libraries)
        if self.program == "emmy":
            print(f"emmy {version('emmy')} ({libraries})")
        else:
            print(f"{self.program} (emmy {version('emmy')}, {libraries})")
        parser.exit()
