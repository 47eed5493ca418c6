"""The disk cache of compiled cubins: private to its user, checksummed, locked per key, bounded.

    with CubinCache(cache_dir(), cache_max_bytes()) as cache:
        cubin = cache.cubin(key, lambda: compile_it(source), source)

    $ ls ~/.cache/emmy/cubin
    3f0c...e1.entry   3f0c...e1.cu   3f0c...e1.lock

An entry `<key>.entry` is the line `emmy-cubin-v1 sha256:<hex of the cubin>` followed by the
cubin; `<key>.cu` is the CUDA source it was compiled from, for reading only; `<key>.lock` is
what concurrent compiles of one key take turns on (`fcntl.flock`), so that 16 processes
compiling one source compile it once.

What the cache trusts: a cubin it launches was written by its own user into a directory that
only this user can write to. The directory is created 0700; a directory or file not owned by
the current user, writable by its group or others, or a symbolic link, is refused with a
`CubinCacheError` naming the path, what is wrong and how to fix it. Every file is opened
relative to the directory's file descriptor, with O_NOFOLLOW, and checked on that descriptor,
so what is checked is what is read. An entry whose checksum does not match (truncated,
corrupted) is deleted and compiled again; one deleted under a reader is a miss.

Writes go to a temporary file in the directory, renamed into place (removed if anything
fails). Each hit touches the entry's mtime; after each write the least recently used entries
are deleted until the directory holds at most `EMMY_CACHE_MAX_BYTES` (default 1 GiB), and
leftovers of interrupted writes over an hour old go too. Clearing the cache is removing the
directory.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import pwd
import re
import secrets
import stat
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from emmy.tools.settings import cache_root, setting

DEFAULT_MAX_BYTES = 1 << 30
HEADER = b"emmy-cubin-v1 sha256:"
HEADER_SIZE = len(HEADER) + 64 + 1
"""The header line's length: the prefix, the hex digest and a newline."""
STALE_NS = 3600 * 10**9
"""How old a file left by an interrupted write (or an older emmy) is before eviction removes
it; younger ones may belong to a compile in progress."""

_KEYED_FILE = re.compile(r"([0-9a-f]{64})\.(entry|cu|lock|cubin)")
_TEMPORARY_FILE = re.compile(r"\..+\.tmp")
_OPEN_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_OWN_DIRECTORY = "EMMY_CACHE_DIR to a directory of your own"


class CubinCacheError(RuntimeError):
    """The cubin cache cannot be trusted (or is misconfigured): the message names the path,
    what is wrong with it and how to fix it."""


def cache_dir() -> Path:
    """Where cubins are cached: `cubin` in emmy's cache directory (`$EMMY_CACHE_DIR`, else
    `$XDG_CACHE_HOME/emmy`, else `~/.cache/emmy`)."""
    return cache_root() / "cubin"


def cache_max_bytes() -> int:
    """The cache's size cap: `$EMMY_CACHE_MAX_BYTES`, else 1 GiB."""
    return setting(
        "EMMY_CACHE_MAX_BYTES",
        int,
        DEFAULT_MAX_BYTES,
        lambda value: value >= 0,
        CubinCacheError("EMMY_CACHE_MAX_BYTES must be a whole number of bytes (0 or more)"),
    )


def entry_bytes(cubin: bytes) -> bytes:
    """What an entry file holds for `cubin`: the checksum line, then the cubin."""
    return HEADER + hashlib.sha256(cubin).hexdigest().encode() + b"\n" + cubin


def entry_cubin(data: bytes) -> bytes | None:
    """The cubin of an entry file's bytes; None when the header or the checksum is wrong."""
    header, cubin = data[:HEADER_SIZE], data[HEADER_SIZE:]
    if len(header) != HEADER_SIZE or not header.startswith(HEADER) or header[-1:] != b"\n":
        return None
    digest = header[len(HEADER) : -1]
    return cubin if digest == hashlib.sha256(cubin).hexdigest().encode() else None


class CubinCache:
    """One cache directory, checked and held open: files are looked up through its descriptor,
    so that a directory swapped in after the check is never read."""

    def __init__(self, directory: Path, max_bytes: int = DEFAULT_MAX_BYTES):
        """Opens `directory`, creating it (0700, its parents as needed); raises
        CubinCacheError when it is not private to this user, OSError when it cannot be
        created or opened."""
        self.directory = directory
        self.max_bytes = max_bytes
        self._fd = _open_private_directory(directory)

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> CubinCache:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    def cubin(self, key: str, compile: Callable[[], bytes], source: str) -> bytes:
        """The cubin stored at `key`, else `compile()`'s, stored with `source` beside it. One
        process at a time compiles a key; the others wait for it and read its entry."""
        found = self._read(key)
        if found is not None:
            return found
        with self._locked(key):
            found = self._read(key)
            if found is not None:
                return found
            self._remove(f"{key}.entry")  # a corrupt one, which a failed compile would leave
            cubin = compile()
            try:
                self._write(f"{key}.entry", entry_bytes(cubin))
                self._write(f"{key}.cu", source.encode())
                self._evict(keep=key)
            except OSError:
                pass  # a full disk costs only time: the cubin is returned, not kept
            return cubin

    def _open(self, name: str, flags: int, what: str) -> int | None:
        """A file of the directory opened without following links and checked to be a private
        regular file; None when it does not exist."""
        path = self.directory / name
        remove = (
            f"Remove it (rm {path}), or clear the cache (rm -r {self.directory}): emmy then "
            "compiles the kernels again."
        )
        try:
            fd = os.open(name, flags | _OPEN_FLAGS, 0o600, dir_fd=self._fd)
        except FileNotFoundError:
            return None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise CubinCacheError(_symbolic_link(path, what, remove)) from error
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise CubinCacheError(f"{path}: the {what} is not a regular file. {remove}")
            _check_private(info, path, what, not_yours=remove, writable=remove)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _read(self, key: str) -> bytes | None:
        """The entry's cubin; None when it is missing (deleted under us included), unreadable
        or corrupt. A hit touches the entry's mtime, the age eviction goes by."""
        try:
            fd = self._open(f"{key}.entry", os.O_RDONLY, "cache entry")
        except OSError:
            return None
        if fd is None:
            return None
        with os.fdopen(fd, "rb") as stream:
            try:
                cubin = entry_cubin(stream.read())
            except OSError:
                return None
            if cubin is not None:
                with suppress(OSError):  # a read-only cache still serves its entries
                    now = time.time_ns()
                    os.utime(stream.fileno(), ns=(now, now))
        return cubin

    @contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        """Holds `<key>.lock` exclusively (unlocked, if the lock file cannot be made)."""
        try:
            fd = self._open(f"{key}.lock", os.O_RDWR | os.O_CREAT, "lock file")
        except OSError:
            fd = None
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            if fd is not None:
                os.close(fd)

    def _write(self, name: str, data: bytes) -> None:
        """Writes `name` atomically: a private temporary file, renamed into place, stamped now
        (eviction's clock); the temporary file is removed when anything fails."""
        temporary = f".{name}.{secrets.token_hex(8)}.tmp"
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS, 0o600, dir_fd=self._fd
        )
        try:
            try:
                _write_all(fd, data)
                now = time.time_ns()
                os.utime(fd, ns=(now, now))
            finally:
                os.close(fd)
            os.rename(temporary, name, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except BaseException:
            self._remove(temporary)
            raise

    def _remove(self, name: str) -> None:
        with suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self._fd)

    def _evict(self, keep: str) -> None:
        """Deletes the least recently used entries (not `keep`) until the directory holds at
        most `max_bytes`, and files over an hour old that belong to no entry."""
        now = time.time_ns()
        sizes: dict[str, int] = defaultdict(int)
        used: dict[str, int] = {}
        newest: dict[str, int] = defaultdict(int)
        with os.scandir(self._fd) as items:
            for item in items:
                try:
                    info = item.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if match := _KEYED_FILE.fullmatch(item.name):
                    key, kind = match.groups()
                    sizes[key] += info.st_size
                    newest[key] = max(newest[key], info.st_mtime_ns)
                    if kind == "entry":
                        used[key] = info.st_mtime_ns
                elif _TEMPORARY_FILE.fullmatch(item.name) and now - info.st_mtime_ns > STALE_NS:
                    self._remove(item.name)
        orphans = [key for key in sizes.keys() - used.keys() if now - newest[key] > STALE_NS]
        by_age = sorted((key for key in used if key != keep), key=used.__getitem__)
        total = sum(sizes.values())
        for key in orphans + by_age:
            if key in used and total <= self.max_bytes:
                break
            # A process waiting on this key's lock may then compile it a second time.
            for kind in ("entry", "cu", "lock", "cubin"):
                self._remove(f"{key}.{kind}")
            total -= sizes[key]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _open_private_directory(directory: Path) -> int:
    directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with suppress(FileExistsError):
        directory.mkdir(mode=0o700)
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        if directory.is_symlink():
            fix = f"Remove the link (rm {directory}), or set {_OWN_DIRECTORY}."
            raise CubinCacheError(_symbolic_link(directory, "cache directory", fix)) from error
        raise CubinCacheError(
            f"{directory}: the cache is not a directory. Set {_OWN_DIRECTORY}."
        ) from error
    try:
        _check_private(
            os.fstat(fd),
            directory,
            "cache directory",
            not_yours=f"Set {_OWN_DIRECTORY}.",
            writable=f"Make it private (chmod 700 {directory}), or set {_OWN_DIRECTORY}.",
        )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_private(info: os.stat_result, path: Path, what: str, *, not_yours: str, writable: str):
    """Refuses a file or directory that another user owns or can write to; `not_yours` and
    `writable` say how to fix each."""
    if info.st_uid != os.geteuid():
        raise CubinCacheError(
            f"{path}: the {what} is owned by {_user(info.st_uid)}, not by you "
            f"({_user(os.geteuid())}): emmy launches only cubins that its own user wrote. "
            f"{not_yours}"
        )
    if info.st_mode & 0o022:
        writers = " and ".join(
            who for who, bit in (("its group", 0o020), ("others", 0o002)) if info.st_mode & bit
        )
        raise CubinCacheError(
            f"{path}: the {what} is writable by {writers} (mode {stat.S_IMODE(info.st_mode):o}), "
            f"who could plant a cubin in it that emmy would launch. {writable}"
        )


def _user(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _symbolic_link(path: Path, what: str, fix: str) -> str:
    return f"{path}: the {what} is a symbolic link, which emmy does not follow in its cache. {fix}"
