"""Output files that are replaced whole or not at all: `PendingFile(path)` is written like any
text file, lands at `path` on `commit()` (a rename, so a reader sees the old file or the new
one, never a partial one) and leaves `path` as it was on `discard()`.

    with PendingFile(Path("out.mlir")) as output:   # commit() on success, discard() on error
        output.write(text)
"""

from __future__ import annotations

import os
import tempfile
from io import TextIOWrapper
from pathlib import Path


class PendingFile(TextIOWrapper):
    """A temporary file beside `path` (same directory, so the rename is atomic), which becomes
    `path` on `commit()`. A full disk or an error before it leaves `path` untouched."""

    def __init__(self, path: Path, mode: int | None = None):
        """`mode`: the permission bits of a new file (by default, what `open` would give it;
        a file that exists keeps its own)."""
        self.path = path
        self.mode = mode
        descriptor, temporary = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".tmp", dir=path.parent if path.parent.parts else "."
        )
        self.temporary = Path(temporary)
        super().__init__(os.fdopen(descriptor, "wb"), encoding="utf-8")

    def commit(self) -> None:
        try:
            self.flush()
            os.fsync(self.fileno())
            self.close()
            if self.path.exists():
                os.chmod(self.temporary, self.path.stat().st_mode & 0o7777)
            else:
                os.chmod(self.temporary, 0o666 & ~_umask() if self.mode is None else self.mode)
            os.replace(self.temporary, self.path)
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        if not self.closed:
            self.close()
        self.temporary.unlink(missing_ok=True)

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
