"""Facts declared on ops drive the analyses that read them, so a new op joins an analysis by
declaring its facts, and one that declares none cannot make it unsound.

- Memory effects (`emmy.dialects.effects`): the buffers a kernel writes are what its ops say
  they write: a new op that writes a buffer makes it non-const and non-aliasable, and an op
  that declares nothing is taken to write every buffer it is given.
- Thread variance (`emmy.dialects.threads`): a new op whose result differs between threads
  puts a barrier under it out of reach; a uniform one does not.
- Fusion classes (`emmy.dialects.prim`): a new view is fused and lowered through its index
  map; a prim op without a fusion class is an error of fuse-prims, not a silent guess.
- Element types (`emmy.dialects.dtypes`): one table says what each type is in torch, numpy
  and C, and how large it is.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp, TensorType, bf16, f32, i64
from xdsl.ir import Block, Region
from xdsl.irdl import (
    IRDLOperation,
    VerificationContext,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.traits import (
    IsTerminator,
    MemoryEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import PassFailedException, VerifyException

from emmy.dialects import dtypes, fused, kernel, launch, loop, make_context, prim, tile
from emmy.dialects.effects import (
    ReadsOperand,
    WritesOperand,
    operand_values,
    written_values,
)
from emmy.dialects.threads import ThreadDependsOn, ThreadVarying, thread_dependent_values
from emmy.passes.fuse_prims import FusePrimsPass
from emmy.passes.lower_fused_to_loop import LowerFusedToLoopPass
from emmy.tools.cuda.target import print_cuda
from emmy.tools.interpreter.run import run_module
from emmy.tools.interpreter.scalar import numpy_dtype

BUFFER = MemRefType(f32, [64])


def _ops_of(*dialects) -> list[type[IRDLOperation]]:
    return [op for dialect in dialects for op in dialect.operations]


def _may_take_memref(op_type: type[IRDLOperation]) -> bool:
    """Whether some operand of the op's definition accepts a memref."""
    for _, definition in op_type.get_irdl_definition().operands:
        try:
            definition.constr.verify((BUFFER,), VerificationContext())
        except VerifyException:
            continue
        return True
    return False


@pytest.mark.parametrize(
    "op_type", _ops_of(loop.Loop, tile.Tile, kernel.Kernel), ids=lambda o: o.name
)
def test_every_op_declares_its_memory_effects(op_type):
    traits = list(op_type.get_irdl_definition().traits)
    effects = [t for t in traits if isinstance(t, MemoryEffect)]
    if any(isinstance(t, SymbolOpInterface) for t in traits):
        return  # a definition: its body runs where it is launched, not where it stands
    assert effects, f"{op_type.name} declares no memory effects"
    unnamed = [e for e in effects if isinstance(e, MemoryReadEffect | MemoryWriteEffect)]
    assert not (unnamed and _may_take_memref(op_type)), (
        f"{op_type.name} reads or writes memory without naming the operand, but takes buffers"
    )
    names = [name for name, _ in op_type.get_irdl_definition().operands]
    for effect in effects:
        if isinstance(effect, ReadsOperand | WritesOperand):
            assert effect.operand in names


def _kernel_with(build_body, argument_count: int = 2) -> kernel.FuncOp:
    """A kernel.func of `argument_count` f32[64] buffers whose body `build_body(args)` makes."""
    body = Block(arg_types=[BUFFER] * argument_count)
    body.add_ops(build_body(body.args))
    function = kernel.FuncOp("k", [BUFFER] * argument_count, [32, 1, 1], Region(body))
    ModuleOp([function])
    return function


@irdl_op_definition
class FillOp(IRDLOperation):
    """An op no analysis knows by name: it writes `target` and reads `source`."""

    name = "kernel.test_fill"
    source = operand_def(MemRefType)
    target = operand_def(MemRefType)
    traits = traits_def(ReadsOperand("source"), WritesOperand("target"))


@irdl_op_definition
class UndeclaredOp(IRDLOperation):
    """An op that takes buffers and declares nothing about them."""

    name = "kernel.test_undeclared"
    buffers = var_operand_def(MemRefType)


def test_a_new_op_that_declares_a_write_makes_its_buffer_written():
    function = _kernel_with(lambda args: [FillOp(operands=[args[0], args[1]])])
    source, target = function.body.block.args
    assert written_values(function.body) == {target}
    assert launch.written_arguments(function) == {1}
    assert operand_values(function.body.block.first_op, "source") == (source,)


def test_an_op_without_declared_effects_writes_every_buffer_it_takes():
    function = _kernel_with(lambda args: [UndeclaredOp(operands=[[args[0], args[1]]])])
    assert written_values(function.body) == set(function.body.block.args)


def test_an_effect_on_an_operand_the_op_lacks_is_a_verify_error():
    @irdl_op_definition
    class WrongOp(IRDLOperation):
        name = "kernel.test_wrong"
        buffer = operand_def(MemRefType)
        traits = traits_def(WritesOperand("destination"))

    function = _kernel_with(lambda args: [WrongOp(operands=[args[0]])])
    with pytest.raises(VerifyException, match="a fact about 'destination', not an operand"):
        function.body.block.first_op.verify()


def _launch_one_buffer_twice(function: kernel.FuncOp) -> kernel.LaunchOp:
    """A host function that passes one buffer as both arguments of `function`'s kernel."""
    host = Block(arg_types=[BUFFER])
    (x,) = host.args
    launch = kernel.LaunchOp("k", [x, x], [1, 1, 1], [32, 1, 1])
    host.add_ops([launch, func.ReturnOp()])
    function.parent_op().body.block.add_op(func.FuncOp("forward", ([BUFFER], []), Region(host)))
    return launch


def test_the_launch_aliasing_check_reads_the_declared_write():
    function = _kernel_with(lambda args: [FillOp(operands=[args[0], args[1]])])
    launch = _launch_one_buffer_twice(function)
    with pytest.raises(VerifyException, match="which writes one of them"):
        launch.verify()


def test_a_read_only_new_op_leaves_launch_arguments_free_to_alias():
    @irdl_op_definition
    class ReadOp(IRDLOperation):
        name = "kernel.test_read"
        source = operand_def(MemRefType)
        traits = traits_def(ReadsOperand("source"))

    function = _kernel_with(lambda args: [ReadOp(operands=[args[0]]), ReadOp(operands=[args[1]])])
    assert written_values(function) == set()
    assert launch.written_arguments(function) == set()
    _launch_one_buffer_twice(function).verify()


CUDA_KERNEL = """
kernel.func @k(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) block [32, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %x[%t] : memref<64xf32>
  %old = kernel.atomic add %v, %y[%t] : memref<64xf32>
  %s = kernel.shared_alloc : memref<64xf32, 3 : i32>
  kernel.cp_async %s[%t], %z[%t] bytes 4 : memref<64xf32, 3 : i32>, memref<64xf32>
}
"""


def test_const_restrict_follows_the_declared_writes():
    module = Parser(make_context(), CUDA_KERNEL).parse_module()
    module.verify()
    function = module.body.block.first_op
    _, y, _ = function.body.block.args
    (shared,) = [op.result for op in function.walk() if isinstance(op, kernel.SharedAllocOp)]
    assert written_values(function.body) == {y, shared}
    cuda = print_cuda(module)
    assert "const float* __restrict__ x" in cuda
    assert "float* __restrict__ y" in cuda and "const float* __restrict__ y" not in cuda
    assert "const float* __restrict__ z" in cuda


def test_loop_kernels_writes_come_from_loop_store():
    text = """
    loop.kernel @k(%x: memref<64xf32>, %y: memref<64xf32>) {
      loop.for %i in 0 to 64 {
        %v = loop.load %x[%i] : memref<64xf32>
        loop.store %v, %y[%i] : memref<64xf32>
      }
    }
    """
    module = Parser(make_context(), text).parse_module()
    function = module.body.block.first_op
    assert written_values(function.body) == {function.body.block.args[1]}


def test_a_tile_stage_reads_its_buffer_and_writes_no_operand():
    text = """
    tile.kernel @k(%x: memref<4x64xf32>, %y: memref<4x64xf32>) grid [4, 1, 1]
        block [32, 1, 1] {
      tile.for %i in 0 to 4 map grid {
        tile.stage %x[%i] sync : memref<4x64xf32>
        tile.for %j in 0 to 64 map thread {
          %v = memref.load %x[%i, %j] : memref<4x64xf32>
          memref.store %v, %y[%i, %j] : memref<4x64xf32>
        }
      }
    }
    """
    module = Parser(make_context(), text).parse_module()
    module.verify()
    function = module.body.block.first_op
    assert written_values(function.body) == {function.body.block.args[1]}


# --- which values differ between threads ---------------------------------------------------


@pytest.mark.parametrize("op_type", _ops_of(kernel.Kernel), ids=lambda o: o.name)
def test_every_kernel_op_with_results_says_how_they_vary_between_threads(op_type):
    definition = op_type.get_irdl_definition()
    if not definition.results:
        return
    traits = list(definition.traits)
    declared = [t for t in traits if isinstance(t, ThreadVarying | ThreadDependsOn)]
    assert len(declared) == 1, f"{op_type.name} declares {declared}"
    names = [name for name, _ in definition.operands]
    if isinstance(declared[0], ThreadDependsOn):
        assert set(declared[0].operands) <= set(names)


@irdl_op_definition
class LaneIdOp(IRDLOperation):
    """An op no analysis knows by name whose result differs between threads."""

    name = "kernel.test_lane_id"
    result = result_def(IndexType)
    traits = traits_def(Pure(), ThreadVarying())


@irdl_op_definition
class WarpCountOp(IRDLOperation):
    """An op whose result is the same in every thread of a block."""

    name = "kernel.test_warp_count"
    result = result_def(IndexType)
    traits = traits_def(Pure(), ThreadDependsOn())


@irdl_op_definition
class PickOp(IRDLOperation):
    """`%r = pick %a, %b`: its result follows `a` only (b merely selects a register, say)."""

    name = "kernel.test_pick"
    a = operand_def(IndexType)
    b = operand_def(IndexType)
    result = result_def(IndexType)
    traits = traits_def(Pure(), ThreadDependsOn("a"))


def _parse_with_test_ops(text: str) -> ModuleOp:
    context = make_context()
    for op_type in (LaneIdOp, WarpCountOp, PickOp):
        context.load_op(op_type)
    return Parser(context, text).parse_module()


def _barrier_under(condition_ops: str) -> str:
    return f"""
    kernel.func @k() block [64, 1, 1] {{
      %c0 = arith.constant 0 : index
      %t = kernel.thread_id x
      {condition_ops}
      %c = arith.cmpi eq, %v, %c0 : index
      scf.if %c {{
        kernel.barrier
      }}
    }}
    """


def test_a_new_thread_varying_op_around_a_barrier_is_rejected():
    module = _parse_with_test_ops(_barrier_under('%v = "kernel.test_lane_id"() : () -> index'))
    with pytest.raises(
        VerifyException,
        match="inside an scf.if whose condition depends on kernel.test_lane_id",
    ):
        module.verify()


def test_a_new_uniform_op_around_a_barrier_is_accepted():
    module = _parse_with_test_ops(_barrier_under('%v = "kernel.test_warp_count"() : () -> index'))
    module.verify()
    function = module.body.block.first_op
    assert {source for source in thread_dependent_values(function.body).values()} == {
        "kernel.thread_id"
    }


def test_thread_dependence_follows_only_the_operands_an_op_names():
    uniform = '%w = "kernel.test_warp_count"() : () -> index'
    follows_uniform = f'{uniform}\n%v = "kernel.test_pick"(%w, %t) : (index, index) -> index'
    _parse_with_test_ops(_barrier_under(follows_uniform)).verify()
    follows_thread = f'{uniform}\n%v = "kernel.test_pick"(%t, %w) : (index, index) -> index'
    with pytest.raises(VerifyException, match="depends on kernel.thread_id"):
        _parse_with_test_ops(_barrier_under(follows_thread)).verify()


def test_an_op_without_thread_facts_follows_all_its_operands():
    # arith declares nothing: a sum with the thread id differs between threads.
    module = _parse_with_test_ops(
        _barrier_under(
            '%w = "kernel.test_warp_count"() : () -> index\n%v = arith.addi %w, %t : index'
        )
    )
    with pytest.raises(VerifyException, match="depends on kernel.thread_id"):
        module.verify()


# --- how prim ops make their elements ----------------------------------------------------------


@pytest.mark.parametrize("op_type", _ops_of(prim.Prim), ids=lambda o: o.name)
def test_every_prim_op_declares_one_fusion_class(op_type):
    traits = list(op_type.get_irdl_definition().traits)
    classes = [t for t in traits if isinstance(t, prim.FusionClass)]
    if any(isinstance(t, IsTerminator) for t in traits):
        assert not classes
        return
    assert len(classes) == 1, f"{op_type.name} declares {classes}"


@pytest.mark.parametrize(
    "source, target, runs",
    [
        ([4, 6], [2, 2, 6], [([0], [0, 1]), ([1], [2])]),
        ([2, 3, 4], [6, 4], [([0, 1], [0]), ([2], [1])]),
        ([2, 3, 4], [24], [([0, 1, 2], [0])]),
        ([4, 1], [4], [([0], [0]), ([1], [])]),
        ([4], [1, 4, 1], [([0], [0, 1]), ([], [2])]),
        ([6, 4], [4, 6], [([0, 1], [0, 1])]),
    ],
)
def test_reshape_runs_pair_up_dims_with_equal_products(source, target, runs):
    found = [(list(s), list(t)) for s, t in prim.reshape_runs(source, target)]
    assert found == runs


class _Integers:
    """The index algebra on plain integers, with the operand values of one program."""

    def __init__(self, values: dict):
        self.values = values

    def constant(self, value: int) -> int:
        return value

    def add(self, lhs: int, rhs: int) -> int:
        return lhs + rhs

    def mul(self, lhs: int, factor: int) -> int:
        return lhs * factor

    def div_mod(self, lhs: int, divisor: int, modulus: int) -> int:
        return lhs // divisor % modulus if modulus else lhs // divisor

    def index_at(self, value, index) -> int:
        return int(self.values[value][tuple(index)])

    def one_element(self, index: int) -> int:
        return index


VIEWS = [
    ("prim.broadcast %x : tensor<3x1xf32> -> tensor<2x3x4xf32>", (3, 1)),
    ("prim.permute %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>", (2, 3, 4)),
    ("prim.reshape %x : tensor<4x6xf32> -> tensor<2x2x3x2xf32>", (4, 6)),
    ("prim.reshape %x : tensor<2x1x6x4xf32> -> tensor<3x4x4x1xf32>", (2, 1, 6, 4)),
    ("prim.slice %x dim 1 start 1 step 2 : tensor<3x8xf32> -> tensor<3x3xf32>", (3, 8)),
    ("prim.gather %x[%i] : tensor<5x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>", (5, 4)),
]


@pytest.mark.parametrize("view, shape", VIEWS, ids=[view.split()[0] for view, _ in VIEWS])
def test_each_view_index_map_picks_the_element_numpy_computes(view, shape):
    """Every element of the view, by its index map on integers, equals the prim interpreter's
    (numpy's) result: the index map is the one source both fusion passes read."""
    signature = f"%x: tensor<{'x'.join(map(str, shape))}xf32>"
    if "%i" in view:
        signature += ", %i: tensor<2x3xi64>"
    result_type = view.rsplit("-> ", 1)[1]
    text = f"""
    func.func @forward({signature}) -> {result_type} {{
      %r = {view}
      func.return %r : {result_type}
    }}
    """
    module = Parser(make_context(), text).parse_module()
    module.verify()
    function = module.body.block.first_op
    op = function.body.block.first_op
    rng = np.random.default_rng(0)
    arguments = [rng.standard_normal(shape).astype(np.float32)]
    if "%i" in view:
        arguments.append(rng.integers(0, 5, (2, 3)))
    (expected,) = run_module(module, arguments)
    values = dict(zip(function.body.block.args, arguments))
    view_trait = prim.fusion_class(op)
    assert isinstance(view_trait, prim.View)
    for index in np.ndindex(*expected.shape):
        source, source_index = view_trait.index_map(op, index, _Integers(values))
        assert values[source][tuple(source_index)] == expected[index]


@irdl_op_definition
class ReverseOp(IRDLOperation):
    """`prim.test_reverse`: the rows of a matrix in reverse order, a view no pass knows by name."""

    name = "prim.test_reverse"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(),
        prim.View(
            lambda op, index, algebra: (
                op.input,
                (
                    algebra.add(
                        algebra.mul(index[0], -1),
                        algebra.constant(op.input.type.get_shape()[0] - 1),
                    ),
                    *index[1:],
                ),
            )
        ),
    )


@irdl_op_definition
class UnclassifiedOp(IRDLOperation):
    """A prim op that does not say how its elements are made."""

    name = "prim.test_unclassified"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())


def _prim_program(op_name: str) -> ModuleOp:
    context = make_context()
    context.load_op(ReverseOp)
    context.load_op(UnclassifiedOp)
    text = f"""
    func.func @forward(%x: tensor<6x8xf32>) -> tensor<6xf32> {{
      %r = "{op_name}"(%x) : (tensor<6x8xf32>) -> tensor<6x8xf32>
      %e = prim.map(%r) : (tensor<6x8xf32>) -> tensor<6x8xf32> {{
      ^bb0(%v: f32):
        %s = math.exp %v : f32
        prim.yield %s : f32
      }}
      %m = prim.reduce add %e axes [1] init 0.0 : tensor<6x8xf32> -> tensor<6xf32>
      func.return %m : tensor<6xf32>
    }}
    """
    module = Parser(context, text).parse_module()
    module.verify()
    return module


def test_a_new_view_is_fused_and_lowered_through_its_index_map():
    module = _prim_program("prim.test_reverse")
    FusePrimsPass().apply(make_context(), module)
    kernels = [op for op in module.walk() if isinstance(op, fused.KernelOp)]
    assert len(kernels) == 1  # the view is copied into the reduction's kernel
    LowerFusedToLoopPass().apply(make_context(), module)
    module.verify()
    x = np.random.default_rng(1).standard_normal((6, 8)).astype(np.float32)
    (got,) = run_module(module, [x])
    np.testing.assert_allclose(got, np.exp(x[::-1]).sum(1), rtol=1e-6)


def test_a_prim_op_without_a_fusion_class_is_an_error_of_fuse_prims():
    module = _prim_program("prim.test_unclassified")
    with pytest.raises(PassFailedException, match="declares no fusion class"):
        FusePrimsPass().apply(make_context(), module)


# --- the one dtype table -----------------------------------------------------------------------


@pytest.mark.parametrize("row", dtypes.ELEMENT_TYPES, ids=lambda row: str(row.type))
def test_each_element_type_has_one_size_in_every_library(row):
    bits = 64 if isinstance(row.type, IndexType) else row.type.bitwidth
    assert row.bytes == max(1, bits // 8)
    assert row.bytes & (row.bytes - 1) == 0  # the swizzle of shared buffers relies on it
    assert dtypes.torch_dtype(row.type).itemsize == row.bytes
    if row.numpy is not None:
        assert np.dtype(row.numpy).itemsize == row.bytes
    assert numpy_dtype(row.type).itemsize == (4 if row.type == bf16 else row.bytes)
    if not isinstance(row.type, IndexType):
        assert dtypes.from_torch_dtype(dtypes.torch_dtype(row.type)) == row.type


def test_torch_int64_is_imported_as_i64_and_index_runs_as_int64():
    import torch

    assert dtypes.from_torch_dtype(torch.int64) == i64
    assert dtypes.torch_dtype(IndexType()) == torch.int64
    assert dtypes.from_torch_dtype(torch.complex64) is None


def test_the_interpreter_does_not_import_the_frontend():
    code = (
        "import sys, emmy.tools.interpreter.run, emmy.tools.interpreter.torch_ops\n"
        "print(sorted(m for m in sys.modules if m.startswith('emmy.tools.frontend')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
