"""Race detection for the SIMT emulator: which earlier accesses to an element are not ordered
before a thread's access, for shared and global memory alike.

    kernel.func @k(%t: memref<64xf32>, %y: memref<64xf32>) block [32, 1, 1] {
      ...
      memref.store %v, %t[%i] : memref<64xf32>      // thread 5 of block 0 stores t[5]
      %w = memref.load %t[%j] : memref<64xf32>      // thread 58 of block 1 reads t[5]: a race
    }

The emulator runs the threads of many blocks in lockstep, and the blocks of a launch in
chunks one after another, so a kernel that passes data between threads without ordering
the accesses still computes the right answer there while a GPU races. Each access is
therefore checked against the accesses to its element recorded before it: two accesses of
one block are ordered when a `kernel.barrier` lies between them, and accesses of different
blocks of one launch never are (there is no grid-wide barrier), except the shared memory
accesses of the blocks of a cluster, which a `kernel.cluster_barrier` orders (it drops their
records, see the SIMT emulator). A race is a read of what
another thread stored, a store over what another thread read or stored (unless it stores
the value already there) and any plain access beside another thread's atomic; atomics do not
race with atomics. An acq_rel atomic releases what its thread did and what its block did
before its phase (a barrier before it), and acquires what the acq_rel atomics on its element
before it released, whose records are then dropped (`forget_released`): the last block of
several to arrive at a counter reads what they stored, but not what they do after.

Who made an access and when is one int64 key (`Clock`): the thread, its block and how many
barriers the block has passed (its phase), so that each check compares arrays of keys, one
per accessing thread, with the keys an element's `Accesses` records: the last store (or the
atomics since it), and the reads since, each with the op that made it (24 bytes an element).
A barrier advances its block's keys, and the records need not be cleared. A record of
several accesses keeps what a later access needs to know: several threads of one block's
phase, or threads of several blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

NO_ACCESS = -1
"""The record of an element no thread has accessed (or that a later access made moot)."""

SEVERAL_BLOCKS = -2
"""The record of accesses by threads of more than one block: every later access of another
thread races with one of them."""

_FIRST_ATOMIC = -3
"""The writers' record holds a set of atomics `s` as `_FIRST_ATOMIC - s` (and atomics of
several blocks as SEVERAL_BLOCKS, which no store makes)."""

KEY_LIMIT = 1 << 62
"""Keys stay below this, so that a key plus a block's span never overflows int64."""


@dataclass(frozen=True)
class Accessors:
    """The threads of an access (one entry each): their keys, the first key of the phase
    their block is in now, and the first key of their block (see `Clock`)."""

    keys: np.ndarray
    phases: np.ndarray
    blocks: np.ndarray

    def part(self, taken: np.ndarray) -> Accessors:
        return Accessors(self.keys[taken], self.phases[taken], self.blocks[taken])


@dataclass(frozen=True)
class Clock:
    """The keys of one launch, block-major so that every check is comparisons: thread `t`
    (linear, in its block) of block `b` (linear, in the grid) after its block passed `n`
    barriers has key `(b * phases + n) * period + t`, where `period` is the block size plus
    one (thread number `block_size` stands for several threads of one block's phase) and
    `phases` is how many phases a block may have within KEY_LIMIT. A block's keys lie
    between its first, `b * phases * period`, and the next block's; those of its current
    phase from `phase` to `phase + block_size`, and those of its earlier phases below."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]

    def __post_init__(self) -> None:
        if self.phases < 2:
            raise ValueError(
                f"a grid of {self.blocks} blocks of {self.block_size} threads is more than "
                f"races can be told in"
            )

    @property
    def blocks(self) -> int:
        gx, gy, gz = self.grid
        return gx * gy * gz

    @property
    def block_size(self) -> int:
        bx, by, bz = self.block
        return bx * by * bz

    @property
    def period(self) -> int:
        """What passing a barrier adds to the keys of a block's threads."""
        return self.block_size + 1

    @property
    def phases(self) -> int:
        return KEY_LIMIT // (self.blocks * self.period)

    def first(self, first_block: int, blocks: int) -> Accessors:
        """The threads of blocks `first_block` on, before any barrier."""
        threads = np.arange(blocks * self.block_size, dtype=np.int64)
        block, thread = divmod(threads, self.block_size)
        starts = (first_block + block) * (self.phases * self.period)
        return Accessors(starts + thread, starts.copy(), starts)

    def unordered(self, recorded: np.ndarray, who: Accessors) -> np.ndarray:
        """Elementwise: the accesses `recorded` are not all ordered before the access of
        `who` by another thread (of another block, or of the same one in the same phase)."""
        elsewhere = (recorded < who.blocks) | (recorded >= who.phases)
        return elsewhere & (recorded != who.keys) & (recorded != NO_ACCESS)

    def current(self, recorded: np.ndarray, who: Accessors) -> np.ndarray:
        """Elementwise: `recorded` is of the phase that the block of `who` is in now."""
        return (recorded >= who.phases) & (recorded < who.phases + self.period)

    def joined(self, recorded: np.ndarray, who: Accessors) -> np.ndarray:
        """The records of the accesses `recorded` and then those of `who` together: accesses
        ordered before `who` are moot, those of one block's phase are several threads'."""
        moot = (
            (recorded == NO_ACCESS)
            | (recorded == who.keys)
            | ((recorded >= who.blocks) & (recorded < who.phases))
        )
        several = np.where(
            self.current(recorded, who), who.phases + self.block_size, SEVERAL_BLOCKS
        )
        return np.where(moot, who.keys, several)

    def threads(self, key: int, reader: int) -> str:
        """Who made the accesses of record `key`, for an error message about the access of
        key `reader`: their block only where it is not the reader's."""
        if key == SEVERAL_BLOCKS:
            return "threads of several blocks"
        block, thread = self.block_of(key), key % self.period
        where = "" if block == self.block_of(reader) else f" of {self.name(block)}"
        if thread == self.block_size:
            return f"several threads{where}" if where else "other threads"
        return f"thread {self.coordinates(thread)}{where}"

    def since(self, key: int, reader: int, shared: bool) -> str:
        """Why the accesses of record `key` and the access `reader` are not ordered (in shared
        memory where `shared`, which only the blocks of a cluster share)."""
        if key != SEVERAL_BLOCKS and self.block_of(key) == self.block_of(reader):
            return "since the last barrier (a missing kernel.barrier?)"
        if shared:
            return "since the last cluster barrier (a missing kernel.cluster_barrier?)"
        return (
            "in the same launch, whose blocks nothing orders (no barrier spans the grid: the "
            "data must pass between two launches)"
        )

    def block_of(self, key: int) -> int:
        return key // (self.phases * self.period)

    def coordinates(self, thread: int) -> str:
        bx, by, _ = self.block
        return f"({thread % bx}, {thread // bx % by}, {thread // (bx * by)})"

    def name(self, block: int) -> str:
        gx, gy, _ = self.grid
        return f"block ({block % gx}, {block // gx % gy}, {block // (gx * gy)})"


@dataclass(eq=False)
class Accesses:
    """The accesses to each element of a buffer that later ones are checked against, as
    `Clock` keys, with the op that made each (its number in the launch's ops): `writers` the
    last store, or the atomics since it; `readers` the reads since."""

    writers: np.ndarray
    writer_ops: np.ndarray
    readers: np.ndarray
    reader_ops: np.ndarray

    @classmethod
    def empty(cls, shape: tuple[int, ...]) -> Accesses:
        return cls(
            np.full(shape, NO_ACCESS, np.int64),
            np.zeros(shape, np.int32),
            np.full(shape, NO_ACCESS, np.int64),
            np.zeros(shape, np.int32),
        )

    def view(self, select: Callable[[np.ndarray], np.ndarray]) -> Accesses:
        """The records of the elements `select` views (each array viewed the same way)."""
        return Accesses(
            *(select(a) for a in (self.writers, self.writer_ops, self.readers, self.reader_ops))
        )

    def forget(self, index: tuple[np.ndarray, ...]) -> None:
        """Drops the records of elements written by what barriers do not order (TMA)."""
        self.writers[index] = self.readers[index] = NO_ACCESS


def forget_released(clock: Clock, accesses: Accesses, releases: Sequence[tuple[int, int]]) -> None:
    """Drops the records that acq_rel atomics released and an acquire now orders before what
    follows it: for each atomic (its thread's key and the first key of its block's phase),
    its thread's own accesses of that phase and its block's of the phases before (records of
    several blocks stay)."""
    span = clock.phases * clock.period
    for records in (accesses.writers, accesses.readers):
        keys = _stores_and_atomics(records)
        made = np.zeros(keys.shape, np.bool_)
        for key, phase in releases:
            made |= ((keys >= key // span * span) & (keys < phase)) | (keys == key)
        records[made] = NO_ACCESS


@dataclass(frozen=True)
class Race:
    """An access (`position` among those checked) that races with the earlier accesses
    `earlier` (a record) that the op numbered `op` made, as `what` says they did."""

    position: int
    earlier: int
    op: int
    what: str


def _atomics(writers: np.ndarray) -> np.ndarray:
    """The records of the sets of atomics among `writers` (NO_ACCESS for stores)."""
    return np.where(
        writers <= _FIRST_ATOMIC,
        _FIRST_ATOMIC - writers,
        np.where(writers == SEVERAL_BLOCKS, SEVERAL_BLOCKS, NO_ACCESS),
    )


def _as_writers(atomics: np.ndarray) -> np.ndarray:
    return np.where(atomics >= 0, _FIRST_ATOMIC - atomics, atomics)


def _stores_and_atomics(writers: np.ndarray) -> np.ndarray:
    """The writers' records with sets of atomics decoded: every access they record."""
    return np.where(writers <= _FIRST_ATOMIC, _FIRST_ATOMIC - writers, writers)


def _writes(writers: int) -> str:
    return "stored" if writers >= 0 else "updated with kernel.atomic"


def _first(
    race: np.ndarray, records: np.ndarray, ops: np.ndarray, what: Callable[[int], str]
) -> Race | None:
    if not race.any():
        return None
    position = int(np.flatnonzero(race)[0])
    recorded = int(np.broadcast_to(records, race.shape)[position])
    op = int(np.broadcast_to(ops, race.shape)[position])
    return Race(position, recorded, op, what(recorded))


def check_read(
    clock: Clock, accesses: Accesses, index: tuple[np.ndarray, ...], who: Accessors
) -> Race | None:
    """The first read of the threads `who` of what another thread wrote. Here and below,
    `index` indexes the records with one entry per thread of `who`, the element it
    accesses."""
    writers = accesses.writers[index]
    if not (writers != NO_ACCESS).any():
        return None
    race = clock.unordered(_stores_and_atomics(writers), who)
    return _first(race, writers, accesses.writer_ops[index], _writes)


def check_write(
    clock: Clock,
    accesses: Accesses,
    index: tuple[np.ndarray, ...],
    who: Accessors,
    changes: Callable[[], np.ndarray],
) -> Race | None:
    """The first store of the threads `who` that races with another thread's store, atomic
    or read; `changes()` says which stores change their element (a store of the value there
    already races with no store or read)."""
    writers, readers = accesses.writers[index], accesses.readers[index]
    if not ((writers != NO_ACCESS).any() or (readers != NO_ACCESS).any()):
        return None
    changed = changes()
    atomics = writers < NO_ACCESS
    race = clock.unordered(_stores_and_atomics(writers), who) & (changed | atomics)
    found = _first(
        race,
        writers,
        accesses.writer_ops[index],
        lambda w: "stored a different value to" if w >= 0 else _writes(w),
    )
    if found is not None:
        return found
    race = clock.unordered(readers, who) & changed
    return _first(race, readers, accesses.reader_ops[index], lambda _: "read")


def check_atomic(
    clock: Clock, accesses: Accesses, index: tuple[np.ndarray, ...], who: Accessors
) -> Race | None:
    """The first atomic of the threads `who` beside another thread's store or read."""
    writers, readers = accesses.writers[index], accesses.readers[index]
    race = (writers >= 0) & clock.unordered(writers, who)
    found = _first(race, writers, accesses.writer_ops[index], _writes)
    if found is not None:
        return found
    return _first(
        clock.unordered(readers, who), readers, accesses.reader_ops[index], lambda _: "read"
    )


def record_write(
    accesses: Accesses, index: tuple[np.ndarray, ...], who: Accessors, op: int
) -> None:
    """The threads `who` stored at `index` (where several store one element, the last one's
    store stays, as its value does)."""
    accesses.writers[index] = who.keys
    accesses.writer_ops[index] = op


def record_read(
    clock: Clock, accesses: Accesses, index: tuple[np.ndarray, ...], who: Accessors, op: int
) -> None:
    _record_joined(clock, accesses.readers, accesses.reader_ops, index, who, op, None)


def record_atomic(
    clock: Clock, accesses: Accesses, index: tuple[np.ndarray, ...], who: Accessors, op: int
) -> None:
    _record_joined(clock, accesses.writers, accesses.writer_ops, index, who, op, _atomics)


def _record_joined(
    clock: Clock,
    records: np.ndarray,
    ops: np.ndarray,
    index: tuple[np.ndarray, ...],
    who: Accessors,
    op: int,
    decode: Callable[[np.ndarray], np.ndarray] | None,
) -> None:
    """Adds the accesses of `who` at `index` to the sets `records` holds (through `decode`
    and back where they are atomics in the writers' record). Threads of this access that
    share an element join there too: one scatter keeps one thread's record, and those it
    lost are joined to it."""

    def read(at: tuple[np.ndarray, ...]) -> np.ndarray:
        return records[at] if decode is None else decode(records[at])

    def write(at: tuple[np.ndarray, ...], sets: np.ndarray) -> None:
        records[at] = sets if decode is None else _as_writers(sets)

    joined = clock.joined(read(index), who)
    write(index, joined)
    kept = read(index)
    lost = kept != joined
    if lost.any():
        part, mine = tuple(i[lost] for i in index), who.part(lost)
        # What another thread of this access left there joins this thread's record: several
        # threads of their block's phase, or of several blocks.
        together = (joined[lost] != SEVERAL_BLOCKS) & clock.current(kept[lost], mine)
        merged = np.where(together, mine.phases + clock.block_size, SEVERAL_BLOCKS)
        write(part, merged)
        spread = merged == SEVERAL_BLOCKS
        write(tuple(i[spread] for i in part), merged[spread])
    ops[index] = op
