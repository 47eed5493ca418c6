"""Facts declared on ops drive the analyses that read them.

Every op of the loop, tile and kernel dialects says how it touches memory (memory-effect traits
that name the operand), so the buffers a kernel writes are what its ops say they write: a new
op that writes a buffer makes it non-const and non-aliasable without any analysis learning its
name, and an op that declares nothing is taken to write every buffer it is given.
"""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp, f32
from xdsl.ir import Block, Region
from xdsl.irdl import (
    ConstraintContext,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.traits import (
    MemoryEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from emmy.dialects import kernel, loop, make_context, tile
from emmy.dialects.effects import (
    ReadsOperand,
    WritesOperand,
    operand_values,
    written_values,
)
from emmy.dialects.threads import ThreadDependsOn, ThreadVarying, thread_dependent_values
from emmy.tools.cuda.target import print_cuda

BUFFER = MemRefType(f32, [64])


def _ops_of(*dialects) -> list[type[IRDLOperation]]:
    return [op for dialect in dialects for op in dialect.operations]


def _may_take_memref(op_type: type[IRDLOperation]) -> bool:
    """Whether some operand of the op's definition accepts a memref."""
    for _, definition in op_type.get_irdl_definition().operands:
        try:
            definition.constr.verify((BUFFER,), ConstraintContext())
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
    assert kernel.written_arguments(function) == {1}
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


def test_the_launch_aliasing_check_reads_the_declared_write():
    function = _kernel_with(lambda args: [FillOp(operands=[args[0], args[1]])])
    module = function.parent_op()
    host = Block(arg_types=[BUFFER])
    (x,) = host.args
    host.add_op(kernel.LaunchOp("k", [x, x], [1, 1, 1], [32, 1, 1]))
    host.add_op(func.ReturnOp())
    module.body.block.add_op(func.FuncOp("forward", ([BUFFER], []), Region(host)))
    with pytest.raises(VerifyException, match="which writes one of them"):
        host.first_op.verify()


def test_a_read_only_new_op_leaves_launch_arguments_free_to_alias():
    @irdl_op_definition
    class ReadOp(IRDLOperation):
        name = "kernel.test_read"
        source = operand_def(MemRefType)
        traits = traits_def(ReadsOperand("source"))

    function = _kernel_with(lambda args: [ReadOp(operands=[args[0]]), ReadOp(operands=[args[1]])])
    assert written_values(function) == set()
    assert kernel.written_arguments(function) == set()


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
