"""A SIMT emulator for Kernel IR: `kernel.launch` runs a `kernel.func` on numpy, every thread
of a block at once.

Execution model
---------------
`kernel.launch @k(args) grid [..] block [..] smem N` runs the kernel's body once per *chunk*
of blocks: the blocks of the grid, in linear order (x fastest), are cut into chunks of about
`CHUNK_THREADS` threads (fewer when they use much shared memory), and every thread of every
block of a chunk runs in lockstep. Each SSA value inside the kernel is a numpy array with one
element per thread of the chunk, shape `(threads,)`, or a 0-d array for a value that is the
same for every thread (constants, block dimensions, loop counters of uniform loops; the
scalar impls of `emmy.tools.interpreter.scalar` broadcast the two, so they run unchanged).
Threads are numbered block-major: thread `t` of the chunk is thread `t % T` (linear,
`x + bx * (y + by * z)`) of block `t // T`, where `T` is the block size; warps are runs of
consecutive linear thread ids of a block, as on the GPU, as long as the warp size of the
module's target (`emmy.dialects.target`). CUDA blocks are independent (they may run in any
order, or at the same time), so a race-free kernel cannot tell lockstep blocks from
sequential ones.

- `kernel.thread_id x|y|z`, `kernel.block_id`: per-thread index arrays; `kernel.block_dim`,
  `kernel.grid_dim`: uniform.
- Divergence is a mask of the active threads. `scf.if` on a per-thread condition runs the
  then-region with `mask & cond` and the else-region with `mask & ~cond` (a region no thread
  takes does not run) and merges the results with `np.where(cond, then, else)`; on a uniform
  condition it runs one region. `scf.for` with uniform bounds iterates in Python; with
  per-thread bounds (a strided loop `for j = tid; j < n; j += blockDim`) it runs until no
  thread is left, each iteration under the mask of the threads still iterating, and merges
  the loop-carried values by that mask, so a thread's results are those of its own last
  iteration. A step that is not positive is an error (it would never end). Values computed
  for inactive threads are garbage and never observable: they are never stored, and inactive
  threads' indices are never used, so they cannot fail.
- Warp-specialised kernels: the two regions of a divergent `scf.if` are cooperative tasks
  (`emmy.tools.interpreter.tasks`), since a producer region that waits for the consumers'
  arrivals would otherwise wait forever. The then-region runs first; when it blocks in a
  `kernel.mbarrier_wait` whose phase has not completed for every active thread, the next
  runnable task runs: a parked one whose wait is now over, else the else-region deferred
  last, in a Python thread of its own with its own interpreter scopes and mask.
  One task runs at a time and tasks switch only at blocking waits, so runs are
  deterministic; a program that never blocks runs in lockstep exactly as described above,
  in one thread. A task's threads wait together (until the phase completed for all of
  them). Nothing runnable while tasks are blocked is an error, "deadlock", naming each
  waiting op, its threads, the mbarrier and what its phase still expects.
- `memref.load` / `memref.store` (and the vector, atomic and cp.async accesses) check the
  indices of the active threads and fail on an out-of-bounds access, naming the thread and
  the block; a store writes only active threads. Several threads of one store may write one
  element only the same value (CUDA leaves the winner unspecified: different values are a
  race). Global buffers are the host's numpy arrays, mutated in place.
- Shared memory: `kernel.shared_alloc` gives each block its own array (one per op per block,
  however often the op runs, like a `__shared__` variable); `kernel.dynamic_shared offset N`
  is a view at byte offset N of the block's dynamic shared memory, a byte buffer of the
  launch's `smem` size (a view that does not fit is an error; bf16 views, held as float32,
  alias each other but not views of other types). Shared memory starts as NaN for floats and
  all-ones bits (-1) for integers, so reading what no one wrote shows.
- `kernel.barrier` is a phase boundary: lockstep execution has already finished every access
  before it. Every thread of a block must reach it: a barrier that only some threads of a
  block reach (in a block with any thread there) is an error, "barrier under divergent
  control flow". (The kernel verifier rejects a barrier under thread-dependent control flow
  statically; this catches what its analysis cannot see, and unverified IR.)
- Clusters (`kernel.func ... cluster N`): a chunk holds whole clusters (N consecutive blocks
  along x), so their blocks run in lockstep. `kernel.cluster_barrier` is a barrier that every
  thread of every block of a cluster reaches (or none: "cluster barrier under divergent
  control flow"); it orders the shared memory accesses of the cluster's blocks, whose race
  records it drops. `kernel.map_shared_rank %s, %r` is the same buffer with each thread's
  bank moved to the block of rank r of its cluster (a rank outside the cluster is an error);
  an access through it is checked like any other, and a cluster whose blocks end after one
  with no cluster barrier since is an error (a block's shared memory ends with it).
- Races, in shared and global memory alike (`emmy.tools.interpreter.races`): a thread that
  reads an element another thread stored, or stores a different value to an element another
  thread stored or read, or accesses one that another thread updated with an atomic (or
  updates one with an atomic that another thread stored or read), with no barrier between
  the two in their block, or from another block of the launch (no barrier orders blocks,
  whichever chunk they run in; an acq_rel `kernel.atomic` orders those before the acq_rel
  atomics on its element before it, see `races`), is an error naming the kernel, both
  threads, the buffer, the element and both ops: lockstep execution would otherwise hide
  the race, which on a GPU gives wrong answers. Atomics do not race with atomics. Only the
  global buffers that the kernel writes are tracked (a buffer it only reads cannot race),
  each launch anew, and not through a tensor map (a `kernel.tma_load` reads an operand the
  kernel does not write).
- `kernel.shuffle xor|down|up|idx %v, %b` (a whole warp of W lanes, width W, PTX `shfl.sync`
  with a full mask): lane `l` reads lane `l ^ b` (xor), `l + b` (down), `l - b` (up) or
  `b mod W` (idx); a source lane outside 0..W-1 gives the lane its own value. Every existing
  lane of a warp must take part (a warp only partly active is an error), and reading a lane
  beyond the end of a partial last warp (in a block that is not whole warps, which the
  verifier rejects) is an error.
- `kernel.atomic add|max|min %v, %buf[%i]` returns the old values. The active threads of one
  atomic op are serialised in thread order (block-major, as numbered above; blocks of later
  chunks after those of earlier ones): each thread sees the value left by the threads before
  it. Sums are therefore exactly the serial sums in that order. (bf16 buffers are held as
  float32 and round once after the op.)
- `kernel.vector_load` / `kernel.vector_store` access N consecutive elements along the last
  dimension; like the hardware they require the first element to be aligned to N elements'
  bytes (from the start of the buffer or of the dynamic shared memory). A `vector<NxT>` value
  is an array of shape `(N, threads)`, lane-major (per thread even where it is uniform, so
  that the masked merges of `scf.if` / `scf.for` broadcast it like a scalar);
  `vector.extract` / `vector.insert` (static or per-thread positions, which must be in
  range) and `vector.broadcast` (of a scalar) work on it.
- A swizzled shared buffer (`kernel.shared_alloc {layout = #kernel.swizzle<N>}`, or a swizzled
  dynamic view) holds element `e` at its swizzled place: every access goes through the
  swizzle, so a kernel that writes and reads it consistently sees its values, and race
  reports name the physical element.
- `kernel.cp_async` reads its source at the op (aligned like a vector access; with
  `src_bytes`, only those bytes, the rest zeros) and puts the data in shared memory when the
  issuing thread's `kernel.cp_async_wait N` completes the copy's group: each thread numbers
  the groups it closes with `kernel.cp_async_commit`, and a wait completes every copy of a
  group that leaves at most N of its closed groups behind (copies not yet committed stay in
  flight). Until then any read or store of a destination element, and a second copy to it,
  is an error ("in flight", a missing kernel.cp_async_wait?); a barrier completes nothing.
  The landed data counts as written by the issuing thread, so another thread must still pass
  a barrier before it reads it. Copies still in flight when a block ends are dropped.
- `kernel.ldmatrix` and `kernel.mma_sync` are warp instructions (`.sync.aligned`): every lane
  of a warp that executes one must execute it, in the same step (a warp only partly active is
  an error, "under divergent control flow"). ldmatrix reads the 16-byte row that each of
  lanes 0 to 8N - 1 addresses, as that lane's read (16-byte aligned, bounds- and race-checked;
  the other lanes' indices are not read), and hands the elements out in the PTX fragment layout
  (see `kernel.LdmatrixOp`). mma_sync puts each warp's A, B and C fragments together into
  matrices by the PTX ISA's layouts (`mma_fragment_layouts`), computes A * B + C in float64
  (tf32 operands rounded first) and rounds once to f32; the hardware's accumulation order and
  rounding are unspecified, so a GPU may differ in the last bits.
- mbarriers (`kernel.mbarrier_alloc`, one array per op per block) follow the PTX ISA:
  `mbarrier_init` sets the arrivals that complete a phase and starts phase 0;
  `mbarrier_arrive` is one arrival per active thread (in thread order; with `rank r`, on the
  mbarrier of the block of rank r of its cluster, a rank outside the cluster an error) and
  `mbarrier_arrive_expect_tx` first raises the phase's pending transaction bytes; a phase
  completes when its arrivals reach the count and its pending bytes reach 0, and the next
  phase (of the other parity) begins. `mbarrier_wait %b[%i], %p` returns once the current
  phase's parity is not p (the phase of parity p completed), blocking its task until then,
  and records for each thread the phases it has seen complete. An index outside the array,
  use before init, a parity other than 0 or 1 and more arrivals than a phase that still
  waits for bytes expects are errors.
- `kernel.tma_load` reads its box of the tensor-map parameter (the numpy array that
  `kernel.launch` passes for it) at the op, zeros outside the tensor, and lands it at once
  as `prod(box)` consecutive row-major elements of the destination from the addressed
  element (through its swizzle; on the swizzle's pattern, 1024 bytes for 128, else on 128
  bytes; inside the buffer), completing its bytes on the mbarrier's current phase. With
  `multicast %mask` the box, read once, lands at the same place in each block of the issuing
  thread's cluster whose rank's bit is set, completing its bytes on that block's mbarrier at
  the same place, each landing checked as below (a bit at or beyond the cluster's size is an
  error). The landed elements are tagged with that mbarrier and phase: a generic load that
  reads one before its thread has waited for the phase, or a wgmma before every thread of
  its warpgroup has, is an error ("read before its mbarrier phase completed"). A copy over
  elements that a wgmma or a `kernel.tma_store` in flight reads, that an earlier copy
  delivered in a phase no thread of the block has waited for yet ("a missing mbarrier wait on
  the consumer's release?"), or that a cp.async in flight writes, is an error. The async
  proxy's writes are ordered by mbarriers, not by `kernel.barrier`: they clear the elements'
  race records, so a generic read of a stage that the reader released with an arrival before
  TMA overwrote it is not checked, and the tags belong to the view a copy wrote through (not
  to aliasing views of other types).
- `kernel.tma_store` runs in each active thread that executes it (normally one, under an
  `scf.if`): it reads its box from the source at the op, as `prod(box)` consecutive row-major
  elements from the addressed element (through its swizzle; placed and checked as a
  tma_load's landing, and like a generic read not while a cp.async in flight writes them or
  before the thread has waited for the phase of a tma_load that delivered them; a
  `kernel.map_shared_rank` view is an error: the source is the block's own), and writes it
  into the tensor-map parameter's numpy array at once, leaving out the elements outside the
  tensor. Until the thread's `kernel.tma_store_wait N` (with `read` or without: the writes
  are done) leaves at most N of its committed groups behind, the source elements are read by
  a store in flight: each thread numbers the groups it closes with
  `kernel.tma_store_commit`, as for cp_async, and stores not committed yet stay in flight.
  A generic store (or vector store) or a TMA load to such an element is an error ("a
  kernel.tma_store still in flight reads", a missing kernel.tma_store_wait?), and so is a
  block that ends with a store in flight. The store's reads are not race-checked against
  the other threads' stores before it: the async proxy reads, which the kernel orders after
  them with `kernel.fence_proxy_async` and a (named) barrier, and lockstep, which has run
  those stores already, cannot check that; nor are its writes to global memory (as
  tma_load's reads are not).
- `kernel.named_barrier` (warps waiting for each other's arrivals) has nothing to wait for
  in lockstep: it checks that whole warps execute it, on barrier 1 to 15, of at most the
  block's threads. It orders when warps run, not memory, so lockstep computes what a GPU does.
- `kernel.wgmma`, `wgmma_fence`, `wgmma_commit`, `wgmma_wait` and `setmaxnreg` are
  warpgroup instructions: every thread of a warpgroup (128 consecutive threads of a block)
  that executes one executes it, converged. A wgmma reads the warpgroup's A (64 x 16) and
  B (16 x N) tiles from their K-major swizzled shared buffers at the op (A from the threads'
  `vector<8>` register fragments instead where it is one, laid out as an m64n16
  accumulator; f32 tiles 64 x 8 and 8 x N, each element truncated to tf32; every thread of the
  warpgroup addressing the same tiles, at a row that is a multiple of 8 and a k that is a
  multiple of 16, inside the buffer; an element that a thread stored since the last barrier
  is a race), gathers C from the threads' accumulators by the PTX layout (element i of thread
  t at row 16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (t % 4) + i % 2,
  `wgmma_accumulator_layout`), computes A * B + C in float64 and rounds once to f32. The
  result is there at once, but the tiles stay read by a wgmma in flight until a `wgmma_wait`
  of the warpgroup leaves at most `pending` of its committed groups behind (`wgmma_commit`
  closes a group; wgmmas not committed yet stay in flight): a store or a TMA copy to them
  is an error. `fence_proxy_async` does nothing: the emulator's proxies share one memory.

Host side: `kernel.launch` passes its operands (numpy arrays from `memref.alloc` /
`memref.get_global`, or function arguments) to the kernel, which writes them in place; a
scalar parameter is a uniform value of its type, a tensor-map parameter the numpy array of
its tensor.
`memref.load` / `memref.store` outside a kernel (Tile IR uses them too) run as the functions
given to `SimtFunctions` run them, so it takes those ops over from them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from io import StringIO
from math import prod
from typing import NoReturn

import numpy as np
from xdsl.dialects import memref, scf, vector
from xdsl.dialects.builtin import VectorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Operation, Region
from xdsl.printer import Printer
from xdsl.utils.exceptions import InterpretationError

from emmy.dialects import kernel
from emmy.dialects.dtypes import element_bytes
from emmy.dialects.effects import written_values
from emmy.dialects.target import target_of
from emmy.tools.interpreter import races
from emmy.tools.interpreter.loop import OutOfBounds
from emmy.tools.interpreter.races import Accesses, Accessors, Clock, Race
from emmy.tools.interpreter.scalar import numpy_dtype, to_type
from emmy.tools.interpreter.tasks import Scheduler

CHUNK_THREADS = 1 << 16
"""About how many threads (whole blocks, at least one) run in lockstep at a time."""

CHUNK_SHARED_BYTES = 1 << 27
"""About how many bytes the shared memory of the blocks of one chunk may take."""

SHARED_BYTES_PER_BYTE = 29
"""What a byte of shared memory takes at most: the byte, an int32 count of the copies in
flight to it and its `races.Accesses` (two int64 keys and two int32 op numbers)."""

WARPGROUP_THREADS = kernel.WARPGROUP_THREADS


class _Increment:
    """PTX's `atom.inc.u32` as a ufunc's call and accumulate: the element plus 1, or 0 where
    it was at least the value."""

    def __call__(self, old: np.ndarray, bound: np.ndarray) -> np.ndarray:
        unsigned = old.astype(np.uint32)
        return np.where(unsigned >= bound.astype(np.uint32), 0, unsigned + 1).astype(old.dtype)

    def accumulate(self, serial: np.ndarray) -> np.ndarray:
        running = [serial[0]]
        for bound in serial[1:]:
            running.append(self(np.asarray(running[-1]), np.asarray(bound)))
        return np.array(running, serial.dtype)


ATOMIC_UFUNCS = {"add": np.add, "max": np.maximum, "min": np.minimum, "inc": _Increment()}


def _uninitialised(shape: Sequence[int], element_type: Attribute) -> np.ndarray:
    dtype = numpy_dtype(element_type)
    if dtype.kind == "f":
        return np.full(shape, np.nan, dtype)
    if dtype == np.bool_:
        return np.ones(shape, dtype)
    return np.full(shape, -1, np.int64).astype(dtype)


def _differs(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Elementwise: the values are different (two NaNs are the same)."""
    different = old != new
    if old.dtype.kind == "f":
        different &= ~(np.isnan(old) & np.isnan(new))
    return different


@dataclass(eq=False)
class Banked:
    """Shared memory, one bank per block of a chunk: `data` has a leading bank axis, and
    thread `t` of the chunk accesses bank `bank[t]`, its block."""

    data: np.ndarray
    bank: np.ndarray
    byte_offset: int
    """Where element 0 of a bank lies from the start of its memory, for alignment checks:
    static buffers start on their own 16-byte boundary, dynamic views at their offset."""
    accesses: Accesses
    """The accesses to each element that later ones may race with, indexed like `data`."""
    in_flight: np.ndarray
    """For each element, how many cp.async copies to it are in flight."""
    swizzle: tuple[int, int, int] | None = None
    """`SwizzleAttr.element_permutation` of a swizzled buffer: where its elements lie."""
    delivered_by: np.ndarray | None = None
    """For each element, the mbarrier slot of the `kernel.tma_load` that last wrote it, or -1
    (None until a TMA copy lands in the buffer)."""
    delivered_in: np.ndarray | None = None
    """For each element a TMA copy wrote, the phase of its mbarrier that the copy completes."""
    wgmma_reads: np.ndarray | None = None
    """For each element, how many wgmmas in flight read it (None until a wgmma reads one)."""
    tma_store_reads: np.ndarray | None = None
    """For each element, how many `kernel.tma_store`s in flight read it (None until one
    does)."""
    mapped: bool = False
    """A view of the banks of other blocks of the cluster (`kernel.map_shared_rank`)."""

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape[1:]

    def physical(self, flat: np.ndarray) -> np.ndarray:
        """Where the elements at row-major positions `flat` lie, through the swizzle."""
        if self.swizzle is None:
            return flat
        shift, mask, chunk_shift = self.swizzle
        return flat ^ (((flat >> shift) & mask) << chunk_shift)

    def deliveries(self) -> tuple[np.ndarray, np.ndarray]:
        if self.delivered_by is None:
            self.delivered_by = np.full(self.data.shape, -1, np.int32)
            self.delivered_in = np.zeros(self.data.shape, np.int64)
        return self.delivered_by, self.delivered_in

    def wgmma_readers(self) -> np.ndarray:
        if self.wgmma_reads is None:
            self.wgmma_reads = np.zeros(self.data.shape, np.int32)
        return self.wgmma_reads

    def tma_store_readers(self) -> np.ndarray:
        if self.tma_store_reads is None:
            self.tma_store_reads = np.zeros(self.data.shape, np.int32)
        return self.tma_store_reads

    def read_in_flight(self, target: tuple[np.ndarray, ...]) -> tuple[np.ndarray, str, str] | None:
        """Of the elements `target`, those that an asynchronous read still in flight reads (a
        mask shaped like the first index), the op that reads them and the wait that ends its
        read; None where no such read touches them."""
        for reads, reader, wait in (
            (self.wgmma_reads, "kernel.wgmma", "kernel.wgmma_wait"),
            (self.tma_store_reads, "kernel.tma_store", "kernel.tma_store_wait"),
        ):
            if reads is not None:
                read = np.broadcast_to(reads[target] > 0, target[0].shape)
                if read.any():
                    return read, reader, wait
        return None


@dataclass(eq=False)
class Mbarriers:
    """The mbarriers of one `kernel.mbarrier_alloc`, in every block of a chunk: barrier `i`
    is the chunk's mbarrier slot `first + i` (see `MbarrierStates`)."""

    name: str
    first: int
    count: int


@dataclass(eq=False)
class MbarrierStates:
    """The state of every mbarrier of the blocks of a chunk, in arrays indexed [block, slot]
    (and [thread, slot] for what each thread has seen), as the PTX ISA describes it."""

    blocks: int
    threads: int
    names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        def empty(rows: int) -> np.ndarray:
            return np.zeros((rows, 0), np.int64)

        self.expected = empty(self.blocks)
        """The arrivals that complete a phase, -1 before `kernel.mbarrier_init`."""
        self.pending = empty(self.blocks)
        """The arrivals the current phase still waits for."""
        self.tx = empty(self.blocks)
        """The transaction bytes the current phase still waits for."""
        self.phase = empty(self.blocks)
        """How many phases have completed: the current phase's number."""
        self.observed = empty(self.threads)
        """For each thread, how many phases it has seen complete, by waiting."""

    def add(self, name: str, count: int) -> Mbarriers:
        first = len(self.names)
        self.names += [f"{name}[{i}]" for i in range(count)]

        def grown(array: np.ndarray, value: int) -> np.ndarray:
            return np.concatenate([array, np.full((len(array), count), value, np.int64)], 1)

        self.expected = grown(self.expected, -1)
        self.pending, self.tx = grown(self.pending, 0), grown(self.tx, 0)
        self.phase, self.observed = grown(self.phase, 0), grown(self.observed, 0)
        return Mbarriers(name, first, count)

    def arrive(self, block: int, slot: int, arrivals: int) -> bool:
        """`arrivals` arrivals, completing phases on the way; False when more arrive than
        the current phase, which still waits for transaction bytes, expects."""
        while arrivals:
            taken = min(arrivals, int(self.pending[block, slot]))
            self.pending[block, slot] -= taken
            arrivals -= taken
            if self.pending[block, slot] == 0:
                if self.tx[block, slot] != 0:
                    return arrivals == 0
                self.complete(block, slot)
        return True

    def complete_tx(self, block: int, slot: int, size: int) -> None:
        self.tx[block, slot] -= size
        if self.pending[block, slot] == 0 and self.tx[block, slot] == 0:
            self.complete(block, slot)

    def complete(self, block: int, slot: int) -> None:
        self.phase[block, slot] += 1
        self.pending[block, slot] = self.expected[block, slot]


@dataclass(eq=False)
class WgmmaReads:
    """The shared elements that the wgmmas of warpgroups `warpgroups` (of the chunk) read until
    a `kernel.wgmma_wait` completes their group `group`: `targets[j]` indexes the elements of
    `buffers[j]`, one row per warpgroup."""

    warpgroups: np.ndarray
    group: np.ndarray
    buffers: tuple[Banked, ...]
    targets: tuple[tuple[np.ndarray, ...], ...]

    def part(self, taken: np.ndarray) -> WgmmaReads:
        return WgmmaReads(
            self.warpgroups[taken],
            self.group[taken],
            self.buffers,
            tuple(tuple(i[taken] for i in target) for target in self.targets),
        )

    def count(self, change: int) -> None:
        for buffer, target in zip(self.buffers, self.targets):
            np.add.at(buffer.wgmma_readers(), target, change)


@dataclass(eq=False)
class TmaStoreReads:
    """The shared elements `target` of `buffer` that the `kernel.tma_store` `op` of chunk
    thread `thread` reads until a `kernel.tma_store_wait` of the thread completes its group
    `group`."""

    op: kernel.TmaStoreOp
    buffer: Banked
    target: tuple[np.ndarray, ...]
    thread: int
    group: int


@dataclass(eq=False)
class InFlightCopy:
    """The elements one `kernel.cp_async` puts into shared memory once waited for: for the
    chunk threads `threads` that issued it, their element `target` of `buffer`, its value, and
    the number of the group the copy belongs to in its thread."""

    op: kernel.CpAsyncOp
    buffer: Banked
    target: tuple[np.ndarray, ...]
    values: np.ndarray
    threads: np.ndarray
    group: np.ndarray

    def part(self, taken: np.ndarray) -> InFlightCopy:
        return InFlightCopy(
            self.op,
            self.buffer,
            tuple(i[taken] for i in self.target),
            self.values[taken],
            self.threads[taken],
            self.group[taken],
        )


@dataclass(eq=False)
class Launch:
    """What the chunks of one `kernel.launch` share: the kernel, the keys its threads' accesses
    are recorded under, and the accesses to the global buffers it writes (the only ones that
    can race: a buffer the kernel only reads is not tracked)."""

    function: kernel.FuncOp
    clock: Clock
    names: dict[int, str]
    """The name of the kernel's parameter that each global buffer it writes is (by `id`)."""
    ops: list[Operation] = field(default_factory=list)
    """The ops that made the recorded accesses, by the number the records hold."""
    numbers: dict[Operation, int] = field(default_factory=dict)
    global_accesses: dict[int, Accesses] = field(default_factory=dict)
    arrivals: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)
    """The acq_rel atomics on each element (buffer `id`, flat index), in order: the key of
    the thread that made each, and the first key of its block's phase then (`races`)."""

    def number(self, op: Operation) -> int:
        if op not in self.numbers:
            self.numbers[op] = len(self.ops)
            self.ops.append(op)
        return self.numbers[op]

    def accesses(self, buffer: np.ndarray) -> Accesses | None:
        """The records of a global buffer the kernel writes; None for one it only reads."""
        if id(buffer) not in self.names:
            return None
        if id(buffer) not in self.global_accesses:
            self.global_accesses[id(buffer)] = Accesses.empty(buffer.shape or (1,))
        return self.global_accesses[id(buffer)]


@dataclass(eq=False)
class Chunk:
    """The blocks of a launch that run together, and the state of their threads."""

    launch: Launch
    first_block: int
    blocks: int
    smem: int
    mask: np.ndarray = field(init=False)
    full: bool = True
    """The mask is all threads."""
    shared: dict[Operation, Banked | Mbarriers] = field(default_factory=dict)
    dynamic: np.ndarray = field(init=False)
    dynamic_accesses: Accesses = field(init=False)
    """The accesses to each byte of dynamic shared memory, which its views' records view."""
    dynamic_in_flight: np.ndarray = field(init=False)
    wide: dict[int, np.ndarray] = field(default_factory=dict)
    """Dynamic shared memory as bf16 views hold it (float32 per 2 bytes), see `wide_dynamic`."""
    committed: np.ndarray = field(init=False)
    """For each thread, how many groups of cp.async copies it has closed."""
    in_flight: list[InFlightCopy] = field(default_factory=list)
    mbarrier_states: MbarrierStates | None = None
    wgmma_committed: np.ndarray | None = None
    """For each warpgroup, how many groups of wgmmas it has closed (None before any)."""
    wgmma_in_flight: list[WgmmaReads] = field(default_factory=list)
    tma_store_committed: np.ndarray | None = None
    """For each thread, how many groups of `kernel.tma_store`s it has closed (None before
    any)."""
    tma_store_in_flight: list[TmaStoreReads] = field(default_factory=list)
    barriers: int = 0
    """The most barriers a block of the chunk has passed."""
    mapped_access: Operation | None = None
    """An access to another block's shared memory since the last cluster barrier: the blocks
    of a cluster may not end before a cluster barrier follows it."""

    def __post_init__(self) -> None:
        clock = self.launch.clock
        self.grid, self.block = clock.grid, clock.block
        self.block_size = clock.block_size
        self.threads = self.blocks * self.block_size
        everyone = np.arange(self.threads, dtype=np.int64)
        self.thread = everyone % self.block_size
        """The linear thread id in its block, of each thread of the chunk."""
        self.block_of = everyone // self.block_size
        """The block (within the chunk) of each thread."""
        self.accessors = clock.first(self.first_block, self.blocks)
        """Each thread as the race checks know it now (`races.Accessors`)."""
        self.mask = np.ones(self.threads, np.bool_)
        self.dynamic = np.full((self.blocks, self.smem), 0xFF, np.uint8)
        self.dynamic_accesses = Accesses.empty((self.blocks, self.smem))
        self.dynamic_in_flight = np.zeros((self.blocks, self.smem), np.int32)
        self.committed = np.zeros(self.threads, np.int64)
        self.scheduler = Scheduler(self.saved_mask)

    def saved_mask(self) -> Callable[[], None]:
        """Restores the mask of the active threads to what it is now."""
        mask, full = self.mask, self.full

        def restore() -> None:
            self.mask, self.full = mask, full

        return restore

    def mbarriers(self) -> MbarrierStates:
        if self.mbarrier_states is None:
            self.mbarrier_states = MbarrierStates(self.blocks, self.threads)
        return self.mbarrier_states

    def wgmma_groups(self) -> np.ndarray:
        if self.wgmma_committed is None:
            self.wgmma_committed = np.zeros(self.threads // WARPGROUP_THREADS, np.int64)
        return self.wgmma_committed

    def tma_store_groups(self) -> np.ndarray:
        if self.tma_store_committed is None:
            self.tma_store_committed = np.zeros(self.threads, np.int64)
        return self.tma_store_committed

    def wide_dynamic(self, element_bytes: int) -> np.ndarray:
        """The dynamic shared memory of views whose elements numpy holds wider than they are
        (bf16 as float32): one float32 per `element_bytes` bytes, beside the bytes, so such
        views alias each other but not views of other types."""
        if element_bytes not in self.wide:
            slots = self.smem // element_bytes
            self.wide[element_bytes] = np.full((self.blocks, slots), np.nan, np.float32)
        return self.wide[element_bytes]

    def thread_ids(self, dim: int) -> np.ndarray:
        bx, by, _ = self.block
        return [self.thread % bx, self.thread // bx % by, self.thread // (bx * by)][dim]

    def block_ids(self, dim: int) -> np.ndarray:
        gx, gy, _ = self.grid
        linear = self.first_block + self.block_of
        ids = [linear % gx, linear // gx % gy, linear // (gx * gy)][dim]
        return ids if self.blocks > 1 else np.asarray(ids[0])

    def describe(self, thread: int) -> str:
        """Who chunk thread `thread` is, for error messages."""
        clock = self.launch.clock
        return (
            f"thread {clock.coordinates(int(self.thread[thread]))} of "
            f"{self.describe_block(int(self.block_of[thread]))}"
        )

    def describe_block(self, block: int) -> str:
        return self.launch.clock.name(self.first_block + block)

    def cluster_block(self, threads: np.ndarray, ranks: np.ndarray, doing: str) -> np.ndarray:
        """The block (of the chunk) of rank `ranks[k]` in the cluster of chunk thread
        `threads[k]`; a rank outside the cluster is an error, saying what the thread is
        `doing` with it."""
        cluster = self.launch.function.cluster_blocks
        outside = (ranks < 0) | (ranks >= cluster)
        if outside.any():
            first = int(np.flatnonzero(outside)[0])
            raise InterpretationError(
                f"{self.describe(int(threads[first]))}{doing} rank {int(ranks[first])} of a "
                f"cluster of {cluster} blocks"
            )
        # Chunks hold whole clusters, from a multiple of the cluster's size on.
        blocks = self.block_of[threads]
        return blocks - (self.first_block + blocks) % cluster + ranks

    @contextmanager
    def masked(self, mask: np.ndarray) -> Iterator[None]:
        saved, saved_full = self.mask, self.full
        self.mask, self.full = mask, bool(mask.all())
        try:
            yield
        finally:
            self.mask, self.full = saved, saved_full

    def accessing(self, active: np.ndarray | None) -> Accessors:
        """The active threads (all where `active` is None), as the race checks know them."""
        return self.accessors if active is None else self.accessors.part(active)

    def per_thread(self, value: object) -> np.ndarray:
        return np.broadcast_to(np.asarray(value), (self.threads,))


def _outside_kernel() -> None:
    return None


def _check_step(step: np.ndarray, active: np.ndarray | None) -> None:
    bad = np.asarray(step) <= 0
    if active is not None and bad.ndim:
        bad = bad & active
    if np.any(bad):
        raise InterpretationError(f"scf.for step {int(np.min(step))} is not positive")


@register_impls
class SimtFunctions(InterpreterFunctions):
    """Kernel IR, `scf` and `memref` element accesses, in lockstep across threads (see the
    module docstring)."""

    CHUNK = "chunk"
    """Interpreter data: the `Chunk` running now, None outside kernels."""

    def __init__(self, outside_kernels: InterpreterFunctions):
        self.outside_kernels = outside_kernels
        """Runs `memref.load` / `memref.store` outside kernels (Tile IR, the host), through
        its `@impl` methods `run_memref_load` / `run_memref_store` (which, decorated, return
        an `OpImplResult`)."""
        self.written: dict[kernel.FuncOp, tuple[int, ...]] = {}

    # ---- state ---------------------------------------------------------------------------

    @staticmethod
    def chunk(interpreter: Interpreter) -> Chunk | None:
        return interpreter.get_data(SimtFunctions, SimtFunctions.CHUNK, _outside_kernel)

    @staticmethod
    def in_kernel(interpreter: Interpreter) -> Chunk:
        chunk = SimtFunctions.chunk(interpreter)
        if chunk is None:
            raise InterpretationError("runs only inside a kernel.func that kernel.launch runs")
        return chunk

    def run_region(
        self, interpreter: Interpreter, region: Region, args: PythonValues, mask: np.ndarray | None
    ) -> PythonValues:
        chunk = self.chunk(interpreter)
        if chunk is None or mask is None:
            return interpreter.run_ssacfg_region(region, args, region.parent_op().name)
        with chunk.masked(mask):
            return interpreter.run_ssacfg_region(region, args, region.parent_op().name)

    # ---- launch --------------------------------------------------------------------------

    @impl(kernel.LaunchOp)
    def run_launch(
        self, interpreter: Interpreter, op: kernel.LaunchOp, args: PythonValues
    ) -> PythonValues:
        function = interpreter.get_op_for_symbol(op.kernel)
        if not isinstance(function, kernel.FuncOp):
            raise InterpretationError(f"{op.kernel} is a '{function.name}', not a kernel.func")
        grid, block = launch_shape(op.grid_for(args)), launch_shape(op.block_shape)
        smem = op.smem_bytes
        blocks = prod(grid)
        shared_bytes = SHARED_BYTES_PER_BYTE * (smem + function.static_shared_bytes)
        per_chunk = max(
            1, min(CHUNK_THREADS // prod(block), CHUNK_SHARED_BYTES // max(shared_bytes, 1))
        )
        # The blocks of a cluster run at once: in one chunk.
        cluster = function.cluster_blocks
        per_chunk = max(cluster, per_chunk - per_chunk % cluster)
        arguments = tuple(
            to_type(arg, arg_type) if kernel.is_kernel_scalar(arg_type) else arg
            for arg, arg_type in zip(args, function.argument_types)
        )
        try:
            clock = Clock(grid, block)
        except ValueError as error:
            raise InterpretationError(str(error)) from None
        written = self.written_parameters(function)
        names = {
            id(arguments[i]): f"%{function.body.block.args[i].name_hint or f'arg{i}'}"
            for i in written
        }
        launch = Launch(function, clock, names)
        outer = self.chunk(interpreter)
        try:
            with np.errstate(all="ignore"):
                for first in range(0, blocks, per_chunk):
                    chunk = Chunk(launch, first, min(per_chunk, blocks - first), smem)
                    interpreter.set_data(SimtFunctions, self.CHUNK, chunk)
                    try:
                        interpreter.run_ssacfg_region(
                            function.body, arguments, function.sym_name.data
                        )
                    finally:
                        chunk.scheduler.close()
                    if chunk.tma_store_in_flight:
                        reads = chunk.tma_store_in_flight[0]
                        raise InterpretationError(
                            f"in @{function.sym_name.data}, {chunk.describe(reads.thread)} ends "
                            f"with kernel.tma_store in flight (`{_text(reads.op)}`), which "
                            f"still reads its block's shared memory: a missing "
                            f"kernel.tma_store_wait?"
                        )
                    if chunk.mapped_access is not None:
                        raise InterpretationError(
                            f"in @{function.sym_name.data}, the blocks of a cluster end while "
                            f"another may still access their shared memory "
                            f"(`{_text(chunk.mapped_access)}`): a missing "
                            f"kernel.cluster_barrier before the end?"
                        )
        finally:
            interpreter.set_data(SimtFunctions, self.CHUNK, outer)
        return ()

    def written_parameters(self, function: kernel.FuncOp) -> tuple[int, ...]:
        """The positions of the buffers that `function` writes (worked out once a kernel)."""
        if function not in self.written:
            stored = written_values(function.body)
            self.written[function] = tuple(
                i for i, arg in enumerate(function.body.block.args) if arg in stored
            )
        return self.written[function]

    @impl(kernel.ThreadIdOp)
    def run_thread_id(
        self, interpreter: Interpreter, op: kernel.ThreadIdOp, args: PythonValues
    ) -> PythonValues:
        return (self.in_kernel(interpreter).thread_ids(_dimension(op)),)

    @impl(kernel.BlockIdOp)
    def run_block_id(
        self, interpreter: Interpreter, op: kernel.BlockIdOp, args: PythonValues
    ) -> PythonValues:
        return (self.in_kernel(interpreter).block_ids(_dimension(op)),)

    @impl(kernel.BlockDimOp)
    def run_block_dim(
        self, interpreter: Interpreter, op: kernel.BlockDimOp, args: PythonValues
    ) -> PythonValues:
        return (np.asarray(self.in_kernel(interpreter).block[_dimension(op)], np.int64),)

    @impl(kernel.GridDimOp)
    def run_grid_dim(
        self, interpreter: Interpreter, op: kernel.GridDimOp, args: PythonValues
    ) -> PythonValues:
        return (np.asarray(self.in_kernel(interpreter).grid[_dimension(op)], np.int64),)

    # ---- structured control flow ---------------------------------------------------------

    @impl(scf.IfOp)
    def run_if(self, interpreter: Interpreter, op: scf.IfOp, args: PythonValues) -> PythonValues:
        (cond,) = args
        cond = np.asarray(cond)
        chunk = self.chunk(interpreter)
        if cond.ndim == 0 or chunk is None:
            if cond.ndim != 0:
                raise InterpretationError("a per-element scf.if condition outside a kernel")
            region = op.true_region if cond else op.false_region
            return interpreter.run_ssacfg_region(region, (), "scf.if")
        taken = chunk.mask & cond
        not_taken = chunk.mask & ~cond
        then_results = else_results = None
        runs_else = not_taken.any() and bool(op.false_region.blocks)
        if taken.any():
            # The else-region runs after the then-region, or beside it if that one blocks.
            deferred = None
            if runs_else:
                deferred = chunk.scheduler.defer(
                    interpreter,
                    lambda inner: self.run_region(inner, op.false_region, (), not_taken),
                )
            then_results = self.run_region(interpreter, op.true_region, (), taken)
            if deferred is not None:
                else_results = chunk.scheduler.join(deferred, interpreter)
        elif runs_else:
            else_results = self.run_region(interpreter, op.false_region, (), not_taken)
        if then_results is None:
            return else_results or ()
        if else_results is None:
            return then_results
        return tuple(
            np.where(cond, then_value, else_value)
            for then_value, else_value in zip(then_results, else_results)
        )

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues) -> PythonValues:
        lower, upper, step, *carried = (np.asarray(value) for value in args)
        iv_type = op.lb.type
        chunk = self.chunk(interpreter)
        if lower.ndim == upper.ndim == step.ndim == 0:
            _check_step(step, None)
            for i in range(int(lower), int(upper), int(step)):
                carried = interpreter.run_ssacfg_region(
                    op.body, (to_type(np.asarray(i), iv_type), *carried), "scf.for"
                )
            return tuple(carried)
        if chunk is None:
            raise InterpretationError("per-element scf.for bounds outside a kernel")
        induction = chunk.per_thread(lower)
        active = chunk.mask & (induction < upper)
        _check_step(step, active)
        while active.any():
            results = self.run_region(interpreter, op.body, (induction, *carried), active)
            if active.all():
                carried = list(results)
            else:
                carried = [np.where(active, new, old) for new, old in zip(results, carried)]
            induction = to_type(induction + step, iv_type)
            active = active & (induction < upper)
        return tuple(carried)

    @impl_terminator(scf.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: scf.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    # ---- synchronisation and warp shuffles ---------------------------------------------

    @impl(kernel.BarrierOp)
    def run_barrier(
        self, interpreter: Interpreter, op: kernel.BarrierOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        self.check_reached(chunk, 1, "barrier", "threads")
        self.next_phase(chunk)
        return ()

    @impl(kernel.ClusterBarrierOp)
    def run_cluster_barrier(
        self, interpreter: Interpreter, op: kernel.ClusterBarrierOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        cluster = chunk.launch.function.cluster_blocks
        self.check_reached(chunk, cluster, "cluster barrier", "threads of its cluster")
        self.next_phase(chunk)
        # What the threads of a cluster did to their shared memory before it is ordered before
        # what any of them does after: the records of the blocks that pass it are moot.
        if chunk.full:
            passing = np.arange(chunk.blocks)
        else:
            passing = np.flatnonzero(chunk.mask.reshape(chunk.blocks, -1).any(axis=1))
        for buffer in chunk.shared.values():
            if isinstance(buffer, Banked):
                buffer.accesses.forget((passing,))
        chunk.dynamic_accesses.forget((passing,))
        chunk.mapped_access = None
        return ()

    @staticmethod
    def check_reached(chunk: Chunk, blocks: int, what: str, whose: str) -> None:
        """Every thread of each group of `blocks` consecutive blocks of the chunk that has any
        thread here is here."""
        if chunk.full:
            return
        reached = chunk.mask.reshape(chunk.blocks // blocks, blocks * chunk.block_size)
        some, every = reached.any(axis=1), reached.all(axis=1)
        if (some & ~every).any():
            group = int(np.flatnonzero(some & ~every)[0])
            absent = int(np.flatnonzero(~reached[group])[0]) + group * reached.shape[1]
            block = absent // chunk.block_size
            raise InterpretationError(
                f"{what} under divergent control flow: in {chunk.describe_block(block)}, "
                f"{int(reached[group].sum())} of {reached.shape[1]} {whose} reach it "
                f"({chunk.describe(absent)} does not)"
            )

    @staticmethod
    def next_phase(chunk: Chunk) -> None:
        """The blocks that reach a barrier enter a new phase: what their threads did before is
        ordered before what they do next."""
        clock = chunk.launch.clock
        chunk.barriers += 1
        if chunk.barriers >= clock.phases:
            raise InterpretationError(
                f"{chunk.barriers} barriers in a block of a grid of {clock.blocks} blocks: more "
                f"than races can be told in"
            )
        passing = slice(None) if chunk.full else chunk.mask
        chunk.accessors.keys[passing] += clock.period
        chunk.accessors.phases[passing] += clock.period

    @impl(kernel.ShuffleOp)
    def run_shuffle(
        self, interpreter: Interpreter, op: kernel.ShuffleOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        value, offset = (np.asarray(arg) for arg in args)
        warp_size = target_of(op).warp_size
        lane = chunk.thread % warp_size
        if not chunk.full:
            # Warps never straddle blocks: pad each block to whole warps.
            warps = -(-chunk.block_size // warp_size)
            padded = np.zeros((chunk.blocks, warps * warp_size), np.int8)
            padded[:, chunk.block_size :] = -1
            padded[:, : chunk.block_size] = chunk.mask.reshape(chunk.blocks, -1)
            per_warp = padded.reshape(chunk.blocks, warps, warp_size)
            existing = per_warp >= 0
            active = per_warp > 0
            partial = active.any(axis=2) & (active != existing).any(axis=2)
            if partial.any():
                block, warp = (int(i[0]) for i in np.nonzero(partial))
                raise InterpretationError(
                    f"shuffle under divergent control flow: only "
                    f"{int(active[block, warp].sum())} of the {int(existing[block, warp].sum())} "
                    f"lanes of warp {warp} of {chunk.describe_block(block)} take part"
                )
        mode = op.mode.data
        # PTX reads the offset as an unsigned 32-bit number.
        offset = offset.astype(np.int64) & 0xFFFFFFFF
        if mode == "xor":
            source = lane ^ offset
        elif mode == "down":
            source = lane + offset
        elif mode == "up":
            source = lane - offset
        else:
            source = offset & (warp_size - 1)
        source = np.where((source >= 0) & (source < warp_size), source, lane)
        if value.ndim == 0:
            return (value,)
        source_thread = chunk.thread - lane + source
        missing = source_thread >= chunk.block_size
        if not chunk.full:
            missing &= chunk.mask
        if missing.any():
            reader = int(np.flatnonzero(missing)[0])
            lane_read = int(np.broadcast_to(source, missing.shape)[reader])
            raise InterpretationError(
                f"{chunk.describe(reader)} reads lane {lane_read} of its warp, beyond the last "
                f"thread of the block"
            )
        source_thread = np.minimum(source_thread, chunk.block_size - 1)
        return (chunk.per_thread(value)[chunk.block_of * chunk.block_size + source_thread],)

    # ---- memory --------------------------------------------------------------------------

    @impl(kernel.SharedAllocOp)
    def run_shared_alloc(
        self, interpreter: Interpreter, op: kernel.SharedAllocOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        if op not in chunk.shared:
            memref_type = op.result.type
            element_type = memref_type.get_element_type()
            shape = (chunk.blocks, *memref_type.get_shape())
            swizzle = None
            if op.layout is not None:
                size = element_bytes(element_type)
                swizzle = op.layout.element_permutation(size)
            chunk.shared[op] = Banked(
                _uninitialised(shape, element_type),
                chunk.block_of,
                0,
                Accesses.empty(shape),
                np.zeros(shape, np.int32),
                swizzle,
            )
        return (chunk.shared[op],)

    @impl(kernel.DynamicSharedOp)
    def run_dynamic_shared(
        self, interpreter: Interpreter, op: kernel.DynamicSharedOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        if op not in chunk.shared:
            memref_type = op.result.type
            element_type = memref_type.get_element_type()
            dtype = numpy_dtype(element_type)
            size = kernel.element_bytes(element_type)
            shape = tuple(memref_type.get_shape())
            offset = op.byte_offset
            end = offset + prod(shape) * size
            if end > chunk.smem:
                raise InterpretationError(
                    f"the view needs bytes [{offset}, {end}) of dynamic shared memory, but the "
                    f"launch gives {chunk.smem} bytes"
                )
            if offset % size:
                raise InterpretationError(
                    f"byte offset {offset} is not aligned to the {size}-byte elements"
                )
            if dtype.itemsize == size:
                data = chunk.dynamic[:, offset:end].view(dtype)
            else:
                data = chunk.wide_dynamic(size)[:, offset // size : end // size]
            data = data.reshape(chunk.blocks, *shape)

            def element_starts(per_byte: np.ndarray) -> np.ndarray:
                view = per_byte[:, offset:end:size].reshape(chunk.blocks, *shape)
                assert np.shares_memory(view, per_byte)
                return view

            swizzle = None
            if op.layout is not None:
                swizzle = op.layout.element_permutation(size)
            chunk.shared[op] = Banked(
                data,
                chunk.block_of,
                offset,
                chunk.dynamic_accesses.view(element_starts),
                element_starts(chunk.dynamic_in_flight),
                swizzle,
            )
        return (chunk.shared[op],)

    @impl(kernel.MapSharedRankOp)
    def run_map_shared_rank(
        self, interpreter: Interpreter, op: kernel.MapSharedRankOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        buffer, rank = args
        threads = np.flatnonzero(chunk.mask)
        # Inactive threads' banks are never used: their own blocks keep them in range.
        bank = chunk.block_of.copy()
        rank = chunk.per_thread(np.asarray(rank, np.int64))[threads]
        bank[threads] = chunk.cluster_block(threads, rank, " maps")
        return (replace(buffer, bank=bank, mapped=True),)

    @impl(memref.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues
    ) -> PythonValues:
        if self.chunk(interpreter) is None:
            return self.outside_kernels.run_memref_load(interpreter, op, args).values
        buffer, *indices = args
        return (self.load(interpreter, op, buffer, indices, 0),)

    @impl(memref.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: memref.StoreOp, args: PythonValues
    ) -> PythonValues:
        if self.chunk(interpreter) is None:
            return self.outside_kernels.run_memref_store(interpreter, op, args).values
        value, buffer, *indices = args
        self.store(interpreter, op, buffer, indices, [value], op.memref.type.get_element_type())
        return ()

    @impl(kernel.VectorLoadOp)
    def run_vector_load(
        self, interpreter: Interpreter, op: kernel.VectorLoadOp, args: PythonValues
    ) -> PythonValues:
        buffer, *indices = args
        chunk = self.in_kernel(interpreter)
        width = op.width
        self.check_aligned(interpreter, buffer, indices, width, op.memref.type.get_element_type())
        lanes = [
            chunk.per_thread(self.load(interpreter, op, buffer, indices, k)) for k in range(width)
        ]
        return (np.stack(lanes),)

    @impl(kernel.VectorStoreOp)
    def run_vector_store(
        self, interpreter: Interpreter, op: kernel.VectorStoreOp, args: PythonValues
    ) -> PythonValues:
        values, buffer, *indices = args
        element_type = op.memref.type.get_element_type()
        self.check_aligned(interpreter, buffer, indices, op.width, element_type)
        self.store(
            interpreter, op, buffer, indices, list(values), op.memref.type.get_element_type()
        )
        return ()

    @impl(vector.BroadcastOp)
    def run_vector_broadcast(
        self, interpreter: Interpreter, op: vector.BroadcastOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        if isinstance(op.source.type, VectorType):
            raise InterpretationError("vector.broadcast of a vector: only scalars are broadcast")
        lanes = op.vector.type.get_shape()[0]
        lane = chunk.per_thread(args[0])
        return (np.broadcast_to(lane, (lanes, chunk.threads)).copy(),)

    @impl(vector.ExtractOp)
    def run_vector_extract(
        self, interpreter: Interpreter, op: vector.ExtractOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        value, *dynamic = args
        position = self.lane_position(chunk, op, op.result.type, value, dynamic)
        return (value[position, np.arange(chunk.threads)],)

    @impl(vector.InsertOp)
    def run_vector_insert(
        self, interpreter: Interpreter, op: vector.InsertOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        source, destination, *dynamic = args
        position = self.lane_position(chunk, op, op.source.type, destination, dynamic)
        result = destination.copy()
        result[position, np.arange(chunk.threads)] = chunk.per_thread(source)
        return (result,)

    @staticmethod
    def lane_position(
        chunk: Chunk,
        op: vector.ExtractOp | vector.InsertOp,
        lane_type: Attribute,
        value: np.ndarray,
        dynamic: Sequence[object],
    ) -> np.ndarray:
        """The lane each thread reads or writes; an error for a lane outside the vector."""
        if isinstance(lane_type, VectorType):
            raise InterpretationError(f"'{op.name}' of a sub-vector: it moves single lanes")
        (position,) = op.get_mixed_position()
        lanes = value.shape[0]
        position = chunk.per_thread(dynamic[0] if not isinstance(position, int) else position)
        outside = (position < 0) | (position >= lanes)
        if not chunk.full:
            outside &= chunk.mask
        if outside.any():
            thread = int(np.flatnonzero(outside)[0])
            raise InterpretationError(
                f"{chunk.describe(thread)}: lane {int(position[thread])} of a {lanes}-lane vector"
            )
        return np.clip(position, 0, lanes - 1)

    @impl(kernel.CpAsyncOp)
    def run_cp_async(
        self, interpreter: Interpreter, op: kernel.CpAsyncOp, args: PythonValues
    ) -> PythonValues:
        # The operands are the destination and its indices, the source and its indices, and
        # the bytes to read if given.
        chunk = self.in_kernel(interpreter)
        destination_type = op.destination.type
        destination_rank = destination_type.get_num_dims()
        destination, *rest = args
        read = chunk.per_thread(op.elements)
        if op.source_bytes is not None:
            *rest, source_bytes = rest
            read = self.elements_read(chunk, op, source_bytes)
        destination_indices = rest[:destination_rank]
        source, *source_indices = rest[destination_rank:]
        width = op.elements
        element_type = destination_type.get_element_type()
        self.check_aligned(interpreter, source, source_indices, width, element_type)
        self.check_aligned(interpreter, destination, destination_indices, width, element_type)
        values = []
        for k in range(width):
            with chunk.masked(chunk.mask & (read > k)):
                values.append(
                    chunk.per_thread(self.load(interpreter, op, source, source_indices, k))
                )
        for k, value in enumerate(values):
            located = self.locate(chunk, destination, destination_indices, k)
            if located is None:
                return ()
            _, target, active = located
            threads = np.arange(chunk.threads) if active is None else np.flatnonzero(active)
            self.check_not_in_flight(chunk, destination, target, active, "starts a cp.async to")
            landing = to_type(value, element_type)[threads]
            # The copy may land at any time from now on: as if stored now.
            self.check_write(chunk, op, destination, target, active, landing)
            np.add.at(destination.in_flight, target, 1)
            copy = InFlightCopy(op, destination, target, landing, threads, chunk.committed[threads])
            chunk.in_flight.append(copy)
        return ()

    @staticmethod
    def elements_read(chunk: Chunk, op: kernel.CpAsyncOp, source_bytes: object) -> np.ndarray:
        """How many elements each thread's copy reads from its source (the rest are zeros)."""
        size = kernel.element_bytes(op.source.type.get_element_type())
        source_bytes = chunk.per_thread(np.asarray(source_bytes, np.int64))
        bad = (source_bytes < 0) | (source_bytes > op.size) | (source_bytes % size != 0)
        bad &= chunk.mask
        if bad.any():
            thread = int(np.flatnonzero(bad)[0])
            raise InterpretationError(
                f"{chunk.describe(thread)}: a cp_async of {op.size} bytes reads 0 to {op.size} "
                f"bytes of whole elements, got src_bytes {int(source_bytes[thread])}"
            )
        return source_bytes // size

    @impl(kernel.CpAsyncCommitOp)
    def run_cp_async_commit(
        self, interpreter: Interpreter, op: kernel.CpAsyncCommitOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        chunk.committed[chunk.mask] += 1
        return ()

    @impl(kernel.CpAsyncWaitOp)
    def run_cp_async_wait(
        self, interpreter: Interpreter, op: kernel.CpAsyncWaitOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        still_in_flight = []
        for copy in chunk.in_flight:
            done = chunk.mask[copy.threads] & (
                copy.group < chunk.committed[copy.threads] - op.pending_groups
            )
            if done.any():
                self.land(chunk, copy.part(done))
            if not done.all():
                still_in_flight.append(copy.part(~done))
        chunk.in_flight = still_in_flight
        return ()

    def land(self, chunk: Chunk, copy: InFlightCopy) -> None:
        """A completed copy's data arrives in shared memory, written by its threads."""
        buffer, target = copy.buffer, copy.target
        np.subtract.at(buffer.in_flight, target, 1)
        issued = np.zeros(chunk.threads, np.bool_)
        issued[copy.threads] = True
        self.check_write(chunk, copy.op, buffer, target, issued, copy.values)
        buffer.data[target] = copy.values
        self.check_same_element(chunk, copy.op, buffer, target, issued, copy.values)
        races.record_write(
            buffer.accesses,
            target,
            chunk.accessors.part(copy.threads),
            chunk.launch.number(copy.op),
        )

    @impl(kernel.AtomicOp)
    def run_atomic(
        self, interpreter: Interpreter, op: kernel.AtomicOp, args: PythonValues
    ) -> PythonValues:
        value, buffer, *indices = args
        chunk = self.in_kernel(interpreter)
        element_type = op.memref.type.get_element_type()
        located = self.locate(chunk, buffer, indices, 0)
        if located is None:
            return (np.zeros(chunk.threads, numpy_dtype(element_type)),)
        data, target, active = located
        self.check_atomic(chunk, op, buffer, target, active)
        combine = ATOMIC_UFUNCS[op.kind.data]
        values = to_type(chunk.per_thread(value), element_type)
        values = values[active] if active is not None else values
        if data.ndim == 0:
            data, target = data.reshape(1), (np.zeros((), np.int64),)
        target = tuple(np.broadcast_to(i, values.shape) for i in target)
        keys = np.ravel_multi_index(target, data.shape)
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        counts = np.diff(np.r_[starts, len(keys)])
        old = np.empty_like(values)
        # Elements only one thread updates, all at once.
        alone = order[starts[counts == 1]]
        alone_target = tuple(i[alone] for i in target)
        old[alone] = data[alone_target]
        data[alone_target] = to_type(combine(old[alone], values[alone]), element_type)
        # Elements several threads update: serially, in thread order.
        for start, count in zip(starts[counts > 1], counts[counts > 1]):
            threads = order[start : start + count]
            element = tuple(i[threads[0]] for i in target)
            serial = np.r_[data[element], values[threads]].astype(values.dtype)
            running = combine.accumulate(serial)
            old[threads] = running[:-1]
            data[element] = to_type(running[-1], element_type)
        if op.acq_rel is not None:
            self.acquire(chunk, buffer, keys, active)
        if active is None:
            return (old,)
        result = np.zeros(chunk.threads, old.dtype)
        result[active] = old
        return (result,)

    @staticmethod
    def acquire(
        chunk: Chunk, buffer: np.ndarray, elements: np.ndarray, active: np.ndarray | None
    ) -> None:
        """The acq_rel atomics of the active threads on the flat `elements` of `buffer` (in
        thread order, as they ran): each releases what its thread did and what its block did
        before its phase (the barrier before it), and acquires what the atomics on the element
        before it released, whose race records are therefore dropped, in every global
        buffer."""
        who = chunk.accessing(active)
        acquired: dict[int, tuple[int, int]] = {}
        for element, key, phase in zip(elements.tolist(), who.keys, who.phases):
            released = chunk.launch.arrivals.setdefault((id(buffer), element), [])
            acquired.update((k, (k, p)) for k, p in released)
            released.append((int(key), int(phase)))
        if acquired:
            releases = list(acquired.values())
            for accesses in chunk.launch.global_accesses.values():
                races.forget_released(chunk.launch.clock, accesses, releases)

    # ---- warp-level tensor cores ---------------------------------------------------------

    @staticmethod
    def check_converged(chunk: Chunk, op: Operation, size: int, unit: str) -> None:
        """A `.sync.aligned` instruction of whole `unit`s (warps or warpgroups, runs of `size`
        threads): every thread of each unit that executes `op` executes it, converged."""
        if chunk.block_size % size:
            raise InterpretationError(
                f"'{op.name}' runs on whole {unit}s, but a block of {chunk.block_size} threads "
                f"ends in a partial {unit}"
            )
        if chunk.full:
            return
        per_unit = chunk.mask.reshape(-1, size)
        partial = per_unit.any(axis=1) & ~per_unit.all(axis=1)
        if partial.any():
            first = int(np.flatnonzero(partial)[0])
            units_per_block = chunk.block_size // size
            member = "lane" if unit == "warp" else "thread"
            raise InterpretationError(
                f"'{op.name}' under divergent control flow: only {int(per_unit[first].sum())} "
                f"of the {size} {member}s of {unit} {first % units_per_block} of "
                f"{chunk.describe_block(first // units_per_block)} execute it, but every "
                f"{member} of the {unit} must, converged"
            )

    @impl(kernel.LdmatrixOp)
    def run_ldmatrix(
        self, interpreter: Interpreter, op: kernel.LdmatrixOp, args: PythonValues
    ) -> PythonValues:
        buffer, *indices = args
        chunk = self.in_kernel(interpreter)
        warp_size = target_of(op).warp_size
        self.check_converged(chunk, op, warp_size, "warp")
        lane = chunk.thread % warp_size
        row, each = op.row_elements, op.lane_elements
        # Lanes 8i to 8i + 7 address the rows of matrix i; the others' indices are not read.
        with chunk.masked(chunk.mask & (lane < kernel.LDMATRIX_ROWS * op.matrices)):
            element_type = op.memref.type.get_element_type()
            self.check_aligned(interpreter, buffer, indices, row, element_type)
            rows = np.stack(
                [
                    chunk.per_thread(self.load(interpreter, op, buffer, indices, k))
                    for k in range(row)
                ]
            )
        first_lane = np.arange(chunk.threads) - lane
        group, in_group = lane // 4, lane % 4
        fragment = []
        for matrix in range(op.matrices):
            for part in range(each):
                if op.transposed:
                    source = first_lane + kernel.LDMATRIX_ROWS * matrix + 2 * in_group + part
                    column = group
                else:
                    source = first_lane + kernel.LDMATRIX_ROWS * matrix + group
                    column = each * in_group + part
                fragment.append(rows[column, source])
        return (np.stack(fragment),)

    @impl(kernel.MmaSyncOp)
    def run_mma_sync(
        self, interpreter: Interpreter, op: kernel.MmaSyncOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        warp_size = target_of(op).warp_size
        self.check_converged(chunk, op, warp_size, "warp")
        m, n, k = op.mnk
        warps = chunk.threads // warp_size
        a_layout, b_layout, c_layout = mma_fragment_layouts(op)

        def gather(fragment: np.ndarray, layout: FragmentLayout, shape: tuple[int, int]):
            """The matrix of each warp, from its lanes' fragments."""
            matrices = np.zeros((warps, *shape))
            lanes = fragment.reshape(len(fragment), warps, warp_size).transpose(1, 0, 2)
            matrices[(slice(None), *layout)] = lanes
            return matrices

        a, b, c = (np.asarray(value, np.float64) for value in args)
        if op.tf32 is not None:
            a, b = round_to_tf32(a), round_to_tf32(b)
        # Products of f16, bf16 and tf32 are exact in float64, and so nearly are the sums.
        d = gather(a, a_layout, (m, k)) @ gather(b, b_layout, (k, n)) + gather(c, c_layout, (m, n))
        lanes = d[(slice(None), *c_layout)].transpose(1, 0, 2).reshape(len(c), chunk.threads)
        return (lanes.astype(np.float32),)

    # ---- Hopper: mbarriers, TMA, warpgroup tensor cores -----------------------------------

    @impl(kernel.MbarrierAllocOp)
    def run_mbarrier_alloc(
        self, interpreter: Interpreter, op: kernel.MbarrierAllocOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        if op not in chunk.shared:
            name = f"%{op.result.name_hint or 'mbarriers'}"
            chunk.shared[op] = chunk.mbarriers().add(name, op.result.type.barriers)
        return (chunk.shared[op],)

    @staticmethod
    def addressed_mbarriers(
        chunk: Chunk,
        op: Operation,
        barriers: Mbarriers,
        index: object,
        initialised: bool = True,
        rank: object = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The active threads, the blocks and the slots of the mbarriers they address
        (`barriers[index]` of their own block or, with `rank`, of the block of that rank of
        their cluster; it must exist and, unless `initialised` is False, have been
        initialised); None when no thread is active."""
        threads = np.flatnonzero(chunk.mask)
        if not threads.size:
            return None
        index = chunk.per_thread(np.asarray(index))[threads]
        outside = (index < 0) | (index >= barriers.count)
        if outside.any():
            first = int(np.flatnonzero(outside)[0])
            raise InterpretationError(
                f"{chunk.describe(int(threads[first]))}: '{op.name}' addresses mbarrier "
                f"{int(index[first])} of {barriers.name}, which holds {barriers.count}"
            )
        blocks, slots = chunk.block_of[threads], barriers.first + index
        if rank is not None:
            ranks = chunk.per_thread(np.asarray(rank, np.int64))[threads]
            blocks = chunk.cluster_block(threads, ranks, f": '{op.name}' addresses the block of")
        if initialised:
            SimtFunctions.check_initialised(chunk, op, threads, blocks, slots)
        return threads, blocks, slots

    @staticmethod
    def check_initialised(
        chunk: Chunk, op: Operation, threads: np.ndarray, blocks: np.ndarray, slots: np.ndarray
    ) -> None:
        """The mbarrier slot `slots[k]` of block `blocks[k]`, which chunk thread `threads[k]`
        addresses, has been initialised."""
        states = chunk.mbarriers()
        uninitialised = states.expected[blocks, slots] < 0
        if uninitialised.any():
            first = int(np.flatnonzero(uninitialised)[0])
            raise InterpretationError(
                f"{chunk.describe(int(threads[first]))}: '{op.name}' on mbarrier "
                f"{states.names[slots[first]]} of {chunk.describe_block(int(blocks[first]))}, "
                f"which no kernel.mbarrier_init has initialised"
            )

    @impl(kernel.MbarrierInitOp)
    def run_mbarrier_init(
        self, interpreter: Interpreter, op: kernel.MbarrierInitOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        addressed = self.addressed_mbarriers(chunk, op, *args, initialised=False)
        if addressed is not None:
            _, blocks, slots = addressed
            states = chunk.mbarriers()
            states.expected[blocks, slots] = states.pending[blocks, slots] = op.arrival_count
            states.tx[blocks, slots] = states.phase[blocks, slots] = 0
            # The block's threads have seen none of the new phases.
            observed = states.observed.reshape(chunk.blocks, chunk.block_size, -1)
            observed[blocks, :, slots] = 0
        return ()

    @impl(kernel.MbarrierArriveOp)
    def run_mbarrier_arrive(
        self, interpreter: Interpreter, op: kernel.MbarrierArriveOp, args: PythonValues
    ) -> PythonValues:
        # The op's definition puts the optional rank first.
        *rank, barriers, index = args
        self.arrive(self.in_kernel(interpreter), op, barriers, index, 0, *rank)
        return ()

    @impl(kernel.MbarrierArriveExpectTxOp)
    def run_mbarrier_arrive_expect_tx(
        self, interpreter: Interpreter, op: kernel.MbarrierArriveExpectTxOp, args: PythonValues
    ) -> PythonValues:
        self.arrive(self.in_kernel(interpreter), op, *args, op.tx_bytes)
        return ()

    def arrive(
        self,
        chunk: Chunk,
        op: Operation,
        barriers: Mbarriers,
        index: object,
        tx_bytes: int,
        rank: object = None,
    ) -> None:
        """Each active thread's arrival on the mbarrier it addresses (in its own block or, with
        `rank`, in the block of that rank of its cluster), after raising the transaction bytes
        of its phase by `tx_bytes`; the threads arriving at one mbarrier arrive in thread
        order."""
        addressed = self.addressed_mbarriers(chunk, op, barriers, index, rank=rank)
        if addressed is None:
            return
        threads, blocks, slots = addressed
        states = chunk.mbarriers()
        keys, firsts, counts = np.unique(
            blocks * len(states.names) + slots, return_index=True, return_counts=True
        )
        for key, first, arrivals in zip(keys, firsts, counts):
            block, slot = divmod(int(key), len(states.names))
            states.tx[block, slot] += tx_bytes * arrivals
            if not states.arrive(block, slot, int(arrivals)):
                raise InterpretationError(
                    f"{chunk.describe(int(threads[first]))}: '{op.name}' by {arrivals} threads "
                    f"on mbarrier {states.names[slot]} of {chunk.describe_block(block)}, whose "
                    f"phase {int(states.phase[block, slot])} expects "
                    f"{int(states.expected[block, slot])} arrivals: more than that arrive"
                )

    @impl(kernel.MbarrierWaitOp)
    def run_mbarrier_wait(
        self, interpreter: Interpreter, op: kernel.MbarrierWaitOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        # By name: the op's definition puts the parity first.
        barriers, index, parity = interpreter.get_values((op.barriers, op.index, op.parity))
        addressed = self.addressed_mbarriers(chunk, op, barriers, index)
        if addressed is None:
            return ()
        threads, blocks, slots = addressed
        parity = chunk.per_thread(np.asarray(parity))[threads]
        if ((parity != 0) & (parity != 1)).any():
            first = int(np.flatnonzero((parity != 0) & (parity != 1))[0])
            raise InterpretationError(
                f"{chunk.describe(int(threads[first]))}: an mbarrier phase's parity is 0 or 1, "
                f"got {int(parity[first])}"
            )
        states = chunk.mbarriers()

        def waiting() -> np.ndarray:
            # try_wait.parity(p) succeeds once the current phase's parity is not p.
            return states.phase[blocks, slots] % 2 == parity

        def describe() -> str:
            still = np.flatnonzero(waiting())
            first = int(still[0])
            block, slot = int(blocks[first]), int(slots[first])
            others = f" and {len(still) - 1} other threads" if len(still) > 1 else ""
            return (
                f"{chunk.describe(int(threads[first]))}{others} wait in '{op.name}' for the "
                f"phase of parity {int(parity[first])} of mbarrier {states.names[slot]}, whose "
                f"phase {int(states.phase[block, slot])} still expects "
                f"{int(states.pending[block, slot])} of {int(states.expected[block, slot])} "
                f"arrivals and {int(states.tx[block, slot])} transaction bytes"
            )

        chunk.scheduler.block_until(lambda: not waiting().any(), describe)
        states.observed[threads, slots] = np.maximum(
            states.observed[threads, slots], states.phase[blocks, slots]
        )
        return ()

    @impl(kernel.TmaLoadOp)
    def run_tma_load(
        self, interpreter: Interpreter, op: kernel.TmaLoadOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        rank, destination_rank = len(op.coordinates), len(op.destination_indices)
        tensor, *rest = args
        coordinates, (destination, *rest) = rest[:rank], rest[rank:]
        destination_indices, rest = rest[:destination_rank], rest[destination_rank:]
        barriers, index, *multicast = rest
        addressed = self.addressed_mbarriers(chunk, op, barriers, index, not multicast)
        if addressed is None:
            return ()
        threads, blocks, slots = addressed
        # Pairs of an issuing thread (its position in `threads`) and a block the box lands in.
        issuers = np.arange(len(threads))
        if multicast:
            masks = chunk.per_thread(np.asarray(multicast[0], np.int64))[threads]
            bits = np.arange(64, dtype=np.uint64)
            issuers, ranks = np.nonzero((masks.astype(np.uint64)[:, None] >> bits) & 1)
            doing = f": '{op.name}' multicasts to the block of"
            blocks = chunk.cluster_block(threads[issuers], ranks, doing)
            self.check_initialised(chunk, op, threads[issuers], blocks, slots[issuers])
        states = chunk.mbarriers()
        box = op.tensor_map.box_shape
        size = element_bytes(op.tensor_map.tensor.get_element_type())
        corners = [chunk.per_thread(np.asarray(c))[threads] for c in coordinates]
        starts = [chunk.per_thread(np.asarray(i))[threads] for i in destination_indices]
        for n, (thread, slot) in enumerate(zip(threads, slots)):
            who = f"{chunk.describe(int(thread))}: '{op.name}'"
            start = [int(i[n]) for i in starts]
            place = self.tma_box(op, who, destination, start, "lands at", "destination")
            values = _read_box(tensor, [int(c[n]) for c in corners], box)
            for block in blocks[issuers == n]:
                target = (np.full(values.size, block), *place)
                self.check_tma_landing(chunk, who, destination, target, states, int(block))
                destination.data[target] = values
                # The async proxy wrote them: the mbarrier, not kernel.barrier, orders them.
                destination.accesses.forget(target)
                delivered_by, delivered_in = destination.deliveries()
                delivered_by[target], delivered_in[target] = slot, states.phase[block, slot]
                states.complete_tx(int(block), int(slot), values.size * size)
        return ()

    @staticmethod
    def tma_box(
        op: kernel.TmaLoadOp | kernel.TmaStoreOp,
        who: str,
        buffer: Banked,
        start: list[int],
        at: str,
        role: str,
    ) -> tuple[np.ndarray, ...]:
        """Where in `buffer` (a TMA copy's `role`) the box of `op`'s map lies as consecutive
        row-major elements from element `start` on, through its swizzle: the addressed element
        inside the buffer, on the swizzle's pattern (128 bytes without one), the box not past
        its end; `who` names the thread and `at` says what the copy does there."""
        shape, layout = buffer.shape, op.tensor_map.layout
        alignment = layout.alignment if layout is not None else kernel.TMA_DESTINATION_ALIGNMENT
        size = element_bytes(op.tensor_map.tensor.get_element_type())
        count = prod(op.tensor_map.box_shape)
        if any(not 0 <= i < extent for i, extent in zip(start, shape)):
            raise InterpretationError(
                f"{who} {at} element {start}, outside its {role} of shape {list(shape)}"
            )
        first = int(np.ravel_multi_index(start, shape))
        if (buffer.byte_offset + first * size) % alignment:
            raise InterpretationError(
                f"{who} {at} byte {buffer.byte_offset + first * size} of shared memory, which "
                f"must be a multiple of {alignment}"
            )
        if first + count > prod(shape):
            raise InterpretationError(
                f"{who}: its box of {count} elements from element {start} overruns its {role} "
                f"of shape {list(shape)}"
            )
        return np.unravel_index(buffer.physical(first + np.arange(count)), shape)

    @impl(kernel.TmaStoreOp)
    def run_tma_store(
        self, interpreter: Interpreter, op: kernel.TmaStoreOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        rank = len(op.coordinates)
        tensor, *rest = args
        coordinates, (source, *source_indices) = rest[:rank], rest[rank:]
        threads = np.flatnonzero(chunk.mask)
        if threads.size and source.mapped:
            raise InterpretationError(
                f"{chunk.describe(int(threads[0]))}: '{op.name}' reads its own block's shared "
                f"memory, not a kernel.map_shared_rank view of another's"
            )
        box = op.tensor_map.box_shape
        corners = [chunk.per_thread(np.asarray(c))[threads] for c in coordinates]
        starts = [chunk.per_thread(np.asarray(i))[threads] for i in source_indices]
        groups = chunk.tma_store_groups()
        for n, thread in enumerate(threads):
            who = f"{chunk.describe(int(thread))}: '{op.name}'"
            start = [int(i[n]) for i in starts]
            place = self.tma_box(op, who, source, start, "reads from", "source")
            target = (np.full(place[0].shape, source.bank[thread]), *place)
            self.check_no_copy_in_flight(who, source, target, "reads")
            if source.delivered_by is not None:
                observed = chunk.mbarriers().observed[thread : thread + 1]
                self.check_delivered(chunk, lambda _: f"{who} reads", source, target, observed)
            _write_box(tensor, [int(c[n]) for c in corners], box, source.data[target])
            np.add.at(source.tma_store_readers(), target, 1)
            reads = TmaStoreReads(op, source, target, int(thread), int(groups[thread]))
            chunk.tma_store_in_flight.append(reads)
        return ()

    @impl(kernel.TmaStoreCommitOp)
    def run_tma_store_commit(
        self, interpreter: Interpreter, op: kernel.TmaStoreCommitOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        chunk.tma_store_groups()[chunk.mask] += 1
        return ()

    @impl(kernel.TmaStoreWaitOp)
    def run_tma_store_wait(
        self, interpreter: Interpreter, op: kernel.TmaStoreWaitOp, args: PythonValues
    ) -> PythonValues:
        # The box is in the tensor from the store on: with `read` or without, the wait ends
        # the reads of the groups it leaves behind.
        chunk = self.in_kernel(interpreter)
        committed = chunk.tma_store_groups()
        still_in_flight = []
        for reads in chunk.tma_store_in_flight:
            thread = reads.thread
            if chunk.mask[thread] and reads.group < committed[thread] - op.pending_groups:
                np.subtract.at(reads.buffer.tma_store_readers(), reads.target, 1)
            else:
                still_in_flight.append(reads)
        chunk.tma_store_in_flight = still_in_flight
        return ()

    def check_tma_landing(
        self,
        chunk: Chunk,
        who: str,
        buffer: Banked,
        target: tuple[np.ndarray, ...],
        states: MbarrierStates,
        block: int,
    ) -> None:
        """A TMA copy may overwrite only what no copy, wgmma or TMA store in flight touches and
        what an earlier TMA copy delivered once a thread has waited for it."""
        self.check_no_copy_in_flight(who, buffer, target, "overwrites")
        found = buffer.read_in_flight(target)
        if found is not None:
            read, reader, wait = found
            element = [int(i[np.flatnonzero(read)[0]]) for i in target]
            # A wgmma in flight is a consumer's, which releases the stage with an arrival.
            if reader == "kernel.wgmma":
                wait = "mbarrier wait on the consumer's release"
            raise InterpretationError(
                f"{who} overwrites shared element {element[1:]}, which a {reader} still in "
                f"flight reads (a missing {wait}?)"
            )
        if buffer.delivered_by is None:
            return
        slots, phases = buffer.delivered_by[target], buffer.delivered_in[target]
        block_threads = slice(block * chunk.block_size, (block + 1) * chunk.block_size)
        seen = states.observed[block_threads].max(axis=0)
        unseen = (slots >= 0) & (seen[slots] <= phases)
        if unseen.any():
            first = int(np.flatnonzero(unseen)[0])
            raise InterpretationError(
                f"{who} overwrites shared element {[int(i[first]) for i in target[1:]]}, which "
                f"an earlier kernel.tma_load delivered in phase {int(phases[first])} of mbarrier "
                f"{states.names[slots[first]]} and no thread has waited for yet (a missing "
                f"mbarrier wait on the consumer's release?)"
            )

    @staticmethod
    def check_no_copy_in_flight(
        who: str, buffer: Banked, target: tuple[np.ndarray, ...], access: str
    ) -> None:
        in_flight = buffer.in_flight[target] > 0
        if in_flight.any():
            first = np.unravel_index(int(np.flatnonzero(in_flight)[0]), in_flight.shape)
            raise InterpretationError(
                f"{who} {access} shared element {[int(i[first]) for i in target[1:]]}, which a "
                f"cp.async still in flight writes (a missing kernel.cp_async_wait?)"
            )

    def check_delivered(
        self,
        chunk: Chunk,
        who: Callable[[int], str],
        buffer: Banked,
        target: tuple[np.ndarray, ...],
        observed: np.ndarray,
    ) -> None:
        """The elements `target` that TMA copies delivered have been seen: `observed[k]`
        holds the phases seen by the reader of element k (a row of mbarrier slots);
        `who(k)` names it."""
        slots, phases = buffer.delivered_by[target], buffer.delivered_in[target]
        tagged = slots >= 0
        if not tagged.any():
            return
        seen = np.take_along_axis(observed, np.maximum(slots, 0)[..., None], -1)[..., 0]
        unseen = tagged & (seen <= phases)
        if unseen.any():
            first = np.unravel_index(int(np.flatnonzero(unseen)[0]), unseen.shape)
            states = chunk.mbarriers()
            raise InterpretationError(
                f"{who(first)} shared element {[int(i[first]) for i in target[1:]]} before its "
                f"kernel.tma_load's phase {int(phases[first])} of mbarrier "
                f"{states.names[slots[first]]} completed for it (read before its mbarrier phase "
                f"completed: a missing kernel.mbarrier_wait?)"
            )

    @staticmethod
    def warpgroups(chunk: Chunk, op: Operation) -> np.ndarray:
        """The first threads of the warpgroups that execute `op`, whole and converged."""
        SimtFunctions.check_converged(chunk, op, WARPGROUP_THREADS, "warpgroup")
        return np.flatnonzero(chunk.mask[::WARPGROUP_THREADS]) * WARPGROUP_THREADS

    @impl(kernel.WgmmaOp)
    def run_wgmma(
        self, interpreter: Interpreter, op: kernel.WgmmaOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        leaders = self.warpgroups(chunk, op)
        a_rank, b_rank = len(op.a_indices), len(op.b_indices)
        a, *rest = args
        a_indices, (b, *rest) = rest[:a_rank], rest[a_rank:]
        b_indices, (c,) = rest[:b_rank], rest[b_rank:]
        if not leaders.size:
            return (c,)
        m, n, k = op.mnk
        members = leaders[:, None] + np.arange(WARPGROUP_THREADS)
        b_tiles, b_target = self.wgmma_tile(
            chunk, op, "B", b, b_indices, members, n, k, op.b_mn_major is not None
        )
        if op.a_in_registers:
            # The threads' fragments, read at issue, lie as an m64n16 accumulator does.
            a_tiles = np.zeros((len(leaders), m, k))
            a_rows, a_columns = wgmma_accumulator_layout(k)
            a_tiles[:, a_rows, a_columns] = np.asarray(a, np.float64)[:, members].transpose(1, 0, 2)
            buffers, targets = (b,), (b_target,)
        else:
            a_tiles, a_target = self.wgmma_tile(chunk, op, "A", a, a_indices, members, m, k)
            buffers, targets = (a, b), (a_target, b_target)
        rows, columns = wgmma_accumulator_layout(n)
        c = np.asarray(c)
        accumulators = np.zeros((len(leaders), m, n))
        accumulators[:, rows, columns] = c[:, members].transpose(1, 0, 2)
        if op.is_tf32:
            a_tiles, b_tiles = truncate_to_tf32(a_tiles), truncate_to_tf32(b_tiles)
        # Products of f16, bf16 and tf32 are exact in float64, and so nearly are the sums.
        d = a_tiles @ b_tiles.transpose(0, 2, 1) + accumulators
        result = c.astype(np.float32)
        result[:, members] = d[:, rows, columns].transpose(1, 0, 2)
        warpgroups = leaders // WARPGROUP_THREADS
        reads = WgmmaReads(warpgroups, chunk.wgmma_groups()[warpgroups], buffers, targets)
        reads.count(1)
        chunk.wgmma_in_flight.append(reads)
        return (result,)

    def wgmma_tile(
        self,
        chunk: Chunk,
        op: kernel.WgmmaOp,
        what: str,
        buffer: Banked,
        indices: Sequence[object],
        members: np.ndarray,
        rows: int,
        k: int,
        mn_major: bool = False,
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
        """The `rows` x `k` tile (float64) each warpgroup (its threads `members`) addresses in
        `buffer`, K-major or MN-major panels (see `kernel.WgmmaOp`), and the elements it reads
        (a row of indices per warpgroup)."""
        shape = buffer.shape
        per_thread = [chunk.per_thread(np.asarray(i))[members] for i in indices]
        for position, index in enumerate(per_thread):
            differs = (index != index[:, :1]).any(axis=1)
            if differs.any():
                group = int(np.flatnonzero(differs)[0])
                raise InterpretationError(
                    f"'{op.name}': the threads of the warpgroup of "
                    f"{chunk.describe(int(members[group, 0]))} address different {what} tiles "
                    f"(index #{position})"
                )
        start = [index[:, 0] for index in per_thread]
        outside = np.any([(i < 0) | (i >= extent) for i, extent in zip(start, shape)], axis=0)
        if mn_major:
            panel, row, column = start[-3:]
            width = shape[-1]
            bad = (
                outside
                | (column != 0)
                | (row % k != 0)
                | (row + k > shape[-2])
                | (panel + rows // width > shape[-3])
            )
            expected = (
                f"{rows // width} panels of {k} rows of {width} at a k that is a multiple of "
                f"{k} and the first element of the row"
            )
            j = np.arange(rows)[:, None]
            lead = [i[:, None, None] for i in start[:-3]]
            element = (
                *lead,
                panel[:, None, None] + j // width,
                row[:, None, None] + np.arange(k),
                j % width,
            )
        else:
            row, column = start[-2], start[-1]
            bad = (
                outside
                | (row % kernel.WGMMA_ROW_GROUP != 0)
                | (column % k != 0)
                | (row + rows > shape[-2])
            )
            expected = (
                f"a {rows} x {k} tile at a row that is a multiple of {kernel.WGMMA_ROW_GROUP} "
                f"and a k that is a multiple of {k}"
            )
            lead = [i[:, None, None] for i in start[:-2]]
            element = (
                *lead,
                row[:, None, None] + np.arange(rows)[:, None],
                column[:, None, None] + np.arange(k),
            )
        if bad.any():
            group = int(np.flatnonzero(bad)[0])
            raise InterpretationError(
                f"'{op.name}' by the warpgroup of {chunk.describe(int(members[group, 0]))} "
                f"addresses {what} at {[int(i[group]) for i in start]} of {list(shape)}: "
                f"{expected}, inside the buffer"
            )
        flat = np.ravel_multi_index(element, shape)
        block = chunk.block_of[members[:, 0]][:, None, None]
        target = (
            np.broadcast_to(block, flat.shape),
            *np.unravel_index(buffer.physical(flat), shape),
        )
        leader = chunk.describe(int(members[0, 0]))
        self.check_no_copy_in_flight(
            f"'{op.name}' by the warpgroup of {leader}", buffer, target, "reads"
        )
        # The async proxy reads them: even the warpgroup's own stores need a barrier.
        writers = buffer.accesses.writers[target]
        leaders = chunk.accessors.part(members[:, 0])
        stored = chunk.launch.clock.current(writers, leaders.part((slice(None), None, None)))
        if stored.any():
            first = np.unravel_index(int(np.flatnonzero(stored)[0]), stored.shape)
            raise InterpretationError(
                f"'{op.name}' by the warpgroup of {chunk.describe(int(members[first[0], 0]))} "
                f"reads shared element {[int(i[first]) for i in target[1:]]}, which "
                f"{chunk.launch.clock.threads(int(writers[first]), int(leaders.keys[first[0]]))} "
                f"stored since the last "
                f"barrier (a missing kernel.barrier?)"
            )
        if buffer.delivered_by is not None:
            # Every thread of the warpgroup must have seen the copy's phase complete.
            observed = chunk.mbarriers().observed[members].min(axis=1)[:, None, None, :]

            def who(element: tuple[int, ...]) -> str:
                leader = int(members[element[0], 0])
                return f"'{op.name}' by the warpgroup of {chunk.describe(leader)} reads"

            self.check_delivered(chunk, who, buffer, target, observed)
        return buffer.data[target].astype(np.float64), target

    @impl(kernel.WgmmaCommitOp)
    def run_wgmma_commit(
        self, interpreter: Interpreter, op: kernel.WgmmaCommitOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        chunk.wgmma_groups()[self.warpgroups(chunk, op) // WARPGROUP_THREADS] += 1
        return ()

    @impl(kernel.WgmmaWaitOp)
    def run_wgmma_wait(
        self, interpreter: Interpreter, op: kernel.WgmmaWaitOp, args: PythonValues
    ) -> PythonValues:
        chunk = self.in_kernel(interpreter)
        waiting = np.zeros(chunk.threads // WARPGROUP_THREADS, np.bool_)
        waiting[self.warpgroups(chunk, op) // WARPGROUP_THREADS] = True
        committed = chunk.wgmma_groups()
        still_in_flight = []
        for reads in chunk.wgmma_in_flight:
            done = waiting[reads.warpgroups] & (
                reads.group < committed[reads.warpgroups] - op.pending_groups
            )
            if done.any():
                reads.part(done).count(-1)
            if not done.all():
                still_in_flight.append(reads.part(~done))
        chunk.wgmma_in_flight = still_in_flight
        return tuple(args)

    @impl(kernel.WgmmaFenceOp)
    def run_wgmma_fence(
        self, interpreter: Interpreter, op: kernel.WgmmaFenceOp, args: PythonValues
    ) -> PythonValues:
        self.warpgroups(self.in_kernel(interpreter), op)
        return ()

    @impl(kernel.SetmaxnregOp)
    def run_setmaxnreg(
        self, interpreter: Interpreter, op: kernel.SetmaxnregOp, args: PythonValues
    ) -> PythonValues:
        self.warpgroups(self.in_kernel(interpreter), op)
        return ()

    @impl(kernel.NamedBarrierOp)
    def run_named_barrier(
        self, interpreter: Interpreter, op: kernel.NamedBarrierOp, args: PythonValues
    ) -> PythonValues:
        # Warps run in lockstep here, so there is no one to wait for: the operands are checked.
        chunk = self.in_kernel(interpreter)
        warp_size = target_of(op).warp_size
        self.check_converged(chunk, op, warp_size, "warp")
        if op.thread_count > chunk.block_size:
            raise InterpretationError(
                f"'{op.name}' counts {op.thread_count} threads, more than the block's "
                f"{chunk.block_size}: it would never complete"
            )
        barriers = chunk.per_thread(np.asarray(args[0]))[chunk.mask]
        if barriers.size and not ((barriers >= 1) & (barriers < kernel.NAMED_BARRIERS)).all():
            raise InterpretationError(
                f"'{op.name}' is barrier 1 to {kernel.NAMED_BARRIERS - 1}, got "
                f"{int(barriers[(barriers < 1) | (barriers >= kernel.NAMED_BARRIERS)][0])}"
            )
        return ()

    @impl(kernel.FenceProxyAsyncOp)
    def run_fence_proxy_async(
        self, interpreter: Interpreter, op: kernel.FenceProxyAsyncOp, args: PythonValues
    ) -> PythonValues:
        # The emulator's generic and async proxies see one memory.
        self.in_kernel(interpreter)
        return ()

    # ---- element access helpers ----------------------------------------------------------

    def locate(
        self, chunk: Chunk, buffer: object, indices: Sequence[object], shift: int
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...], np.ndarray | None] | None:
        """The storage array, and for each active thread the index tuple into it of element
        `indices` (+ `shift` along the last dimension); the selection of active threads (None:
        all), to which the index arrays are restricted (unless they are uniform, 0-d). None
        when no thread is active. Fails on an out-of-bounds index of an active thread."""
        if isinstance(buffer, Banked):
            data, shape = buffer.data, buffer.shape
        else:
            data = buffer
            shape = buffer.shape
        indices = [np.asarray(i) for i in indices]
        if shift:
            indices[-1] = indices[-1] + shift
        active = None if chunk.full else chunk.mask
        if active is not None and not active.any():
            return None
        uniform = all(i.ndim == 0 for i in indices) and not isinstance(buffer, Banked)
        if uniform:
            self.check_bounds(chunk, indices, shape, None)
            return data, tuple(indices), active
        indices = [chunk.per_thread(i) for i in indices]
        if active is not None:
            indices = [i[active] for i in indices]
        self.check_bounds(chunk, indices, shape, active)
        if isinstance(buffer, Banked) and buffer.swizzle is not None:
            flat = buffer.physical(np.ravel_multi_index(indices, shape))
            indices = list(np.unravel_index(flat, shape))
        if isinstance(buffer, Banked):
            bank = buffer.bank if active is None else buffer.bank[active]
            indices = [bank, *indices]
        return data, tuple(indices), active

    @staticmethod
    def check_bounds(
        chunk: Chunk, indices: Sequence[np.ndarray], shape: Sequence[int], active: np.ndarray | None
    ) -> None:
        if len(indices) != len(shape):
            raise InterpretationError(f"{len(indices)} indices for a buffer of shape {list(shape)}")
        for position, (index, size) in enumerate(zip(indices, shape)):
            bad = (index < 0) | (index >= size)
            if bad.any():
                if index.ndim == 0:
                    where = "every thread here"
                else:
                    first, thread, _ = _first_offender(bad, active, ())
                    where, index = chunk.describe(thread), index[first]
                raise OutOfBounds(
                    f"{where}: index #{position} is {int(index)}, out of bounds for a "
                    f"dimension of size {size}"
                )

    def load(
        self,
        interpreter: Interpreter,
        op: Operation,
        buffer: object,
        indices: Sequence[object],
        shift: int,
    ) -> np.ndarray:
        chunk = self.in_kernel(interpreter)
        if isinstance(buffer, Banked) and buffer.mapped:
            chunk.mapped_access = op
        located = self.locate(chunk, buffer, indices, shift)
        if located is None:
            dtype = (buffer.data if isinstance(buffer, Banked) else buffer).dtype
            return np.zeros((), dtype)
        data, target, active = located
        self.check_read(chunk, op, buffer, target, active)
        values = np.asarray(data[target])
        if active is None or values.ndim == 0:
            return values
        result = np.zeros(chunk.threads, values.dtype)
        result[active] = values
        return result

    def store(
        self,
        interpreter: Interpreter,
        op: Operation,
        buffer: object,
        indices: Sequence[object],
        values: Sequence[object],
        element_type: Attribute,
    ) -> None:
        """Stores `values[k]` at `indices` + k along the last dimension."""
        chunk = self.in_kernel(interpreter)
        if isinstance(buffer, Banked) and buffer.mapped:
            chunk.mapped_access = op
        for shift, value in enumerate(values):
            value = to_type(value, element_type)
            located = self.locate(chunk, buffer, indices, shift)
            if located is None:
                return
            data, target, active = located
            if value.ndim:
                value = chunk.per_thread(value)
                if active is not None:
                    value = value[active]
            stored = value
            if value.ndim and all(np.ndim(i) == 0 for i in target):
                # Every active thread stores to one element: the highest one's value stays.
                stored = value[-1]
            if isinstance(buffer, Banked):
                self.check_not_in_flight(chunk, buffer, target, active, "stores to")
                self.check_not_read_in_flight(chunk, buffer, target, active)
            self.check_write(chunk, op, buffer, target, active, stored)
            data[target] = stored
            if isinstance(buffer, Banked) and buffer.delivered_by is not None:
                buffer.delivered_by[target] = -1
            self.check_same_element(chunk, op, buffer, target, active, value)
            accesses = self.accesses(chunk, buffer)
            if accesses is not None:
                who = chunk.accessing(active)
                index = _records_index(buffer, target, who)
                races.record_write(accesses, index, who, chunk.launch.number(op))

    def check_aligned(
        self,
        interpreter: Interpreter,
        buffer: object,
        indices: Sequence[object],
        width: int,
        element_type: Attribute,
    ) -> None:
        """`width` elements at `indices` start on a boundary of their bytes (counted in the
        element type's size: bf16 is held as float32 but is 2 bytes on the GPU)."""
        chunk = self.in_kernel(interpreter)
        data = buffer.data[0] if isinstance(buffer, Banked) else np.asarray(buffer)
        offset = buffer.byte_offset if isinstance(buffer, Banked) else 0
        strides = np.cumprod((1, *data.shape[::-1][:-1]))[::-1] if data.ndim else ()
        flat = sum(np.asarray(i) * int(s) for i, s in zip(indices, strides))
        size = kernel.element_bytes(element_type)
        vector_bytes = width * size
        misaligned = (offset + np.asarray(flat) * size) % vector_bytes != 0
        if misaligned.ndim and not chunk.full:
            misaligned = misaligned & chunk.mask
        if misaligned.any():
            who = "every thread"
            if misaligned.ndim:
                who = chunk.describe(int(np.flatnonzero(misaligned)[0]))
            raise InterpretationError(
                f"{who}: a {width}-element access is not aligned to its {vector_bytes} bytes"
            )

    @staticmethod
    def check_not_in_flight(
        chunk: Chunk,
        buffer: Banked,
        target: tuple[np.ndarray, ...],
        active: np.ndarray | None,
        access: str,
    ) -> None:
        """No thread touches an element that a cp.async in flight will write."""
        in_flight = np.broadcast_to(buffer.in_flight[target] > 0, target[0].shape)
        if in_flight.any():
            first, thread, element = _first_offender(in_flight, active, target)
            raise InterpretationError(
                f"{chunk.describe(thread)} {access} shared element {element}, which a cp.async "
                f"still in flight writes (a missing kernel.cp_async_wait?)"
            )

    @staticmethod
    def check_not_read_in_flight(
        chunk: Chunk,
        buffer: Banked,
        target: tuple[np.ndarray, ...],
        active: np.ndarray | None,
    ) -> None:
        """No thread stores to an element that a wgmma or a TMA store in flight reads."""
        found = buffer.read_in_flight(target)
        if found is not None:
            read, reader, wait = found
            _, thread, element = _first_offender(read, active, target)
            raise InterpretationError(
                f"{chunk.describe(thread)} stores to shared element {element}, which a "
                f"{reader} still in flight reads (a missing {wait}?)"
            )

    @staticmethod
    def accesses(chunk: Chunk, buffer: object) -> Accesses | None:
        """The records of the accesses to `buffer` that races are told by; None for a global
        buffer the kernel only reads, where nothing can race."""
        if isinstance(buffer, Banked):
            return buffer.accesses
        return chunk.launch.accesses(buffer)

    def check_read(
        self,
        chunk: Chunk,
        op: Operation,
        buffer: object,
        target: tuple[np.ndarray, ...],
        active: np.ndarray | None,
    ) -> None:
        """The read of `target` by the active threads reads what is there for every thread:
        nothing in flight, delivered, and stored by no thread it is not ordered after."""
        if isinstance(buffer, Banked):
            self.check_not_in_flight(chunk, buffer, target, active, "reads")
            if buffer.delivered_by is not None:
                readers = np.arange(chunk.threads) if active is None else np.flatnonzero(active)
                observed = chunk.mbarriers().observed[readers]

                def who(element: tuple[int, ...]) -> str:
                    return f"{chunk.describe(int(readers[element[0]]))} reads"

                self.check_delivered(chunk, who, buffer, target, observed)
        accesses = self.accesses(chunk, buffer)
        if accesses is None:
            return
        clock, number = chunk.launch.clock, chunk.launch.number(op)
        who = chunk.accessing(active)
        index = _records_index(buffer, target, who)
        race = races.check_read(clock, accesses, index, who)
        if race is not None:
            self.report(chunk, op, buffer, target, active, who, race, "reads")
        races.record_read(clock, accesses, index, who, number)

    def check_write(
        self,
        chunk: Chunk,
        op: Operation,
        buffer: object,
        target: tuple[np.ndarray, ...],
        active: np.ndarray | None,
        value: np.ndarray,
    ) -> None:
        """Storing `value` at `target` races with no access of another thread that it is not
        ordered after (unless it stores the value there already)."""
        accesses = self.accesses(chunk, buffer)
        if accesses is None:
            return
        data = buffer.data if isinstance(buffer, Banked) else buffer
        who = chunk.accessing(active)
        index = _records_index(buffer, target, who)
        race = races.check_write(
            chunk.launch.clock, accesses, index, who, lambda: _differs(data[target], value)
        )
        if race is not None:
            self.report(chunk, op, buffer, target, active, who, race, "stores to")

    def check_atomic(
        self,
        chunk: Chunk,
        op: kernel.AtomicOp,
        buffer: object,
        target: tuple[np.ndarray, ...],
        active: np.ndarray | None,
    ) -> None:
        """An atomic of `target` races with the plain accesses of other threads that it is not
        ordered after, not with their atomics; it is recorded for the accesses after it."""
        accesses = self.accesses(chunk, buffer)
        if accesses is None:
            return
        clock = chunk.launch.clock
        who = chunk.accessing(active)
        index = _records_index(buffer, target, who)
        race = races.check_atomic(clock, accesses, index, who)
        if race is not None:
            self.report(chunk, op, buffer, target, active, who, race, "updates")
        races.record_atomic(clock, accesses, index, who, chunk.launch.number(op))

    @staticmethod
    def report(
        chunk: Chunk,
        op: Operation,
        buffer: object,
        target: tuple[np.ndarray, ...],
        active: np.ndarray | None,
        who: Accessors,
        race: Race,
        access: str,
    ) -> NoReturn:
        launch = chunk.launch
        thread = race.position if active is None else int(np.flatnonzero(active)[race.position])
        key = int(who.keys[race.position])
        since = launch.clock.since(race.earlier, key, isinstance(buffer, Banked))
        raise InterpretationError(
            f"in @{launch.function.sym_name.data}, {chunk.describe(thread)} {access} "
            f"{_place(launch, buffer, target, race.position)}, which "
            f"{launch.clock.threads(race.earlier, key)} {race.what} "
            f"{since}: `{_text(launch.ops[race.op])}`, then "
            f"`{_text(op)}`"
        )

    @staticmethod
    def check_same_element(
        chunk: Chunk,
        op: Operation,
        buffer: object,
        target: tuple[np.ndarray, ...],
        active: np.ndarray | None,
        value: np.ndarray,
    ) -> None:
        """Threads of one store that wrote different values to one element."""
        data = buffer.data if isinstance(buffer, Banked) else buffer
        lost = _differs(data[target], value)
        if np.ndim(lost) and lost.any():
            position = int(np.flatnonzero(lost)[0])
            thread = position if active is None else int(np.flatnonzero(active)[position])
            others = " of its block" if isinstance(buffer, Banked) else ""
            raise InterpretationError(
                f"in @{chunk.launch.function.sym_name.data}, {chunk.describe(thread)} and "
                f"another thread{others} store different values to "
                f"{_place(chunk.launch, buffer, target, position)} at once: `{_text(op)}`"
            )


FragmentLayout = tuple[np.ndarray, np.ndarray]
"""The (row, column) in the warp's matrix of element `i` of lane `l`'s fragment, at `[i, l]`."""


def mma_fragment_layouts(
    op: kernel.MmaSyncOp,
) -> tuple[FragmentLayout, FragmentLayout, FragmentLayout]:
    """The layouts of A, B and C/D of `op`, as the PTX ISA gives them ("Matrix Fragments for
    mma.m16n8k16 with floating point type" and "for mma.m16n8k8"), with `g = lane / 4`,
    `t = lane % 4`."""
    lane = np.arange(32)
    group, in_group = lane // 4, lane % 4

    def layout(elements: int, row, column) -> FragmentLayout:
        i = np.arange(elements)[:, None]
        return (
            np.broadcast_to(row(i), (elements, 32)),
            np.broadcast_to(column(i), (elements, 32)),
        )

    accumulator = layout(4, lambda i: group + 8 * (i // 2), lambda i: 2 * in_group + i % 2)
    if op.shape.data == kernel.MmaShape.M16N8K16:
        a = layout(
            8, lambda i: group + 8 * (i // 2 % 2), lambda i: 2 * in_group + i % 2 + 8 * (i // 4)
        )
        b = layout(4, lambda i: 2 * in_group + i % 2 + 8 * (i // 2), lambda i: group)
    elif op.tf32 is not None:
        a = layout(4, lambda i: group + 8 * (i % 2), lambda i: in_group + 4 * (i // 2))
        b = layout(2, lambda i: in_group + 4 * i, lambda i: group)
    else:
        a = layout(4, lambda i: group + 8 * (i // 2), lambda i: 2 * in_group + i % 2)
        b = layout(2, lambda i: 2 * in_group + i, lambda i: group)
    return a, b, accumulator


def wgmma_accumulator_layout(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The (row, column) of the m64nNk16 accumulator that element `i` of thread `t` of the
    warpgroup holds, at `[i, t]`: warp w = t / 32, lane l, g = l / 4, q = l % 4, row
    16w + g + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2q + i % 2 (the PTX ISA's "Register
    Fragments for wgmma .m64nNk16")."""
    i = np.arange(n // 2)[:, None]
    thread = np.arange(WARPGROUP_THREADS)
    warp, lane = thread // 32, thread % 32
    group, in_group = lane // 4, lane % 4
    rows = 16 * warp + group + 8 * (i // 2 % 2)
    columns = 8 * (i // 4) + 2 * in_group + i % 2
    return rows, columns


def _box_window(
    shape: Sequence[int], corner: Sequence[int], box: Sequence[int]
) -> tuple[tuple[slice, ...], tuple[slice, ...]] | None:
    """The part of the box of `box` elements from `corner` on that lies inside a tensor of
    `shape`: its slices of the tensor and of the box; None where none does."""
    inside, placed = [], []
    for start, extent, size in zip(corner, box, shape):
        low, high = max(start, 0), min(start + extent, size)
        if low >= high:
            return None
        inside.append(slice(low, high))
        placed.append(slice(low - start, high - start))
    return tuple(inside), tuple(placed)


def _read_box(tensor: np.ndarray, corner: Sequence[int], box: Sequence[int]) -> np.ndarray:
    """The box of `box` elements of `tensor` from `corner` on, zeros outside the tensor,
    flattened row-major."""
    values = np.zeros(box, tensor.dtype)
    window = _box_window(tensor.shape, corner, box)
    if window is not None:
        inside, placed = window
        values[placed] = tensor[inside]
    return values.reshape(-1)


def _write_box(
    tensor: np.ndarray, corner: Sequence[int], box: Sequence[int], values: np.ndarray
) -> None:
    """Writes `values`, the box of `box` elements from `corner` on flattened row-major, into
    `tensor`, leaving out the elements outside it."""
    window = _box_window(tensor.shape, corner, box)
    if window is not None:
        inside, placed = window
        tensor[inside] = values.reshape(box)[placed]


def truncate_to_tf32(values: np.ndarray) -> np.ndarray:
    """f32 values as a tf32 wgmma reads them from shared memory: their upper 19 bits, the
    lower 13 of the fraction dropped (toward zero); NaN stays NaN."""
    bits = np.asarray(values, np.float32).view(np.uint32)
    truncated = (bits & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isnan(values), values, truncated).astype(np.float64)


def round_to_tf32(values: np.ndarray) -> np.ndarray:
    """f32 values rounded to tf32's 10 fraction bits, to nearest with ties away from zero
    (PTX `cvt.rna.tf32.f32`); NaN stays NaN."""
    bits = np.asarray(values, np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isnan(values), values, rounded).astype(values.dtype)


def _first_offender(
    offends: np.ndarray, active: np.ndarray | None, target: tuple[np.ndarray, ...]
) -> tuple[int, int, list[int]]:
    """The first access (position among the op's active threads) where `offends` holds, that
    thread's index in its chunk, and the shared element (`target`'s indices after the block's)
    it touches."""
    first = int(np.flatnonzero(offends)[0])
    thread = first if active is None else int(np.flatnonzero(active)[first])
    return first, thread, [int(i[first]) for i in target[1:]]


def _records_index(
    buffer: object, target: tuple[np.ndarray, ...], who: Accessors
) -> tuple[np.ndarray, ...]:
    """Where the records of the elements `target` of `buffer` are: an index per accessing
    thread (of `who`), into the records of a 0-d buffer too (which have one element)."""
    if not target:
        target = (np.zeros((), np.int64),)
    shape = who.keys.shape
    return tuple(i if i.shape == shape else np.broadcast_to(i, shape) for i in target)


def _text(op: Operation) -> str:
    """`op` as the IR shows it (an access, one line)."""
    text = StringIO()
    Printer(stream=text).print_op(op)
    return text.getvalue()


def _place(launch: Launch, buffer: object, target: tuple[np.ndarray, ...], position: int) -> str:
    """The element that access `position` of `target` reaches, for an error message."""
    element = [int(i) if np.ndim(i) == 0 else int(i[position]) for i in target]
    if isinstance(buffer, Banked):
        return f"shared element {element[1:]}"
    return f"element {element} of {launch.names.get(id(buffer), 'a buffer')}"


def _dimension(op: kernel.ThreadIdOp) -> int:
    return kernel.DIMENSIONS.index(op.dim)


def launch_shape(values: Sequence[int]) -> tuple[int, int, int]:
    return tuple([*values, 1, 1, 1][:3])  # type: ignore[return-value]
