"""The `cuda` target: its CUDA compiles with nvcc without errors or warnings, is deterministic,
and what it cannot print is a located error.

Every RUN line of test/Target/CUDA/*.mlir that prints CUDA, and the hand-written kernels of
test/Dialect/kernel/ops.mlir, are compiled with `nvcc -arch=sm_90a -cubin --Werror all-warnings`
(skipped, saying so, where nvcc is absent).
"""

from __future__ import annotations

import math
import os
import re
import shlex
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from emmy.dialects import kernel, make_context
from emmy.tools.cuda.target import CudaTarget, CudaTargetError, _round_to_format, print_cuda
from emmy.tools.opt import main

TEST_ROOT = Path(__file__).resolve().parents[1]
TARGET_TESTS = sorted((TEST_ROOT / "Target" / "CUDA").glob("*.mlir"))
KERNEL_OPS = TEST_ROOT / "Dialect" / "kernel" / "ops.mlir"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(
    NVCC is None, reason="nvcc is not on PATH, so the CUDA cannot be compiled"
)


def _cuda_runs() -> list[tuple[str, Path, list[str]]]:
    """(id, input, emmy-opt arguments) for each RUN line that prints CUDA."""
    runs = []
    for path in TARGET_TESTS:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = re.match(r"//\s*RUN:\s*(.*)", line)
            if match is None:
                continue
            command = shlex.split(match.group(1).split("|")[0])
            if command[0] != "emmy-opt":  # `not emmy-opt ...`: an expected failure
                continue
            args = [str(path) if word == "%s" else word for word in command[1:]]
            runs.append((f"{path.stem}:{number}", path, args))
    runs.append(("kernel-ops", KERNEL_OPS, [str(KERNEL_OPS), "-t", "cuda"]))
    return runs


RUNS = _cuda_runs()


def emmy_opt(args: list[str]) -> str:
    with redirect_stdout(StringIO()) as out, redirect_stderr(StringIO()) as err:
        status = main(args)
    assert status == 0, f"emmy-opt {' '.join(args)} failed:\n{err.getvalue()}"
    return out.getvalue()


def nvcc_compile(source: str, tmp_path: Path, *, ptxas_report: bool = False) -> str:
    """Compiles `source` for sm_90a with every warning an error and nothing else printed.
    The `-gencode` form names the one architecture: nvcc 13's `-arch=sm_90a` shorthand also
    runs a plain sm_90 pass, which rejects wgmma. With `ptxas_report`, returns ptxas's report
    of each kernel's registers, stack frame and spills (its only allowed output)."""
    path = tmp_path / "kernels.cu"
    path.write_text(source)
    command = [
        NVCC,
        "-gencode=arch=compute_90a,code=sm_90a",
        "-cubin",
        "--Werror",
        "all-warnings",
        *(["-Xptxas", "-v"] if ptxas_report else []),
        "-o",
        str(tmp_path / "kernels.cubin"),
        str(path),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    lines = (result.stdout + result.stderr).strip().splitlines()
    report = [line for line in lines if ptxas_report and _is_ptxas_report(line)]
    unexpected = "\n".join(line for line in lines if line not in report)
    assert result.returncode == 0 and not unexpected, (
        f"{' '.join(command)}:\n{unexpected}\n--- source ---\n{source}"
    )
    return "\n".join(report)


def _is_ptxas_report(line: str) -> bool:
    # `ptxas info    : ...` lines, and the indented stack/spill line under each function; not
    # its note that a call serialises a kernel's wgmmas (C7510), which emmy never prints.
    if "(C7510)" in line:
        return False
    return line.startswith("ptxas info") or line.startswith("    ")


def test_every_target_test_is_compiled():
    assert len(RUNS) >= len(TARGET_TESTS), (
        "each test/Target/CUDA file has a RUN line that prints CUDA"
    )
    assert any("fast-math=true" in " ".join(args) for _, _, args in RUNS)


@needs_nvcc
@pytest.mark.parametrize("path,args", [(p, a) for _, p, a in RUNS], ids=[i for i, _, _ in RUNS])
def test_printed_cuda_compiles_without_warnings(path: Path, args: list[str], tmp_path: Path):
    source = emmy_opt(args)
    assert "__global__" in source
    nvcc_compile(source, tmp_path)


@pytest.mark.parametrize("path,args", [(p, a) for _, p, a in RUNS], ids=[i for i, _, _ in RUNS])
def test_printing_twice_gives_identical_cuda(path: Path, args: list[str]):
    assert emmy_opt(args) == emmy_opt(args)


def test_cuda_does_not_depend_on_the_hash_seed():
    """Sets and dicts must not order the output: two processes with different hash seeds."""
    path = TEST_ROOT / "Target" / "CUDA" / "atomics.mlir"
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        command = [
            sys.executable,
            "-c",
            "import sys; from emmy.tools.opt import main; sys.exit(main(sys.argv[1:]))",
        ]
        result = subprocess.run(
            [*command, str(path), "-t", "cuda"], capture_output=True, text=True, env=env
        )
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]


def parse(text: str):
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def test_print_cuda_is_the_target():
    module = parse(KERNEL_OPS.read_text())
    stream = StringIO()
    CudaTarget(fast_math=True).emit(make_context(), module, stream)
    assert stream.getvalue() == print_cuda(module, fast_math=True)
    assert stream.getvalue() != print_cuda(module)


SWIZZLED_STAGES = """
kernel.func @k(%y: memref<8x32xf32>) block [32, 1, 1] {
  %column = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %stage = arith.remui %column, %c3 : index
  %row = arith.remui %column, %c8 : index
  %tiles = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<SPAN>} : TILES
  %v = memref.load %tiles[%stage, %c0, %row, %column] : TILES
  %w = arith.extf %v : ELEMENT to f32
  memref.store %w, %y[%row, %column] : memref<8x32xf32>
}
"""


@pytest.mark.parametrize("span", [32, 64, 128])
@pytest.mark.parametrize("element", ["bf16", "f32"])
def test_a_swizzled_index_adds_whole_periods_outside_the_swizzle(span: int, element: str):
    """The part of a swizzled shared index that is whole periods of the swizzle's pattern (a
    stage of a ring) is added outside `emmy_swizzle`, which then takes the same value in
    every stage; the printed index is the swizzle of the whole index at every element."""
    tiles = f"memref<3x2x8x64x{element}, 3 : i32>"
    text = SWIZZLED_STAGES.replace("SPAN", str(span)).replace("TILES", tiles)
    text = text.replace("ELEMENT", element)
    if element == "f32":
        text = text.replace("%w = arith.extf %v : f32 to f32", "%w = arith.addf %v, %v : f32")
    source = print_cuda(parse(text))
    (index,) = re.findall(r"tiles\[(.*)\];", source)
    assert index.startswith("stage * 1024 + ") and "emmy_swizzle(" in index, index
    assert "stage" not in index[index.index("emmy_swizzle(") :], index
    permutation = kernel.SwizzleAttr(span).element_permutation(2 if element == "bf16" else 4)

    def emmy_swizzle(i: int, shift: int, mask: int, chunk_shift: int) -> int:
        return i ^ (((i >> shift) & mask) << chunk_shift)

    for stage in range(3):
        for row in range(8):
            for column in range(64):
                printed = eval(index, {"emmy_swizzle": emmy_swizzle}, locals())
                flat = stage * 1024 + row * 64 + column
                assert printed == emmy_swizzle(flat, *permutation), (stage, row, column)


def test_the_host_function_is_not_printed():
    source = print_cuda(parse(KERNEL_OPS.read_text()))
    assert "forward" not in source and "launch_parameters" not in source
    assert "launch_hopper" not in source and "launch_cluster" not in source
    assert "launch_dynamic" not in source
    assert source.count("__global__") == 15
    assert "the host function" in source.splitlines()[1]


def test_an_unsupported_op_is_an_error_naming_it():
    module = parse(
        """
        kernel.func @k(%x: memref<32xi32>) block [32, 1, 1] {
          %t = kernel.thread_id x
          %v = memref.load %x[%t] : memref<32xi32>
          %p = math.ctpop %v : i32
          memref.store %p, %x[%t] : memref<32xi32>
        }
        """
    )
    with pytest.raises(CudaTargetError, match="cannot print 'math.ctpop'") as raised:
        print_cuda(module)
    assert raised.value.op.name == "math.ctpop"


def test_target_errors_are_located_and_bad_options_rejected(tmp_path: Path):
    path = tmp_path / "bad.mlir"
    path.write_text(
        "kernel.func @k(%x: memref<32xf32>) block [32, 1, 1] {\n"
        "  %t = kernel.thread_id x\n"
        "  %v = memref.load %x[%t] : memref<32xf32>\n"
        "  %n = arith.constant 2 : i32\n"
        "  %p = math.fpowi %v, %n : f32, i32\n"
        "  memref.store %p, %x[%t] : memref<32xf32>\n"
        "}\n"
    )
    with redirect_stdout(StringIO()) as out, redirect_stderr(StringIO()) as err:
        assert main([str(path), "-t", "cuda"]) == 1
    assert (
        f"{path}:5:3: error: target 'cuda' failed: the cuda target cannot print 'math.fpowi'"
        in err.getvalue()
    )
    assert "__global__" not in out.getvalue()
    with redirect_stdout(StringIO()), redirect_stderr(StringIO()) as err:
        assert main([str(path), "-t", "cuda{fastmath=true}"]) == 1
    assert "bad options for target 'cuda'" in err.getvalue()


# --- literals ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_f16_rounding_matches_numpy(seed: int):
    rng = np.random.default_rng(seed)
    values = np.concatenate(
        [
            rng.standard_normal(2000) * 10.0 ** rng.integers(-9, 6, 2000),
            [65504.0, 65519.99, 65520.0, 1e9, 5.96e-8, 2.9e-8, 3e-8, -0.0, 0.1, 1 / 3],
        ]
    )
    for value in values:
        with np.errstate(over="ignore"):
            expected = float(np.float16(value))
        assert _round_to_format(float(value), 10, -14, 15) == expected or (
            math.isnan(expected) and math.isnan(_round_to_format(float(value), 10, -14, 15))
        ), value


def test_bf16_rounding_is_to_nearest_even():
    one_ulp = 2.0**-7
    assert _round_to_format(1.0 + one_ulp / 2, 7, -126, 127) == 1.0  # a tie rounds to even
    assert _round_to_format(1.0 + 3 * one_ulp / 2, 7, -126, 127) == 1.0 + 2 * one_ulp
    assert _round_to_format(1.0 + one_ulp / 2 + 2.0**-40, 7, -126, 127) == 1.0 + one_ulp
    assert _round_to_format(-1.01, 7, -126, 127) == -1.0078125
    assert _round_to_format(3.4e38, 7, -126, 127) == math.inf


def test_constants_are_exact():
    source = print_cuda(
        parse(
            """
            kernel.func @k(%x: memref<8xf32>, %h: memref<8xf16>, %d: memref<8xf64>) block
                [32, 1, 1] {
              %c0 = arith.constant 0 : index
              %a = arith.constant 0.1 : f32
              %b = arith.constant 16777217.0 : f32
              %n = arith.constant 0x7FC00000 : f32
              %h0 = arith.constant 0.1 : f16
              %d0 = arith.constant 0.1 : f64
              memref.store %a, %x[%c0] : memref<8xf32>
              %c1 = arith.constant 1 : index
              memref.store %b, %x[%c1] : memref<8xf32>
              %c2 = arith.constant 2 : index
              memref.store %n, %x[%c2] : memref<8xf32>
              memref.store %h0, %h[%c0] : memref<8xf16>
              memref.store %d0, %d[%c0] : memref<8xf64>
            }
            """
        )
    )
    assert "x[0] = 0.1f;" in source
    assert "x[1] = 16777216.0f;" in source  # the f32 nearest to 16777217
    assert "x[2] = __int_as_float(0x7fc00000);" in source
    assert "h[0] = __float2half_rn(0.099975586f);" in source
    assert "d[0] = 0.1;" in source


@needs_nvcc
def test_every_corpus_and_suite_kernel_compiles(tmp_path: Path):
    """The CUDA of every differential-corpus program (fp32 and bf16) and of every memory-bound
    suite program at its shapes compiles for sm_90a without warnings."""
    from concurrent.futures import ThreadPoolExecutor

    from corpus import PROGRAMS, with_dtype

    from emmy.tools.bench.differential import lower
    from emmy.tools.bench.suites import SUITES
    from emmy.tools.frontend.program import load_program

    sources = {
        f"{name}-{dtype}": with_dtype(text, dtype)
        for name, text in PROGRAMS.items()
        for dtype in ("float32", "bfloat16")
    }
    for case in SUITES["memory-bound"]:
        sources[f"suite-{case.name.replace(' ', '-')}"] = with_dtype(case.source, case.dtype)

    # torch.export is not thread-safe: lower in this thread, run nvcc in parallel.
    cuda = {
        key: print_cuda(lower(load_program(text, f"<{key}>").to_torch_ir(), "kernel"))
        for key, text in sorted(sources.items())
    }

    def compile_one(item: tuple[str, str]) -> str | None:
        key, source = item
        directory = tmp_path / key
        directory.mkdir()
        try:
            nvcc_compile(source, directory)
        except AssertionError as error:
            return f"{key}: {error}"
        return None

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        failures = [f for f in pool.map(compile_one, cuda.items()) if f]
    assert len(sources) >= 2 * 25 + 36
    assert not failures, "\n\n".join(failures)


TRIGONOMETRIC_FUNCTIONS = (
    "tanf",
    "atanf",
    "asinf",
    "acosf",
    "sinhf",
    "coshf",
    "asinhf",
    "acoshf",
    "atanhf",
    "atan2f",
    "sqrtf",  # hypot's
)
"""CUDA's f32 functions that torch's tan, ..., atanh, atan2 and hypot print as."""


def trigonometric_cuda(dtype: str, fast_math: bool) -> str:
    """The CUDA of the corpus program of every trigonometric and hyperbolic op in `dtype`."""
    from corpus import source

    from emmy.tools.bench.differential import lower
    from emmy.tools.frontend.program import load_program

    program = load_program(source("trigonometric_hyperbolic", dtype), "<trigonometric>")
    return print_cuda(lower(program.to_torch_ir(), "kernel"), fast_math=fast_math)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_trigonometric_and_hyperbolic_ops_print_as_f32_functions(dtype: str):
    """Each op is its precise f32 function, on 16-bit floats too (widened to f32, as sin
    is): fast-math's only approximation among them is `__tanf`."""
    for fast_math in (False, True):
        source = trigonometric_cuda(dtype, fast_math)
        for function in TRIGONOMETRIC_FUNCTIONS:
            if fast_math and function == "tanf":
                function = "__tanf"
            assert re.search(rf"\bfloat \w+ = {function}\(", source), (function, fast_math)
        assert ("__tanf(" in source) == fast_math


@needs_nvcc
@pytest.mark.parametrize("fast_math", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_trigonometric_and_hyperbolic_kernels_compile(dtype: str, fast_math: bool, tmp_path):
    nvcc_compile(trigonometric_cuda(dtype, fast_math), tmp_path)


HOPPER_GEMM = TEST_ROOT / "Target" / "CUDA" / "hopper.mlir"
HOPPER_OPS = (
    kernel.MbarrierAllocOp,
    kernel.MbarrierInitOp,
    kernel.MbarrierArriveOp,
    kernel.MbarrierArriveExpectTxOp,
    kernel.MbarrierWaitOp,
    kernel.TmaLoadOp,
    kernel.FenceProxyAsyncOp,
    kernel.WgmmaFenceOp,
    kernel.WgmmaCommitOp,
    kernel.WgmmaOp,
    kernel.WgmmaWaitOp,
    kernel.SetmaxnregOp,
)


@needs_nvcc
def test_a_warp_specialised_hopper_kernel_compiles_to_tma_and_wgmma(tmp_path: Path):
    """One producer warpgroup issues TMA loads on full mbarriers and waits on empty ones; two
    consumer warpgroups wait on full ones, run four wgmma m64n256k16 between a fence, a commit
    and a wait, and arrive on empty ones; setmaxnreg moves registers between them. The kernel
    compiles for sm_90a, and its SASS has the tensor-memory loads and warpgroup MMAs (where
    cuobjdump is there to show it)."""
    module = parse(HOPPER_GEMM.read_text())
    ops = list(module.walk())
    assert all(any(isinstance(op, op_type) for op in ops) for op_type in HOPPER_OPS)
    wgmmas = [op for op in ops if isinstance(op, kernel.WgmmaOp)]
    assert [op.shape_name for op in wgmmas] == ["m64n256k16"] * 4
    source = print_cuda(module)
    assert "__launch_bounds__(384, 1)" in source
    assert "const __grid_constant__ emmy_CUtensorMap amap" in source
    report = nvcc_compile(source, tmp_path, ptxas_report=True)
    assert "0 bytes spill stores" in report, report
    cuobjdump = shutil.which("cuobjdump")
    if cuobjdump is None:
        return
    sass = subprocess.run(
        [cuobjdump, "-sass", str(tmp_path / "kernels.cubin")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "HGMMA.64x256x16.F32.BF16" in sass
    assert "UTMALDG.2D" in sass
    assert "SYNCS" in sass  # the mbarrier operations


GATHER_IN_A_WGMMA_EPILOGUE = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(256, 256, bias=False)
        self.emb = nn.Embedding(100, 256)

    def forward(self, x, ids):
        return self.lin(x) + self.emb(ids)

x = torch.randn(256, 256, dtype=torch.bfloat16)
Model().to(torch.bfloat16)(x, torch.randint(0, 100, (256,)))
"""


@needs_nvcc
def test_a_gathered_index_in_a_wgmma_kernel_traps_without_serialising_its_wgmmas(tmp_path):
    """An embedding looked up by the user's ids in a wgmma GEMM's epilogue checks each id in
    line (a trap), not by calling the device assert: ptxas serialises a kernel's wgmmas
    across a call (C7510, which `nvcc_compile` refuses)."""
    from emmy.tools.bench.differential import lower
    from emmy.tools.frontend.program import load_program

    kernel_ir = lower(load_program(GATHER_IN_A_WGMMA_EPILOGUE, "<x>").to_torch_ir(), "kernel")
    source = print_cuda(kernel_ir)
    assert "kernel.wgmma" in str(kernel_ir)
    assert re.search(r"emmy_trap_index\(v\d+, 100\);", source)
    assert "emmy_check_index(v" not in source
    nvcc_compile(source, tmp_path, ptxas_report=True)
