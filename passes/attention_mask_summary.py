"""The summary of a wgmma attention's boolean mask: two kernels, launched before the
attention, that pack the mask's bits in the order of the score fragments and list, for each
block of query rows, the key blocks in which it keeps any key, so that the attention skips the
others and reads one word a row where it reads the mask.

    kernel.launch @attention_mask(%mask, %bits, %marks) grid [128, 1, 1] block [256, 1, 1]
    kernel.launch @attention_mask_list(%marks, %taken) grid [16, 1, 1] block [32, 1, 1]
    kernel.launch @attention(%q, %k, %v, %mask, %o, %q, %k, %v, %bits, %taken) grid [132, 1, 1] ..

for a mask `memref<1x1x2048x2048xi1>` and tiles of 128 query rows by 128 keys:

    %bits : memref<1x1x2048x16x4xi32>    word q of row r in key block j: bit 2 a + t is the mask
                                          at row r, key 128 j + 8 a + 2 q + t
    %marks : memref<1x1x16x8x16xi32>     whether slice s (16 rows) of row block i keeps a key in
                                          key block j
    %taken : memref<1x1x16x17xi32>       for each block of 128 rows: how many key blocks keep a
                                          key in them (n), then those blocks' indices in order

Lane q of a quad holds the scores of keys 8 a + 2 q + t of its rows (element 4 a + 2 h + t
of the accumulator fragment, `AttentionEmitter`), so it reads the mask at one key block's
scores of a row in one word. A key block that masks all of a block's rows is worth nothing
to the online softmax (no key joins a row's max or sum): the attention's producer loads, and
its consumers multiply, only the blocks listed, and a row block listing none stores zeros,
as the whole mask read at every score gives. A causal mask of a Llama prefill (a gather
of a lower-triangular buffer) skips half the blocks so.

The summary keeps the mask's own batch dimensions and rows (1 where it broadcasts them).
The first kernel takes a slice of ROW_SLICES of a row block's rows a block, so that the
blocks fill the SMs: one thread per 16 keys of a row and key block, a vector load (a
thread's UNROLLED_STEPS loads issued together), bits shifted into four words, the words
combined over the BN / 16 lanes that share them (xor shuffles), and the key blocks that keep
any key of the slice marked. The second combines the slices' marks of a row block (a lane a
key block) and its thread 0 lists the marked blocks.

It applies (`summarizes_mask`) to a non-causal wgmma attention whose i1 mask has rows (the
queries' or one) and keys (all of them, a multiple of 16, which the vector loads need); any
other mask is read element by element at every score (`AttentionEmitter.mask_element`).
"""

from __future__ import annotations

from math import prod

from xdsl.dialects import arith, memref, scf
from xdsl.dialects import vector as vector_dialect
from xdsl.dialects.builtin import IndexType, MemRefType, i1, i32
from xdsl.ir import Block, Operation, Region, SSAValue

from emmy.dialects import kernel, tile
from emmy.dialects.target import GpuTarget
from emmy.passes.gemm_kernel import Index, KernelEmitter

CHUNK_KEYS = 16
"""The keys of a row one thread of the summary loads at once (a 16-byte vector)."""
QUAD = 4
"""The lanes of a quad, which hold one row's scores between them: a word each."""
WORD_BITS = 32
"""The bits of a word, two for each 8 keys of a key block: at most 128 keys a block."""
PACK_THREADS = 256
LIST_THREADS = 32
ROW_SLICES = 8
"""The slices a row block's rows are packed in, each by a block of its own."""
UNROLLED_STEPS = 8
"""The steps of a thread's strided loop emitted together, their loads first, so that they are
in flight together."""


def summarizes_mask(attention: tile.AttentionOp) -> bool:
    """Whether `attention` takes a mask summary (see the module docstring)."""
    mask = attention.mask
    if (
        mask is None
        or attention.causal is not None
        or attention.mma_atom.kind != tile.AtomKind.WGMMA
        or mask.type.get_element_type() != i1
        or mask.type.get_num_dims() < 2
    ):
        return False
    *_, rows, keys = mask.type.get_shape()
    query_rows = attention.query.type.get_shape()[-2]
    key_count = attention.key.type.get_shape()[-2]
    block_kv = attention.tile_shape[1]
    return (
        rows in (1, query_rows)
        and keys == key_count
        and keys % CHUNK_KEYS == 0
        # At least one chunk for each lane of a quad, whose word it stores.
        and CHUNK_KEYS * QUAD <= block_kv <= 4 * WORD_BITS
        and block_kv % CHUNK_KEYS == 0
    )


def _sizes(attention: tile.AttentionOp) -> tuple[list[int], int, int, int]:
    """The mask's batch sizes, its rows, its key blocks and its row blocks."""
    assert attention.mask is not None
    *batch, rows, keys = attention.mask.type.get_shape()
    block_q, block_kv, _ = attention.tile_shape
    return batch, rows, -(-keys // block_kv), -(-rows // block_q)


def _slices(attention: tile.AttentionOp) -> int:
    """How many slices the first kernel packs a row block's rows in: ROW_SLICES where they
    divide its rows evenly, else 1."""
    _, rows, _, _ = _sizes(attention)
    block_rows = min(attention.tile_shape[0], rows)
    return ROW_SLICES if block_rows % ROW_SLICES == 0 else 1


def mask_summary_types(attention: tile.AttentionOp) -> list[MemRefType]:
    """The buffers of `attention`'s mask summary that the attention reads, the mask's bits and
    the key blocks each row block takes (see the module docstring); none where it takes no
    summary."""
    if not summarizes_mask(attention):
        return []
    batch, rows, key_blocks, row_blocks = _sizes(attention)
    return [
        MemRefType(i32, [*batch, rows, key_blocks, QUAD]),
        MemRefType(i32, [*batch, row_blocks, key_blocks + 1]),
    ]


def _marks_type(attention: tile.AttentionOp) -> MemRefType:
    batch, _, key_blocks, row_blocks = _sizes(attention)
    return MemRefType(i32, [*batch, row_blocks, _slices(attention), key_blocks])


def mask_summary_launches(
    name: str, attention: tile.AttentionOp, mask: SSAValue
) -> tuple[list[Operation], list[SSAValue]]:
    """The host ops that summarise `attention`'s `mask` before the launch of kernel `name`:
    the summary's buffers allocated and its two kernels launched; and the buffers the
    attention reads (`mask_summary_types`)."""
    bits_type, taken_type = mask_summary_types(attention)
    allocations = [
        memref.AllocOp([], [], t) for t in (bits_type, taken_type, _marks_type(attention))
    ]
    bits, taken, marks = (a.memref for a in allocations)
    batch, _, _, row_blocks = _sizes(attention)
    blocks = prod(batch) * row_blocks
    pack = kernel.LaunchOp(
        f"{name}_mask",
        [mask, bits, marks],
        [blocks * _slices(attention), 1, 1],
        [PACK_THREADS, 1, 1],
    )
    listing = kernel.LaunchOp(
        f"{name}_mask_list", [marks, taken], [blocks, 1, 1], [LIST_THREADS, 1, 1]
    )
    return [*allocations, pack, listing], [bits, taken]


class _SummaryEmitter(KernelEmitter):
    """What the summary's two kernels emit alike."""

    def __init__(self, attention: tile.AttentionOp, body: Block, target: GpuTarget, threads: int):
        super().__init__(body, {}, target)
        self.batch_sizes, self.rows, self.key_blocks, self.row_blocks = _sizes(attention)
        self.block_q, self.block_kv, _ = attention.tile_shape
        self.slices = _slices(attention)
        self.threads = threads

    def start(self, slices: int) -> Index:
        """The thread id, and the block's mask batch point and row block, its blocks taking
        `slices` slices of each row block; the block's slice."""
        self.thread_id = self.named(kernel.ThreadIdOp("x"), "tid")
        linear = self.add_op(kernel.BlockIdOp("x")).results[0]
        row_block = self.div(linear, slices)
        self.row_block = self.rem(row_block, self.row_blocks)
        self.batch = self.point_of(self.div(row_block, self.row_blocks), self.batch_sizes)
        return self.rem(linear, slices)

    def i32(self, value: int) -> SSAValue:
        return self.constant(value, i32)

    def load(self, buffer: SSAValue, indices: list[Index]) -> SSAValue:
        return self.add_op(memref.LoadOp.get(buffer, [self.index(i) for i in indices])).res

    def store(self, value: SSAValue, buffer: SSAValue, indices: list[Index]) -> None:
        self.add_op(memref.StoreOp.get(value, buffer, [self.index(i) for i in indices]))

    def ori(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.add_op(arith.OrIOp(lhs, rhs)).result

    def strided(self, count: int, fill, prepare=None) -> None:
        """`fill(i, inside, prepared)` for i = tid + threads k below `count`, UNROLLED_STEPS
        steps a loop iteration, every step's `prepare(i, inside)` (its loads) first. With a
        `prepare`, every thread runs every step (their shuffles take part together) and
        `inside` says whether i < count (None where every step's is); without, a step
        runs under a branch."""
        steps = -(-count // self.threads)
        unrolled = min(UNROLLED_STEPS, steps)
        every_step_inside = count % (self.threads * unrolled) == 0

        def body(block: Block) -> None:
            (iteration,) = block.args
            points = []
            for offset in range(unrolled):
                step = self.add(self.mul(iteration, unrolled), offset)
                i = self.add(self.thread_id, self.mul(step, self.threads))
                points.append((i, None if every_step_inside else self.less(i, count)))
            if prepare is None:
                for i, inside in points:
                    self.if_then(inside, lambda i=i: fill(i, None, None))
                return
            prepared = [prepare(i, inside) for i, inside in points]
            for (i, inside), value in zip(points, prepared, strict=True):
                fill(i, inside, value)

        iterations = self.index(-(-steps // unrolled))
        loop_body = self.nested(body, [IndexType()])
        self.add_op(scf.ForOp(self.index(0), iterations, self.index(1), [], loop_body))


class _PackBuilder(_SummaryEmitter):
    """Builds the first kernel: a slice of a row block's words and marks (see the module
    docstring)."""

    def __init__(self, attention: tile.AttentionOp, body: Block, target: GpuTarget):
        super().__init__(attention, body, target, PACK_THREADS)
        self.mask, self.bits, self.marks_out = body.args
        self.keys = attention.mask.type.get_shape()[-1]
        self.chunks = self.block_kv // CHUNK_KEYS
        self.slice_rows = min(self.block_q, self.rows) // self.slices

    def build(self) -> None:
        piece = self.start(self.slices)
        marks_type = kernel.shared_memref([self.key_blocks], i32)
        self.marks = self.named(kernel.SharedAllocOp(marks_type), "marks")
        self.strided(self.key_blocks, lambda j, *_: self.store(self.i32(0), self.marks, [j]))
        self.add_op(kernel.BarrierOp())
        first_row = self.add(
            self.mul(self.row_block, self.block_q), self.mul(piece, self.slice_rows)
        )
        self.strided(
            self.slice_rows * self.key_blocks * self.chunks,
            lambda i, inside, chunk_keys: self.pack_chunk(i, inside, first_row, chunk_keys),
            lambda i, inside: self.load_chunk(i, inside, first_row),
        )
        self.add_op(kernel.BarrierOp())

        def copy_mark(j: Index, *_) -> None:
            mark = self.load(self.marks, [j])
            self.store(mark, self.marks_out, [*self.batch, self.row_block, piece, j])

        self.strided(self.key_blocks, copy_mark)
        self.place_constants()

    def unit(self, unit: Index, inside: SSAValue | None, first_row: Index):
        """Thread unit `unit`'s chunk, key block and row (chunk i % C of key block (i / C) % J
        of row i / (C J), C chunks a key block, J key blocks), its first key, the conditions
        under which its row is one of the mask's, and those under which its keys are too."""
        chunk = self.rem(unit, self.chunks)
        rest = self.div(unit, self.chunks)
        key_block = self.rem(rest, self.key_blocks)
        row = self.add(first_row, self.div(rest, self.key_blocks))
        row_inside = [] if inside is None else [inside]
        if self.rows % self.block_q:
            row_inside.append(self.less(row, self.rows))
        first_key = self.add(self.mul(key_block, self.block_kv), self.mul(chunk, CHUNK_KEYS))
        keys_inside = list(row_inside)
        if self.keys % self.block_kv:
            keys_inside.append(self.less(first_key, self.keys))
        return chunk, key_block, row, first_key, row_inside, keys_inside

    def load_chunk(self, unit: Index, inside: SSAValue | None, first_row: Index) -> SSAValue:
        """The unit's 16 keys of its row, loaded (the first chunk's where the unit is past
        the rows or the keys: it takes none of it)."""
        _, _, row, first_key, _, keys_inside = self.unit(unit, inside, first_row)
        loaded = self.both(keys_inside)
        point = [*self.batch, row, first_key]
        if loaded is not None:
            point = [*self.batch, self.select(loaded, row, 0), self.select(loaded, first_key, 0)]
        return self.add_op(
            kernel.VectorLoadOp(self.mask, [self.index(i) for i in point], CHUNK_KEYS)
        ).result

    def pack_chunk(
        self, unit: Index, inside: SSAValue | None, first_row: Index, chunk_keys: SSAValue
    ) -> None:
        """The unit's bits in its row's four words, combined over the lanes of its key block
        and stored by the first four; its key block marked where the words keep a key."""
        chunk, key_block, row, _, row_inside, keys_inside = self.unit(unit, inside, first_row)
        words = self.chunk_words(chunk_keys, chunk, self.both(keys_inside))
        for offset in (1, 2, 4, 8, 16):
            if offset >= self.chunks:
                break
            words = [
                self.ori(w, self.add_op(kernel.ShuffleOp("xor", w, self.i32(offset))).result)
                for w in words
            ]
        # The words hold every chunk's bits once combined: lane q stores word q even where its
        # own chunk is past the keys (a last key block of 32 keys has chunks 0 and 1 alone).
        owner = self.both([*row_inside, self.less(chunk, QUAD)])
        word = words[QUAD - 1]
        for quad_lane in reversed(range(QUAD - 1)):
            word = self.select(self.equal(chunk, quad_lane), words[quad_lane], word)
        bits_at = [*self.batch, row, key_block, chunk]
        self.if_then(owner, lambda: self.store(word, self.bits, bits_at))
        any_word = self.ori(self.ori(words[0], words[1]), self.ori(words[2], words[3]))
        kept = self.add_op(arith.CmpiOp(any_word, self.i32(0), "ne")).result
        first = self.both([*row_inside, self.equal(chunk, 0), kept])
        self.if_then(first, lambda: self.store(self.i32(1), self.marks, [key_block]))

    def chunk_words(
        self, chunk_keys: SSAValue, chunk: Index, loaded: SSAValue | None
    ) -> list[SSAValue]:
        """The four words' bits of a chunk's 16 keys (0 where it is not `loaded`): key
        8 a + 2 q + t of the key block (a = 2 chunk + key / 8 of the chunk's) goes to bit
        2 a + t of word q."""
        words: list[SSAValue | None] = [None] * QUAD
        for key in range(CHUNK_KEYS):
            element = self.add_op(vector_dialect.ExtractOp(chunk_keys, [key], i1)).result
            element = self.add_op(arith.ExtUIOp(element, i32)).result
            shift = 2 * (key // 8) + key % 2
            if shift:
                element = self.add_op(arith.ShLIOp(element, self.i32(shift))).result
            quad_lane = key % 8 // 2
            previous = words[quad_lane]
            words[quad_lane] = element if previous is None else self.ori(previous, element)
        amount = self.add_op(arith.IndexCastOp(self.index(self.mul(chunk, 4)), i32)).result
        shifted = [self.add_op(arith.ShLIOp(w, amount)).result for w in words]
        if loaded is None:
            return shifted
        return [self.add_op(arith.SelectOp(loaded, w, self.i32(0))).result for w in shifted]


class _ListBuilder(_SummaryEmitter):
    """Builds the second kernel: a row block's marks combined over its slices, and its list
    of key blocks (see the module docstring)."""

    def __init__(self, attention: tile.AttentionOp, body: Block, target: GpuTarget):
        super().__init__(attention, body, target, LIST_THREADS)
        self.marks_in, self.taken = body.args

    def build(self) -> None:
        self.start(1)
        kept_type = kernel.shared_memref([self.key_blocks], i32)
        self.kept = self.named(kernel.SharedAllocOp(kept_type), "kept")

        def combine(j: Index, *_) -> None:
            marks = [
                self.load(self.marks_in, [*self.batch, self.row_block, piece, j])
                for piece in range(self.slices)
            ]
            kept = marks[0]
            for mark in marks[1:]:
                kept = self.ori(kept, mark)
            self.store(kept, self.kept, [j])

        self.strided(self.key_blocks, combine)
        self.add_op(kernel.BarrierOp())
        self.if_then(self.equal(self.thread_id, 0), self.list_kept)
        self.place_constants()

    def list_kept(self) -> None:
        """Thread 0: the kept key blocks' indices after their count."""
        row_block = [*self.batch, self.row_block]

        def body(block: Block) -> list[SSAValue]:
            key_block, count = block.args
            mark = self.load(self.kept, [key_block])
            marked = self.add_op(arith.CmpiOp(mark, self.i32(0), "ne")).result

            def record() -> None:
                position = self.add(count, 1)
                value = self.add_op(arith.IndexCastOp(key_block, i32)).result
                self.store(value, self.taken, [*row_block, position])

            self.if_then(marked, record)
            return [self.add(count, self.select(marked, 1, 0))]

        loop = self.add_op(
            scf.ForOp(
                self.index(0),
                self.index(self.key_blocks),
                self.index(1),
                [self.index(0)],
                self.nested(body, [IndexType(), IndexType()]),
            )
        )
        total = self.add_op(arith.IndexCastOp(loop.results[0], i32)).result
        self.store(total, self.taken, [*row_block, 0])


def lower_mask_summary(source: tile.KernelOp, target: GpuTarget) -> list[kernel.FuncOp]:
    """The kernel.funcs `@<name>_mask` and `@<name>_mask_list` of the mask summary of
    `source`'s attention (see the module docstring)."""
    attention = source.attention
    assert attention is not None and attention.mask is not None
    bits, taken = mask_summary_types(attention)
    marks = _marks_type(attention)
    funcs = []
    for suffix, builder, arguments, threads in (
        (
            "mask",
            _PackBuilder,
            (("mask", attention.mask.type), ("bits", bits), ("marks", marks)),
            PACK_THREADS,
        ),
        ("mask_list", _ListBuilder, (("marks", marks), ("taken", taken)), LIST_THREADS),
    ):
        types = [t for _, t in arguments]
        body = Block(arg_types=types)
        for argument, (name, _) in zip(body.args, arguments, strict=True):
            argument.name_hint = name
        builder(attention, body, target).build()
        func = kernel.FuncOp(
            f"{source.sym_name.data}_{suffix}", types, [threads, 1, 1], Region(body)
        )
        func.location = source.location
        funcs.append(func)
    return funcs
