"""The tuning database: the measured best schedule of each kernel, kept in SQLite in the user's
cache directory, that `choose-tile-schedule` takes before its heuristic.

    $ emmy tune -c 'nn.RMSNorm(4096)(torch.randn(8192, 4096))'    # writes the database
    $ emmy compile -c 'nn.RMSNorm(4096)(torch.randn(8192, 4096))' --ir tile
    tile.kernel @k_rms_norm(...) ... attributes {tile.schedule = #tile.schedule<...>,
        tile.tuned = "11.84 us on sm_90a (heuristic 13.02 us), 2026-12-05"}

A kernel is known by `kernel_key`: its Loop IR with its name and value names normalised away
(so the same kernel in two programs, or under two names, is one entry; its shapes and dtypes
are in its types), the target's architecture and emmy's version (another emmy may lower a
schedule differently). The file is `tuning.sqlite3` in emmy's cache directory
(`emmy.tools.settings.cache_root`), created 0600 in a 0700 directory. Several processes may
tune and compile at once: SQLite's locking (in WAL mode, with a busy timeout) orders their
writes, a key's newer measurement replaces the older, and writers take `tuning.sqlite3.lock`
to make the file or set a bad one aside. A file that is not this database (corrupt, another
format, a newer or older schema) is never a crash: it is ignored with a warning when read,
and moved aside (`tuning.sqlite3.bad`) when written; one busy past the timeout is left out
with a warning.
`export`/`import_file` move entries between machines as JSON. emmy ships such exports, tuned on a
GPU, in `emmy/tools/tuned/<arch>.json` (`sm_90a.json`: on an H200): `lookup_tuned` reads the
user's database first, then the shipped file of the kernel's architecture, so that a program
whose kernels were tuned there compiles them tuned without a tuning of its own.
"""

from __future__ import annotations

import datetime
import fcntl
import functools
import json
import os
import sqlite3
import warnings
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, fields
from hashlib import sha256
from pathlib import Path

from xdsl.dialects.builtin import StringAttr

from emmy.dialects import loop, tile
from emmy.dialects.target import GpuTarget
from emmy.tools.ir_cache import package_version, unnamed_text
from emmy.tools.settings import cache_root

SCHEMA_VERSION = 1
"""`PRAGMA user_version` of the database; a file with another is not read or written."""
FILE_NAME = "tuning.sqlite3"
SHIPPED_DIRECTORY = Path(__file__).parent / "tuned"
"""The exports that ship with emmy, one a target architecture (`<arch>.json`)."""
BUSY_TIMEOUT_S = 30.0


class TuningDatabaseWarning(UserWarning):
    """The tuning database could not be used (it is ignored, never a crash)."""


@dataclass(frozen=True)
class TunedSchedule:
    """One kernel's tuning: its best schedule (`#tile.schedule<...>` text) and what it was
    measured against."""

    key: str
    arch: str
    emmy_version: str
    kernel: str
    """The kernel's normalised Loop IR (for people reading an export)."""
    schedule: str
    time_us: float
    heuristic_us: float | None
    """The heuristic's schedule's time in the same tuning (None when it was wrong or untimed)."""
    candidates: int
    """How many schedules were timed."""
    tuned_on: str
    """The date (ISO) of the measurement."""

    @property
    def summary(self) -> str:
        """'11.84 us on sm_90a (heuristic 13.02 us), 2026-12-05'."""
        heuristic = f" (heuristic {self.heuristic_us:.2f} us)" if self.heuristic_us else ""
        return f"{self.time_us:.2f} us on {self.arch}{heuristic}, {self.tuned_on}"


_COLUMNS = tuple(f.name for f in fields(TunedSchedule))
"""The database's columns, in order: a `TunedSchedule`'s fields, `key` first."""


def emmy_version() -> str:
    return package_version("emmy")


def normalised_kernel(kernel: loop.KernelOp) -> str:
    """`kernel`'s Loop IR without its name, its schedule or its values' names."""
    clone = kernel.clone()
    clone.sym_name = StringAttr("kernel")
    clone.attributes.pop(tile.SCHEDULE_ATTRIBUTE, None)
    clone.attributes.pop(tile.TUNED_ATTRIBUTE, None)
    return unnamed_text(clone)


def kernel_key(kernel: loop.KernelOp, target: GpuTarget) -> str:
    """The key of `kernel` compiled for `target` by this emmy (see the module docstring)."""
    text = "\n".join((normalised_kernel(kernel), target.arch, emmy_version()))
    return sha256(text.encode()).hexdigest()


def default_path() -> Path:
    return cache_root() / FILE_NAME


def fingerprint() -> str:
    """What changes when the default database may have: the modification times and sizes of
    its file and its write-ahead log (empty when there is none), for caches of IR that took
    schedules from it (`emmy.tools.compiled_graph`) to key on."""
    parts = []
    for path in (default_path(), Path(f"{default_path()}-wal"), *SHIPPED_DIRECTORY.glob("*.json")):
        try:
            status = path.stat()
        except OSError:
            continue
        parts.append(f"{path.name}:{status.st_mtime_ns}:{status.st_size}")
    return " ".join(parts)


class TuningDatabase:
    """The database at `path` (default: `default_path()`)."""

    def __init__(self, path: Path | None = None):
        self.path = path or default_path()

    def _open(self, create: bool) -> sqlite3.Connection | None:
        """A connection to the database, or None where there is none to read (a missing or
        empty file), the file is not one, or it cannot be used now (the last two after a
        warning). With `create`, a missing file is created and one that is not the database
        is moved aside and replaced, under a lock that other writers take too (`<file>.lock`),
        so that no process moves aside what another is making."""
        if not create:
            return self._connect(create) if self.path.exists() else None
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        lock = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))
            return self._connect(create)
        finally:
            os.close(lock)

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        for _ in range(2):
            connection = None
            try:
                connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
                version = connection.execute("PRAGMA user_version").fetchone()[0]
                tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if version == SCHEMA_VERSION:
                    return connection
                if version == 0 and tables == 0:
                    if not create:
                        connection.close()
                        return None
                    connection.execute("PRAGMA journal_mode=WAL")
                    connection.execute(
                        f"CREATE TABLE schedules ({_COLUMNS[0]} TEXT PRIMARY KEY, "
                        f"{', '.join(_COLUMNS[1:])})"
                    )
                    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    connection.commit()
                    return connection
                reason: object = f"schema version {version}, not {SCHEMA_VERSION}"
            except sqlite3.OperationalError as error:
                # Busy past the timeout, or unreadable: no verdict on what the file holds.
                if connection is not None:
                    connection.close()
                warnings.warn(
                    f"the tuning database {self.path} cannot be used now ({error}): it is left out",
                    TuningDatabaseWarning,
                    stacklevel=4,
                )
                return None
            except sqlite3.DatabaseError as error:
                reason = error
            if connection is not None:
                connection.close()
            what = f"the tuning database {self.path} is not usable ({reason})"
            if not create:
                warnings.warn(f"{what}: it is ignored", TuningDatabaseWarning, stacklevel=4)
                return None
            aside = self.path.with_name(self.path.name + ".bad")
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            warnings.warn(f"{what}: moved to {aside}", TuningDatabaseWarning, stacklevel=4)
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))
        raise OSError(f"cannot create the tuning database {self.path}")

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection | None]:
        connection = self._open(create=False)
        if connection is None:
            yield None
            return
        with closing(connection):
            yield connection

    def lookup(self, key: str) -> TunedSchedule | None:
        with self._reading() as connection:
            if connection is None:
                return None
            row = connection.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM schedules WHERE key = ?", (key,)
            ).fetchone()
        return TunedSchedule(*row) if row else None

    def record(self, *entries: TunedSchedule) -> None:
        """Records `entries` in one transaction, each replacing an older one of its key."""
        connection = self._open(create=True)
        if connection is None:
            return
        with closing(connection), connection:
            connection.executemany(
                f"INSERT OR REPLACE INTO schedules ({', '.join(_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(_COLUMNS))})",
                [tuple(asdict(entry).values()) for entry in entries],
            )

    def entries(self) -> list[TunedSchedule]:
        with self._reading() as connection:
            if connection is None:
                return []
            rows = connection.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM schedules ORDER BY key"
            ).fetchall()
        return [TunedSchedule(*row) for row in rows]

    def export(self, path: Path) -> int:
        """Writes every entry to `path` as JSON; returns how many."""
        entries = self.entries()
        document = {"emmy_tuning": SCHEMA_VERSION, "entries": [asdict(e) for e in entries]}
        path.write_text(json.dumps(document, indent=1) + "\n")
        return len(entries)

    def import_file(self, path: Path) -> int:
        """Records every entry of an `export`ed file; returns how many. A ValueError says what
        is wrong with a file that is not one."""
        entries = read_export(path)
        self.record(*entries)
        return len(entries)


def read_export(path: Path) -> list[TunedSchedule]:
    """The entries of an `export`ed file; a ValueError says what is wrong with one that is
    not."""
    try:
        document = json.loads(path.read_text())
        if document.get("emmy_tuning") != SCHEMA_VERSION:
            raise ValueError(f"not an emmy tuning export of version {SCHEMA_VERSION}")
        return [TunedSchedule(**entry) for entry in document["entries"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
        raise ValueError(f"{path}: {error}") from None


@functools.cache
def shipped(arch: str) -> dict[str, TunedSchedule]:
    """The entries of `arch`'s shipped tuning by key (none where emmy ships none; a file that
    is not an export is ignored with a warning)."""
    path = SHIPPED_DIRECTORY / f"{arch}.json"
    if not path.exists():
        return {}
    try:
        return {entry.key: entry for entry in read_export(path)}
    except ValueError as error:
        warnings.warn(f"the shipped tuning is ignored: {error}", TuningDatabaseWarning)
        return {}


def lookup_tuned(
    database: TuningDatabase | None, kernel: loop.KernelOp, target: GpuTarget
) -> tuple[TunedSchedule, bool] | None:
    """`kernel`'s entry in `database` (None: the user's database is not read), else in the
    shipped tuning of `target`'s architecture, and whether it is the shipped one."""
    if database is None and not shipped(target.arch):
        return None  # nothing to look up: no key to compute
    key = kernel_key(kernel, target)
    entry = database.lookup(key) if database is not None else None
    if entry is not None:
        return entry, False
    entry = shipped(target.arch).get(key)
    return (entry, True) if entry is not None else None


def today() -> str:
    return datetime.date.today().isoformat()
