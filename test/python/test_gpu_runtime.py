"""The GPU runtime (`emmy.tools.runtime`) and the timing harness (`emmy.tools.bench.timing`).

Without a GPU: compiling to cubins (nvcc, and NVRTC where its library loads), the disk cache,
compile errors, reading and checking host functions, argument packing, the statistics and the
reports. With one (tests marked `gpu`, skipped elsewhere): kernels launched on torch tensors
against PyTorch, launch errors, the timeout of a spinning kernel, host functions and
bench_program."""

from __future__ import annotations

import ctypes
import dataclasses
import datetime
import json
import logging
import math
import sys
import time
import warnings

import numpy as np
import pytest
import torch
import torch.nn as nn
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import emmy
from emmy.dialects import make_context
from emmy.dialects.target import TARGETS, TargetAttr
from emmy.passes import lower_tile_to_kernel
from emmy.tools.bench import timing as bench
from emmy.tools.cuda.target import print_cuda
from emmy.tools.runtime import compile as compiling
from emmy.tools.runtime import driver, host
from emmy.tools.runtime.compile import CudaCompileError, CudaError, compile_cuda
from emmy.tools.runtime.cubin_cache import entry_cubin
from emmy.tools.runtime.driver import (
    CudaLaunchError,
    CudaModule,
    CudaTimeoutError,
    synchronize,
    target_from_attributes,
)
from emmy.tools.runtime.host import HostFunctionError, HostProgram, run_host_function

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
needs_nvcc = pytest.mark.skipif(compiling.nvcc_version() is None, reason="needs nvcc on PATH")
needs_nvrtc = pytest.mark.skipif(
    compiling.nvrtc_version() is None, reason="the NVRTC library (libnvrtc) does not load here"
)
COMPILERS = [
    pytest.param("nvrtc", marks=needs_nvrtc),
    pytest.param("nvcc", marks=needs_nvcc),
]

KERNELS = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void vadd(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

extern "C" __global__ void vadd_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b,
                                     __nv_bfloat16* out, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16(__bfloat162float(a[i]) + __bfloat162float(b[i]));
}

extern "C" __global__ void scale(const float* x, float* out, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * factor;
}

// One block per row: out = x * rsqrt(mean(x^2) + eps) * w.
extern "C" __global__ void rms_norm(const float* __restrict__ x, const float* __restrict__ w,
                                    float* __restrict__ out, int cols, float eps) {
  __shared__ float warp_sums[32];
  const float* row = x + (size_t)blockIdx.x * cols;
  float sum = 0.f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) sum += row[j] * row[j];
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    float s = threadIdx.x < (blockDim.x >> 5) ? warp_sums[threadIdx.x] : 0.f;
    for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
    if (threadIdx.x == 0) warp_sums[0] = s;
  }
  __syncthreads();
  float inv = rsqrtf(warp_sums[0] / cols + eps);
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    out[(size_t)blockIdx.x * cols + j] = row[j] * inv * w[j];
}

// Reverses each block's slice through dynamic shared memory (over 48 KiB of it).
extern "C" __global__ void reverse_blocks(const float* x, float* out, int per_block) {
  extern __shared__ float staged[];
  const float* in = x + (size_t)blockIdx.x * per_block;
  for (int j = threadIdx.x; j < per_block; j += blockDim.x) staged[j] = in[j];
  __syncthreads();
  for (int j = threadIdx.x; j < per_block; j += blockDim.x)
    out[(size_t)blockIdx.x * per_block + j] = staged[per_block - 1 - j];
}

extern "C" __global__ void spin(volatile int* flag, int* done) {
  while (*flag) {}
  *done = 1;
}
"""

BROKEN = r"""
extern "C" __global__ void fine(float* x) { x[0] = 1.0f; }

extern "C" __global__ void __launch_bounds__(128) broken(float* x) {
  x[0] = undefined_value;
}
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Every test compiles into its own cache directory."""
    monkeypatch.setenv("EMMY_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def compile_counter(monkeypatch):
    """Counts the compiler runs behind compile_cuda (cache misses)."""
    calls = []
    real = compiling._compile_uncached

    def counting(source, arch, compiler, flags, timeout_s):
        calls.append((arch, compiler))
        return real(source, arch, compiler, flags, timeout_s)

    monkeypatch.setattr(compiling, "_compile_uncached", counting)
    return calls


# --- compiling -----------------------------------------------------------------------------


@pytest.mark.parametrize("compiler", COMPILERS)
def test_compiles_a_cubin(compiler):
    cubin = compile_cuda(KERNELS, "sm_90a", compiler=compiler)
    assert cubin[:4] == b"\x7fELF"
    assert b"vadd_bf16" in cubin and b"rms_norm" in cubin


@needs_nvrtc
def test_nvrtc_leaves_python_objects_alone():
    # NVRTC writes its log and cubin into buffers: once, an empty log (1 byte) went into
    # CPython's shared one-byte b" " and made it b"\0" for the whole process (f-strings
    # compiled afterwards on Python 3.12 lost their spaces).
    compile_cuda(
        'extern "C" __global__ void k(float* x) { x[0] = 1.0f; }', compiler="nvrtc", use_cache=False
    )
    assert bytes([32])[0] == 32 and bytes([0x7F])[0] == 0x7F


def test_cuda_headers_are_found():
    found = compiling.cuda_include_dir()
    if found is None:
        pytest.skip("no CUDA toolkit headers on this machine")
    directory, how = found
    assert compiling._has_headers(directory), how


def test_cuda_home_comes_first(tmp_path, monkeypatch):
    include = tmp_path / "toolkit" / "include"
    include.mkdir(parents=True)
    for header in ("cuda_fp16.h", "cuda_bf16.h"):
        (include / header).write_text("")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    compiling.cuda_include_dir.cache_clear()
    try:
        assert compiling.cuda_include_dir() == (str(include), "$CUDA_HOME")
    finally:
        monkeypatch.undo()
        compiling.cuda_include_dir.cache_clear()


@pytest.mark.parametrize("compiler", COMPILERS)
def test_second_compile_hits_the_disk_cache(compiler, compile_counter, tmp_path):
    first = compile_cuda(KERNELS, "sm_90a", compiler=compiler)
    second = compile_cuda(KERNELS, "sm_90a", compiler=compiler)
    assert first == second
    assert compile_counter == [("sm_90a", compiler)]
    cached = list((tmp_path / "cache" / "cubin").glob("*.entry"))
    assert len(cached) == 1 and entry_cubin(cached[0].read_bytes()) == first
    assert cached[0].with_suffix(".cu").read_text() == KERNELS


@pytest.mark.parametrize("compiler", COMPILERS)
def test_cache_misses_on_another_arch_source_or_option(compiler, compile_counter):
    compile_cuda(KERNELS, "sm_90a", compiler=compiler)
    compile_cuda(KERNELS, "sm_90", compiler=compiler)
    compile_cuda(KERNELS + "\n// changed\n", "sm_90a", compiler=compiler)
    compile_cuda(KERNELS, "sm_90a", compiler=compiler, options=["-lineinfo"])
    assert len(compile_counter) == 4
    compile_cuda(KERNELS, "sm_90", compiler=compiler)
    assert len(compile_counter) == 4


@needs_nvcc
def test_cache_can_be_bypassed(compile_counter, tmp_path):
    compile_cuda(KERNELS, compiler="nvcc", use_cache=False)
    compile_cuda(KERNELS, compiler="nvcc", use_cache=False)
    assert len(compile_counter) == 2
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("compiler", COMPILERS)
def test_compile_error_names_the_kernel_and_keeps_the_log(compiler):
    with pytest.raises(CudaCompileError) as caught:
        compile_cuda(BROKEN, compiler=compiler)
    error = caught.value
    assert error.kernels == ["broken"]
    assert "undefined_value" in error.log and "emmy.cu(5)" in error.log
    assert "in kernel broken" in str(error) and "undefined_value" in str(error)
    assert (error.arch, error.compiler) == ("sm_90a", compiler)


@pytest.mark.parametrize("compiler", COMPILERS)
def test_compile_error_outside_kernels(compiler):
    with pytest.raises(CudaCompileError) as caught:
        compile_cuda(
            '#include "no_such_header.h"\n' + BROKEN.replace("undefined_value", "1"),
            compiler=compiler,
        )
    assert caught.value.kernels == []
    assert "outside any __global__ function" in str(caught.value)


def test_failed_compiles_are_not_cached(compile_counter):
    compiler = compiling.available_compiler()
    for _ in range(2):
        with pytest.raises(CudaCompileError):
            compile_cuda(BROKEN, compiler=compiler)
    assert len(compile_counter) == 2


@needs_nvcc
def test_nvcc_stands_in_when_nvrtc_is_missing(monkeypatch, compile_counter):
    monkeypatch.setattr(compiling, "nvrtc_version", lambda: None)
    assert compiling.available_compiler() == "nvcc"
    assert compile_cuda(KERNELS)[:4] == b"\x7fELF"
    assert compile_counter == [("sm_90a", "nvcc")]
    with pytest.raises(CudaError, match="NVRTC is not available"):
        compile_cuda(KERNELS, compiler="nvrtc")


def test_kernel_definitions_and_log_lines():
    source = (
        'extern "C" __global__ void a(int* x) {}\n'
        'extern "C" __global__ __launch_bounds__(256, 1) void b(int* x)\n{\n}\n'
        "__global__ void __launch_bounds__(64) c(int* x) {}\n"
    )
    assert compiling.kernel_definitions(source) == [(1, "a"), (2, "b"), (5, "c")]
    log = "emmy.cu(3): error: bad\nemmy.cu(5): error: worse\nemmy.cu(4): error: again\n"
    assert compiling.kernels_in_log(source, log) == ["b", "c"]
    ptxas = "ptxas error   : Entry function 'a' uses too much shared data (0x10000 bytes)"
    assert compiling.kernels_in_log(source, ptxas) == ["a"]


def test_bad_arch_and_compiler_names():
    with pytest.raises(ValueError, match="arch"):
        compile_cuda(KERNELS, "90a")
    with pytest.raises(ValueError, match="compiler"):
        compile_cuda(KERNELS, compiler="clang")


# --- launch arguments ----------------------------------------------------------------------


def test_scalar_parameters_take_the_kernel_parameter_size():
    pack = driver._scalar_parameter
    assert isinstance(pack(7, 4, 0, "k"), ctypes.c_int32)
    assert isinstance(pack(7, 8, 0, "k"), ctypes.c_int64)
    assert isinstance(pack(3_000_000_000, 4, 0, "k"), ctypes.c_uint32)
    assert isinstance(pack(np.int64(5), 2, 0, "k"), ctypes.c_int16)
    assert isinstance(pack(1.5, 4, 0, "k"), ctypes.c_float)
    assert pack(1.5, 8, 0, "k").value == 1.5 and isinstance(pack(1.5, 8, 0, "k"), ctypes.c_double)
    assert isinstance(pack(np.float32(2.0), None, 0, "k"), ctypes.c_float)
    with pytest.raises(CudaLaunchError, match="argument 2 = 4294967296 does not fit"):
        pack(1 << 32, 4, 2, "k")
    with pytest.raises(
        CudaLaunchError,
        match="kernel .k.: argument 0 is a c_short of 2 bytes, but the parameter has 4",
    ):
        pack(ctypes.c_int16(1), 4, 0, "k")
    with pytest.raises(CudaLaunchError, match="float, but the parameter has 2 bytes"):
        pack(1.0, 2, 0, "k")
    with pytest.raises(CudaLaunchError, match="unsupported type str"):
        pack("x", 8, 0, "k")


def test_ctypes_scalars_pass_their_bytes_as_cuda_core_takes_them():
    pack = driver._scalar_parameter
    half = pack(ctypes.c_uint16(0x3C00), 2, 0, "k")
    assert isinstance(half, ctypes.c_uint16) and half.value == 0x3C00
    as_bits = pack(ctypes.c_float(1.5), 4, 0, "k")
    assert isinstance(as_bits, ctypes.c_uint32) and as_bits.value == 0x3FC00000
    wide = pack(ctypes.c_longlong(-1), 8, 0, "k")  # not a type cuda.core's launch takes
    assert isinstance(wide, ctypes.c_uint64) and wide.value == (1 << 64) - 1
    with pytest.raises(CudaLaunchError, match="argument 3 is a c_longdouble of 16 bytes"):
        pack(ctypes.c_longdouble(1.0), None, 3, "k")


def test_cuda_core_errors_give_the_driver_error_name(monkeypatch):
    from cuda.core._utils.cuda_utils import CUDAError

    error = CUDAError("CUDA_ERROR_INVALID_VALUE: one or more of the parameters is not valid")
    monkeypatch.setattr(driver, "_error_text", lambda result: (result.name, "invalid argument"))
    assert driver._core_error_text(error) == ("CUDA_ERROR_INVALID_VALUE", "invalid argument")
    # Where the driver cannot describe it (no libcuda), cuda.core's explanation stands in.
    monkeypatch.setattr(driver, "_error_text", lambda result: (str(result), "unknown error"))
    assert driver._core_error_text(error) == (
        "CUDA_ERROR_INVALID_VALUE",
        "one or more of the parameters is not valid",
    )
    assert driver._core_error_text(CUDAError("odd")) == ("CUDAError", "odd")


def test_streams_are_wrapped_once_per_handle(monkeypatch):
    monkeypatch.setattr(driver, "_core_streams", {})
    stream = driver._core_stream(0x1234)
    assert int(stream.handle) == 0x1234 and driver._core_stream(0x1234) is stream
    for handle in range(driver.STREAMS_KEPT):
        driver._core_stream(0x10000 + handle)
    assert len(driver._core_streams) == driver.STREAMS_KEPT and 0x1234 not in driver._core_streams


def test_a_tensor_map_reads_its_tensor_by_address():
    array = driver._DeviceArray(0x7F0000000000, (20, 12), 2)
    assert array.__cuda_array_interface__ == {
        "shape": (20, 12),
        "typestr": "<u2",
        "data": (0x7F0000000000, False),
        "strides": None,
        "version": 3,
    }


def test_grid_and_block_sizes():
    assert driver._dims(4, "grid", "k") == (4, 1, 1)
    assert driver._dims([2, 3], "grid", "k") == (2, 3, 1)
    with pytest.raises(CudaLaunchError, match="kernel 'k': block must be 1 to 3 positive"):
        driver._dims((1, 1, 1, 1), "block", "k")
    with pytest.raises(CudaLaunchError):
        driver._dims((0,), "grid", "k")


def test_errors_name_the_last_pending_launches(monkeypatch):
    monkeypatch.setattr(driver, "_pending", {})
    monkeypatch.setattr(driver, "_pending_dropped", {})
    for index in range(driver.PENDING_NAMES_KEPT + 36):
        driver._record_launch(7, f"k{index}")
    kept = driver.pending_kernels()
    assert len(kept) == driver.PENDING_NAMES_KEPT and kept[-1] == "k99" and kept[0] == "k36"
    assert driver._pending_text().startswith("36 earlier launches and k36, k37")


# --- host functions ------------------------------------------------------------------------


def parse(text: str) -> ModuleOp:
    """A host function whose kernels are in the CUDA given with it (`KERNELS`), not kernel.funcs
    in the module, so it is not verified: a kernel.launch names a kernel.func of its module."""
    return Parser(make_context(), text).parse_module()


ROWS, COLS = 64, 256

RMS_HOST = f"""
"memref.global"() <{{sym_name = "weight", sym_visibility = "private", type = memref<{COLS}xf32>,
  initial_value = dense<[{", ".join(f"{0.5 + i / COLS:.6e}" for i in range(COLS))}]>
    : tensor<{COLS}xf32>,
  constant}}> : () -> ()
func.func @forward(%x: memref<{ROWS}x{COLS}xf32>) -> memref<{ROWS}x{COLS}xf32> {{
  %scaled = memref.alloc() : memref<{ROWS}x{COLS}xf32>
  %n = arith.constant {ROWS * COLS} : i32
  %two = arith.constant 2.0 : f32
  "kernel.launch"(%x, %scaled, %n, %two) <{{kernel = @scale,
    grid = array<i64: {ROWS * COLS // 256}, 1, 1>, block = array<i64: 256, 1, 1>, smem = 0 : i64}}>
    : (memref<{ROWS}x{COLS}xf32>, memref<{ROWS}x{COLS}xf32>, i32, f32) -> ()
  %w = memref.get_global @weight : memref<{COLS}xf32>
  %out = memref.alloc() : memref<{ROWS}x{COLS}xf32>
  %cols = arith.constant {COLS} : i32
  %eps = arith.constant 1.0e-05 : f32
  "kernel.launch"(%scaled, %w, %out, %cols, %eps) <{{kernel = @rms_norm, grid = array<i64: {ROWS}>,
    block = array<i64: 128>, smem = 0 : i64}}>
    : (memref<{ROWS}x{COLS}xf32>, memref<{COLS}xf32>, memref<{ROWS}x{COLS}xf32>, i32, f32) -> ()
  memref.dealloc %scaled : memref<{ROWS}x{COLS}xf32>
  func.return %out : memref<{ROWS}x{COLS}xf32>
}}
"""


def rms_weight() -> torch.Tensor:
    return torch.tensor([0.5 + i / COLS for i in range(COLS)], dtype=torch.float64)


def rms_reference(x: torch.Tensor, w: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    x = x.double()
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w.double()


def test_host_program_reads_launches_and_signature():
    program = HostProgram(parse(RMS_HOST), KERNELS)
    assert [(p.shape, p.dtype) for p in program.parameters] == [((ROWS, COLS), torch.float32)]
    first, second = program.launches
    assert (first.kernel, first.grid, first.block, first.smem) == (
        "scale",
        (ROWS * COLS // 256, 1, 1),
        (256, 1, 1),
        0,
    )
    assert (second.kernel, second.grid, second.block, second.smem) == (
        "rms_norm",
        (ROWS,),
        (128,),
        0,
    )
    assert len(second.operands) == 5


@pytest.mark.parametrize(
    "inputs, message",
    [
        ([], r"@forward takes 1 arguments \(memref<64x256xf32>\), got 0"),
        ([torch.randn(ROWS, COLS), torch.randn(1)], "takes 1 arguments"),
        (
            [torch.randn(ROWS, COLS + 1)],
            r"argument 0 of @forward is memref<64x256xf32>: expected a float32 tensor of shape "
            r"\[64, 256\], got a float32 tensor of shape \[64, 257\]",
        ),
        ([torch.randn(ROWS, COLS, dtype=torch.bfloat16)], "got a bfloat16 tensor of shape"),
        ([np.zeros((ROWS, COLS), np.float32)], "got ndarray"),
    ],
)
def test_inputs_are_checked_before_anything_runs(inputs, message):
    # No GPU is touched: the check comes before compiling and loading.
    with pytest.raises(HostFunctionError, match=message):
        run_host_function(parse(RMS_HOST), inputs, cuda_source=KERNELS)


def test_a_module_for_another_gpu_is_refused_before_compiling(monkeypatch):
    # Its kernels were verified against the A100's limits: they are not compiled for an H200.
    module = parse(RMS_HOST)
    module.attributes["kernel.target"] = TargetAttr("sm_80")
    monkeypatch.setattr(host, "device_target", lambda: TARGETS["sm_90a"])
    monkeypatch.setattr(host, "compile_cuda", lambda *args: pytest.fail("compiled"))
    program = HostProgram(module, KERNELS)
    with pytest.raises(
        HostFunctionError,
        match=r"the module's kernels are for sm_80 \(A100, its kernel.target attribute\) but "
        r"this GPU is sm_90a \(H200\): lower the program again for this GPU",
    ):
        program.cuda_module()
    assert HostProgram(module, KERNELS, arch="sm_90a").arch == "sm_90a"


def same_program(program: HostProgram, again: HostProgram) -> None:
    for field in ("function", "declared_target", "parameters", "dynamic_size", "launches"):
        assert getattr(again, field) == getattr(program, field), field
    assert again._steps == program._steps and again._results == program._results
    assert program._global_values.keys() == again._global_values.keys()
    for name, value in program._global_values.items():
        assert again._global_values[name].dtype == value.dtype
        assert torch.equal(again._global_values[name], value)


def test_a_plan_read_back_is_the_same_program_and_the_target_still_checked(monkeypatch):
    """`plan_text` keeps what a call runs (allocations, constants, globals, launches), the
    signature and the GPU the kernels are for; `from_plan_text` runs it without the module."""
    module = parse(RMS_HOST)
    module.attributes["kernel.target"] = TargetAttr("sm_80")
    program = HostProgram(module, KERNELS)
    assert program._global_values and any(step[0] == "constant" for step in program._steps)
    again = HostProgram.from_plan_text(program.plan_text(), KERNELS)
    same_program(program, again)
    assert again.cuda_source() == KERNELS
    monkeypatch.setattr(host, "device_target", lambda: TARGETS["sm_90a"])
    with pytest.raises(HostFunctionError, match="the module's kernels are for sm_80"):
        again.cuda_module()


def test_a_plan_keeps_a_tensor_cores_kernels_tensor_maps():
    linear = nn.Linear(256, 256).to(torch.bfloat16)
    graph = emmy.compile(linear, torch.randn(128, 256, dtype=torch.bfloat16)).graph
    program = HostProgram(graph.module("kernel"))
    assert any(launch.tensor_maps for launch in program.launches)
    same_program(program, HostProgram.from_plan_text(program.plan_text(), ""))


CLUSTER_GEMM = """
tile.kernel @gemm(%a: memref<300x136xbf16>, %b: memref<200x136xbf16>, %y: memref<300x200xf32>)
    grid [GRID, 1, 1] block [384, 1, 1] {
  tile.gemm %a[m, k] * %b[n, k] : memref<300x136xbf16>, memref<200x136xbf16> -> f32
      atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 3CLUSTER
      epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<300x200xf32>
  }
}
func.func @forward(%a: memref<300x136xbf16>, %b: memref<200x136xbf16>) -> memref<300x200xf32> {
  %y = memref.alloc() : memref<300x200xf32>
  tile.launch @gemm(%a, %b, %y) : memref<300x136xbf16>, memref<200x136xbf16>,
      memref<300x200xf32>
  func.return %y : memref<300x200xf32>
}
"""


@pytest.mark.parametrize(("cluster", "grid", "resident"), [(2, 8, 2), (1, 6, 0)])
def test_a_plan_keeps_which_launches_run_only_their_resident_clusters(cluster, grid, resident):
    """A wgmma product's persistent launch of clusters of 2 runs at most the clusters that fit
    on the GPU at once, as its plan keeps; a launch of single blocks needs no such bound."""
    text = CLUSTER_GEMM.replace("GRID", str(grid))
    module = parse(text.replace("CLUSTER", f" cluster {cluster}" if cluster > 1 else ""))
    lower_tile_to_kernel.LowerTileToKernelPass().apply(make_context(), module)
    program = HostProgram(module)
    assert [launch.resident_cluster for launch in program.launches] == [resident]
    same_program(program, HostProgram.from_plan_text(program.plan_text(), ""))


@pytest.mark.parametrize(
    "body, message",
    [
        ('%y = "arith.addf"(%c, %c) : (f32, f32) -> f32', "'arith.addf' is not a host op"),
        ("%g = memref.get_global @missing : memref<4xf32>", "names no memref.global"),
        (
            '%m = "memref.alloc"(%i) <{operandSegmentSizes = array<i32: 1, 0>}> '
            ": (index) -> memref<?xf32>",
            "dynamic sizes",
        ),
    ],
)
def test_host_ops_the_runtime_cannot_run(body, message):
    text = f"""
    func.func @forward(%x: memref<4xf32>) -> memref<4xf32> {{
      %c = arith.constant 1.0 : f32
      %i = arith.constant 4 : index
      {body}
      func.return %x : memref<4xf32>
    }}
    """
    with pytest.raises(HostFunctionError, match=message):
        HostProgram(parse(text), "")


def test_missing_function_and_return():
    with pytest.raises(
        HostFunctionError, match=r"no func.func @forward in the module \(functions: @main\)"
    ):
        HostProgram(parse("func.func @main() {\n func.return\n}"), "")
    with pytest.raises(HostFunctionError, match="dynamic shape"):
        HostProgram(parse("func.func @forward(%x: memref<?xf32>) {\n func.return\n}"), "")


def test_dense_globals_become_tensors():
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, bf16, i32

    splat = DenseIntOrFPElementsAttr.from_list(TensorType(bf16, [2, 3]), [1.5] * 6)
    assert torch.equal(
        host.dense_tensor(splat, (2, 3), torch.bfloat16),
        torch.full((2, 3), 1.5, dtype=torch.bfloat16),
    )
    values = DenseIntOrFPElementsAttr.from_list(TensorType(i32, [2, 2]), [1, -2, 3, 4])
    assert host.dense_tensor(values, (2, 2), torch.int32).tolist() == [[1, -2], [3, 4]]


def test_device_attributes_make_the_target():
    h200 = {
        "COMPUTE_CAPABILITY_MAJOR": 9,
        "COMPUTE_CAPABILITY_MINOR": 0,
        "MULTIPROCESSOR_COUNT": 132,
        "WARP_SIZE": 32,
        "MAX_THREADS_PER_BLOCK": 1024,
        "MAX_BLOCK_DIM_X": 1024,
        "MAX_BLOCK_DIM_Y": 1024,
        "MAX_BLOCK_DIM_Z": 64,
        "MAX_GRID_DIM_X": 2**31 - 1,
        "MAX_GRID_DIM_Y": 65535,
        "MAX_GRID_DIM_Z": 65535,
        "MAX_SHARED_MEMORY_PER_BLOCK": 48 * 1024,
        "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 227 * 1024,
        "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 228 * 1024,
        "MAX_REGISTERS_PER_MULTIPROCESSOR": 65536,
        "L2_CACHE_SIZE": 60 * 1024 * 1024,
    }
    target = target_from_attributes(h200.__getitem__, "NVIDIA H200")
    assert target == dataclasses.replace(
        TARGETS["sm_90a"], name="NVIDIA H200", l2_bytes=60 * 1024 * 1024
    )
    a100 = {**h200, "COMPUTE_CAPABILITY_MAJOR": 8, "MULTIPROCESSOR_COUNT": 108}
    target = target_from_attributes(a100.__getitem__, "NVIDIA A100")
    assert (target.arch, target.sm_count, target.has_wgmma) == ("sm_80", 108, False)
    l4 = {**h200, "COMPUTE_CAPABILITY_MAJOR": 8, "COMPUTE_CAPABILITY_MINOR": 9}
    with pytest.raises(CudaError, match=r"NVIDIA L4 has compute capability 8\.9, which emmy"):
        target_from_attributes(l4.__getitem__, "NVIDIA L4")


KERNEL_IR = """
kernel.func @k_square(%x: memref<32x2048xf32>, %y: memref<32x2048xf32>) block [256, 1, 1] {
  %row = kernel.block_id x
  %tid = kernel.thread_id x
  %c2048 = arith.constant 2048 : index
  %c256 = arith.constant 256 : index
  scf.for %j = %tid to %c2048 step %c256 {
    %v = memref.load %x[%row, %j] : memref<32x2048xf32>
    %s = arith.mulf %v, %v : f32
    memref.store %s, %y[%row, %j] : memref<32x2048xf32>
  }
}

func.func @forward(%x: memref<32x2048xf32>) -> memref<32x2048xf32> {
  %y = memref.alloc() : memref<32x2048xf32>
  kernel.launch @k_square(%x, %y) grid [32, 1, 1] block [256, 1, 1] smem 0
    : memref<32x2048xf32>, memref<32x2048xf32>
  func.return %y : memref<32x2048xf32>
}
"""


def kernel_ir_program() -> HostProgram:
    """A program in the kernel dialect, its CUDA printed by the cuda target."""
    module = Parser(make_context(), KERNEL_IR).parse_module()
    module.verify()
    return HostProgram(module)


def test_kernel_ir_through_the_cuda_target_compiles():
    program = kernel_ir_program()
    [launch] = program.launches
    assert (launch.kernel, launch.grid, launch.block, launch.smem) == (
        "k_square",
        (32, 1, 1),
        (256, 1, 1),
        0,
    )
    source = program.cuda_source()
    assert source == print_cuda(program.module)
    assert compile_cuda(source)[:4] == b"\x7fELF"


# --- statistics and reports ----------------------------------------------------------------


def test_quantiles_and_summary():
    assert bench.median([3.0, 1.0, 2.0]) == 2.0
    assert bench.median([4.0, 1.0, 2.0, 3.0]) == 2.5
    assert bench.quantile([0.0, 10.0], 0.2) == 2.0
    summary = bench.summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert summary["n"] == 5 and summary["median_us"] == 3.0 and summary["mean_us"] == 22.0
    assert (summary["min_us"], summary["max_us"]) == (1.0, 100.0)
    assert summary["p20_us"] == pytest.approx(1.8) and summary["p80_us"] == pytest.approx(23.2)
    with pytest.raises(ValueError):
        bench.median([])


class FakeTimer:
    """Hands out preset samples and records what it was asked to time."""

    def __init__(self, *series: list[float]):
        self.series = list(series)
        self.calls = []

    def __call__(self, fn, warmup, reps, flush):
        fn()
        self.calls.append((warmup, reps, flush))
        return self.series.pop(0)


def test_time_cuda_is_the_median_of_the_timer():
    timer = FakeTimer([5.0, 1.0, 9.0, 3.0, 7.0])
    assert bench.time_cuda(lambda: None, warmup=2, reps=5, timer=timer) == 5.0
    assert timer.calls == [(2, 5, True)]
    result = bench.measure(lambda: None, timer=FakeTimer([1.0]), flush_l2=False)
    assert result["method"] == "custom" and result["median_us"] == 1.0
    with pytest.raises(ValueError, match="reps"):
        bench.measure(lambda: None, reps=0, timer=timer)


def test_copy_bandwidth_counts_read_and_write(monkeypatch):
    # 2 GiB read + 2 GiB written in 1000 µs.
    monkeypatch.setattr(bench.torch, "randint", lambda *a, **k: torch.empty(0, dtype=torch.uint8))
    monkeypatch.setattr(bench.torch, "empty_like", lambda t: torch.empty(0, dtype=torch.uint8))
    gbps = bench.device_copy_bandwidth(nbytes=2 << 30, timer=FakeTimer([1000.0]))
    assert gbps == pytest.approx(2 * (2 << 30) / 1e-3 / 1e9)


PROGRAM = "nn.RMSNorm(64, eps=1e-5).to(DT)(torch.randn(8, 64, dtype=DT))"


def rms_norm_emmy(args):
    weight, x = args
    return [torch.nn.functional.rms_norm(x, (x.shape[-1],), weight, 1e-5)]


def test_bench_program_checks_then_times_cpu_plumbing():
    timer = FakeTimer([30.0, 40.0, 20.0], [10.0, 12.0, 11.0])
    result = bench.bench_program(
        PROGRAM,
        "bfloat16",
        rms_norm_emmy,
        backends=("eager", "emmy"),
        device="cpu",
        timer=timer,
        copy_bandwidth_gbps=100.0,
    )
    eager, emmy = result["backends"]
    assert result["dtype"] == "bfloat16" and result["timer"] == "custom"
    assert result["bytes"] == (64 + 8 * 64 + 8 * 64) * 2  # weight, x, output in bf16
    assert eager["correct"] and emmy["correct"], emmy.get("error")
    assert (eager["median_us"], emmy["median_us"]) == (30.0, 11.0)
    assert emmy["vs_eager"] == pytest.approx(30.0 / 11.0) and emmy["vs_compile"] is None
    assert emmy["gbps"] == pytest.approx(result["bytes"] / 11e-6 / 1e9)
    assert emmy["copy_fraction"] == pytest.approx(emmy["gbps"] / 100.0)


LINEAR = "nn.Linear(32, 16, bias=False).to(DT)(torch.randn(4, 32, dtype=DT))"


def test_bench_program_counts_declared_flops_and_bytes():
    timer = FakeTimer([8.0], [4.0])
    flops = 2 * 4 * 16 * 32
    result = bench.bench_program(
        LINEAR,
        "float32",
        lambda args: [args[1] @ args[0].T],  # weight, x
        backends=("eager", "emmy"),
        device="cpu",
        timer=timer,
        copy_bandwidth_gbps=100.0,
        nbytes=16 * 32 * 4,  # the weight alone
        flops=flops,
        peak_tflops=0.5,
    )
    eager, emmy = result["backends"]
    assert emmy["correct"], emmy.get("error")
    assert (result["bytes"], result["flops"], result["peak_tflops"]) == (2048, flops, 0.5)
    assert emmy["gbps"] == pytest.approx(2048 / 4e-6 / 1e9)
    assert emmy["copy_fraction"] == pytest.approx(emmy["gbps"] / 100.0)
    assert emmy["tflops"] == pytest.approx(flops / 4e-6 / 1e12)
    assert eager["peak_fraction"] == pytest.approx(flops / 8e-6 / 1e12 / 0.5)


def test_tensor_core_peak_is_the_best_of_the_products():
    timer = FakeTimer([30.0, 10.0, 20.0])
    peak = bench.tensor_core_peak_tflops(16, warmup=1, reps=3, device="cpu", timer=timer)
    assert peak == pytest.approx(2 * 16**3 / 10e-6 / 1e12)
    assert timer.calls == [(1, 3, False)]


def test_float32_matmul_precision_is_restored():
    before = torch.get_float32_matmul_precision()
    other = "high" if before == "highest" else "highest"
    with bench.float32_matmul_precision(other):
        assert torch.get_float32_matmul_precision() == other
    assert torch.get_float32_matmul_precision() == before
    with pytest.raises(RuntimeError), bench.float32_matmul_precision(other):
        raise RuntimeError("a failing case")
    assert torch.get_float32_matmul_precision() == before
    with bench.float32_matmul_precision(None):
        assert torch.get_float32_matmul_precision() == before


def test_quiet_autotuning_hides_inductors_reports_until_it_ends():
    """Inductor's autotune reports, its deprecation warning and the errors of the candidates it
    drops (on an H200: Triton configs over the shared memory, with tracebacks) stayed out of
    `emmy bench`'s tables; other warnings still show, and everything is back afterwards."""
    dropped_candidates = logging.getLogger("torch._inductor.select_algorithm")
    displayed = torch._inductor.config.autotune_num_choices_displayed
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with bench.quiet_autotuning():
            assert not dropped_candidates.isEnabledFor(logging.ERROR)
            assert torch._inductor.config.autotune_num_choices_displayed == 0
            assert not torch._inductor.config.max_autotune_report_choices_stats
            warnings.warn("TypedStorage is deprecated. It will be removed", UserWarning)
            warnings.warn("a warning of the program itself", UserWarning)
    assert [str(w.message) for w in shown] == ["a warning of the program itself"]
    assert dropped_candidates.isEnabledFor(logging.ERROR)
    assert torch._inductor.config.autotune_num_choices_displayed == displayed


def test_a_wrong_backend_is_reported_and_not_timed():
    timer = FakeTimer([10.0])
    result = bench.bench_program(
        PROGRAM,
        torch.float32,
        lambda args: [args[1] * 2],
        backends=("eager", "emmy"),
        device="cpu",
        timer=timer,
    )
    eager, emmy = result["backends"]
    assert len(timer.calls) == 1  # eager only
    assert not emmy["correct"] and "median_us" not in emmy
    assert "output 0 differs" in emmy["error"] and emmy["vs_eager"] is None


def test_a_backend_that_raises_is_reported():
    def broken(args):
        raise RuntimeError("no kernel for that")

    result = bench.bench_program(
        PROGRAM,
        "float32",
        broken,
        backends=("eager", "emmy"),
        device="cpu",
        timer=FakeTimer([10.0]),
    )
    assert result["backends"][1]["error"] == "RuntimeError: no kernel for that"


def test_nan_never_passes():
    expected = [torch.tensor([1.0, 2.0])]
    assert bench.check_outputs([torch.tensor([1.0, float("nan")])], expected)["correct"] is False
    assert bench.check_outputs([torch.tensor([1.0, 2.0 + 1e-6])], expected)["correct"] is True
    near = [torch.tensor([1.0, 2.01])]
    assert bench.check_outputs(near, expected)["correct"] is False
    assert bench.check_outputs(near, expected, tolerance=(1e-2, 0.0))["correct"] is True
    shape = bench.check_outputs([torch.zeros(3)], expected)
    assert not shape["correct"] and "shape [3]" in shape["error"]


def test_an_infinity_matches_the_same_infinity_only():
    inf = float("inf")
    expected = [torch.tensor([-inf, inf, 1.0])]
    assert bench.check_outputs([torch.tensor([-inf, inf, 1.0])], expected)["correct"]
    for wrong in ([inf, inf, 1.0], [-inf, 3.0e38, 1.0], [-inf, float("nan"), 1.0]):
        assert not bench.check_outputs([torch.tensor(wrong)], expected)["correct"], wrong


def sample_results():
    return {
        "program": "nn.RMSNorm(4096)(torch.randn(8192, 4096))",
        "dtype": "float32",
        "device": "cuda",
        "bytes": 268_451_840,
        "timer": "cuda-events",
        "copy_bandwidth_gbps": 4000.0,
        "backends": [
            {
                "backend": "eager",
                "correct": True,
                "median_us": 312.0,
                "host_us": 15.25,
                "gbps": 860.4,
                "vs_eager": 1.0,
                "vs_compile": 72.9 / 312.0,
                "copy_fraction": 0.2151,
            },
            {
                "backend": "torch.compile",
                "correct": True,
                "median_us": 72.9,
                "gbps": 3682.5,
                "vs_eager": 312.0 / 72.9,
                "vs_compile": 1.0,
                "copy_fraction": 0.9206,
            },
            {
                "backend": "emmy",
                "correct": False,
                "error": "output 0 differs at [0, 0]",
                "vs_eager": None,
                "vs_compile": None,
            },
        ],
    }


def test_format_table():
    table = bench.format_table(sample_results()).splitlines()
    assert table[0].startswith(
        "nn.RMSNorm(4096)(torch.randn(8192, 4096))  [float32, 268,451,840 bytes"
    )
    assert table[1].split() == [
        "backend",
        "median",
        "µs",
        "host",
        "µs",
        "GB/s",
        "x",
        "eager",
        "x",
        "compile",
        "%",
        "copy",
    ]
    assert table[2].split() == ["eager", "312.00", "15.2", "860.4", "1.00", "0.23", "21.5"]
    assert table[3].split() == ["torch.compile", "72.90", "-", "3,682.5", "4.28", "1.00", "92.1"]
    assert table[4] == "emmy             FAIL: output 0 differs at [0, 0]"


def test_format_table_of_a_product():
    result = {
        **sample_results(),
        "program": "linear",
        "copy_bandwidth_gbps": None,
        "flops": 137_438_953_472,
        "peak_tflops": 800.0,
    }
    result["backends"][0].update(median_us=200.0, tflops=687.2, peak_fraction=0.859)
    table = bench.format_table(result).splitlines()
    assert table[0] == (
        "linear  [float32, 268,451,840 bytes moved at least, 137.4 GFLOP, "
        "tensor-core peak 800 TFLOP/s, timer cuda-events]"
    )
    assert table[1].split()[-4:] == ["compile", "TFLOP/s", "%", "peak"]  # no "% copy"
    assert table[2].split() == ["eager", "200.00", "15.2", "860.4", "1.00", "0.23", "687.2", "85.9"]
    assert table[3].split()[-2:] == ["-", "-"]  # torch.compile's were not given


def test_to_json_records_the_environment(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench.py", "-c", "nn.RMSNorm(8)(torch.randn(2, 8))"])
    path = tmp_path / "result.json"
    results = sample_results()
    results["backends"][0]["stdev_us"] = float("nan")
    written = bench.to_json([results], path, {"copy_bandwidth_gbps": 4000.0})
    document = json.loads(path.read_text())
    assert document == written
    assert document["copy_bandwidth_gbps"] == 4000.0
    assert document["torch"] == torch.__version__
    assert document["command"] == "bench.py -c 'nn.RMSNorm(8)(torch.randn(2, 8))'"
    assert datetime.datetime.fromisoformat(document["date"]).tzinfo is not None
    assert document["gpu"] == (torch.cuda.get_device_name() if torch.cuda.is_available() else None)
    assert document["results"][0]["backends"][1]["median_us"] == 72.9
    assert document["results"][0]["backends"][0]["stdev_us"] is None  # NaN is not JSON


# --- on the GPU ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kernels():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    return CudaModule(compile_cuda(KERNELS))


def fresh(*shape, dtype=torch.float32, seed=0):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, generator=generator, device="cuda", dtype=torch.float32).to(dtype)


@needs_gpu
def test_vector_add_matches_pytorch(kernels):
    n = 1_000_003
    a, b = fresh(n, seed=1), fresh(n, seed=2)
    out = torch.full_like(a, float("nan"))
    kernels.launch("vadd", grid=(n + 255) // 256, block=256, args=[a, b, out, n])
    synchronize(timeout_s=30)
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)


@needs_gpu
def test_bf16_vector_add_uses_the_cuda_headers(kernels):
    n = 4097
    a, b = fresh(n, dtype=torch.bfloat16, seed=3), fresh(n, dtype=torch.bfloat16, seed=4)
    out = torch.full_like(a, float("nan"))
    kernels.launch("vadd_bf16", (n + 127) // 128, 128, [a, b, out, n])
    synchronize(timeout_s=30)
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)


@needs_gpu
def test_rms_norm_matches_pytorch(kernels):
    rows, cols = 512, 4096
    x, w = fresh(rows, cols, seed=5), fresh(cols, seed=6)
    out = torch.full_like(x, float("nan"))
    kernels.launch("rms_norm", rows, 256, [x, w, out, cols, 1e-5])
    synchronize(timeout_s=30)
    reference = rms_reference(x, w)
    assert not out.isnan().any()
    assert float((out.double() - reference).norm() / reference.norm()) < 1e-6
    eager = torch.nn.functional.rms_norm(x, (cols,), w, 1e-5)
    torch.testing.assert_close(out, eager, rtol=1e-5, atol=1e-5)


@needs_gpu
def test_more_than_48k_of_dynamic_shared_memory(kernels):
    per_block, blocks = 20_000, 8  # 80 000 bytes of shared memory per block
    x = fresh(blocks * per_block, seed=7)
    out = torch.full_like(x, float("nan"))
    kernels.launch("reverse_blocks", blocks, 256, [x, out, per_block], smem=per_block * 4)
    synchronize(timeout_s=30)
    torch.testing.assert_close(out, x.view(blocks, per_block).flip(-1).reshape(-1), rtol=0, atol=0)


@needs_gpu
def test_launch_errors_name_the_kernel(kernels):
    a = fresh(16)
    with pytest.raises(
        CudaLaunchError,
        match=r"launching kernel 'vadd' \(grid \(1, 1, 1\), block \(2048, 1, 1\)"
        r".*CUDA_ERROR_INVALID_VALUE",
    ) as caught:
        kernels.launch("vadd", 1, 2048, [a, a, a, 16])
    assert caught.value.kernels == ["vadd"] and caught.value.error == "CUDA_ERROR_INVALID_VALUE"
    with pytest.raises(
        CudaLaunchError, match="kernel 'vadd': it takes 4 parameters, got 3 arguments"
    ):
        kernels.launch("vadd", 1, 32, [a, a, a])
    with pytest.raises(CudaLaunchError, match="kernel 'vadd': argument 0 is a tensor on cpu"):
        kernels.launch("vadd", 1, 32, [a.cpu(), a, a, 16])
    with pytest.raises(CudaLaunchError, match="argument 1 is a non-contiguous tensor"):
        kernels.launch("vadd", 1, 32, [a, fresh(4, 8).t(), a, 16])
    with pytest.raises(CudaLaunchError, match="no kernel 'vad' in the module.*extern \"C\""):
        kernels.launch("vad", 1, 32, [a, a, a, 16])
    synchronize(timeout_s=30)  # nothing went wrong on the device


@needs_gpu
def test_a_spinning_kernel_times_out_instead_of_hanging(kernels):
    from cuda.bindings import driver as cuda_driver

    flag = torch.ones(1, dtype=torch.int32, device="cuda")
    done = torch.zeros(1, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()  # the flag is set before the kernel reads it
    flags = int(cuda_driver.CUstream_flags.CU_STREAM_NON_BLOCKING)
    _, spin_stream = cuda_driver.cuStreamCreate(flags)
    _, clear_stream = cuda_driver.cuStreamCreate(flags)
    try:
        kernels.launch("spin", 1, 1, [flag, done], stream=int(spin_stream))
        with pytest.raises(CudaTimeoutError, match="still running after 0.5 s: spin") as caught:
            synchronize(timeout_s=0.5)
        assert caught.value.kernels == ["spin"]
        assert driver.pending_kernels() == ["spin"]
        # Let it end: clear the flag through a copy on a stream that does not wait for it.
        zero = np.zeros(1, dtype=np.int32)
        (error,) = cuda_driver.cuMemcpyHtoDAsync(flag.data_ptr(), zero, 4, clear_stream)
        assert error == cuda_driver.CUresult.CUDA_SUCCESS
        assert cuda_driver.cuStreamSynchronize(clear_stream)[0] == cuda_driver.CUresult.CUDA_SUCCESS
        synchronize(timeout_s=30)
        assert driver.pending_kernels() == []
        assert done.item() == 1
    finally:
        cuda_driver.cuStreamDestroy(spin_stream)
        cuda_driver.cuStreamDestroy(clear_stream)


SPIN_IN_A_COMMAND = """
import sys, torch
from emmy.tools import cli
from emmy.tools.runtime.compile import compile_cuda
from emmy.tools.runtime.driver import load_module, synchronize

def spinning(args):
    flag = torch.ones(1, dtype=torch.int32, device="cuda")
    done = torch.zeros(1, dtype=torch.int32, device="cuda")
    torch.cuda.synchronize()
    load_module(compile_cuda(SOURCE)).launch("spin", 1, 1, [flag, done])
    synchronize(timeout_s=0.5)

cli.run_exec = spinning
sys.exit(cli.main(["exec", "in.mlir"]))
"""


@needs_gpu
def test_a_command_whose_kernel_times_out_exits_while_it_spins(tmp_path):
    """The GPU cannot stop the kernel: the command reports the timeout and ends its process
    (and with it the context the kernel runs in) instead of waiting for it at exit."""
    import subprocess

    script = f"SOURCE = {KERNELS!r}\n{SPIN_IN_A_COMMAND}"
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1, result.stderr
    assert "error: kernels still running after 0.5 s: spin" in result.stderr
    assert "Traceback" not in result.stderr
    assert time.monotonic() - started < 100


@needs_gpu
def test_launches_go_on_torch_streams(kernels):
    n = 4099
    a, b = fresh(n, seed=12), fresh(n, seed=13)
    current, given = torch.full_like(a, float("nan")), torch.full_like(a, float("nan"))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # torch's current stream is the default
        kernels.launch("vadd", (n + 255) // 256, 256, [a, b, current, n])
    kernels.launch("vadd", (n + 255) // 256, 256, [b, b, given, n], stream=side)
    assert driver.pending_kernels() == ["vadd", "vadd"]
    synchronize(timeout_s=30)
    assert driver.pending_kernels() == []
    torch.testing.assert_close(current, a + b, rtol=0, atol=0)
    torch.testing.assert_close(given, b + b, rtol=0, atol=0)


TMA_KERNEL = r"""
struct __align__(64) TensorMap { unsigned char bytes[128]; };

// Copies the 8 x 8 box at (row0, col0) of a float tensor into out, through one TMA load.
extern "C" __global__ void tma_box(const __grid_constant__ TensorMap map, float* out, int row0,
                                   int col0) {
  __shared__ __align__(128) float box[64];
  __shared__ __align__(8) unsigned long long barrier;
  unsigned bar = (unsigned)__cvta_generic_to_shared(&barrier);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(256));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        ::"r"((unsigned)__cvta_generic_to_shared(box)), "l"(&map), "r"(col0), "r"(row0),
        "r"(bar) : "memory");
  }
  __syncthreads();
  asm volatile(
      "{ .reg .pred done; WAIT: mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;"
      " @!done bra WAIT; }" ::"r"(bar) : "memory");
  out[threadIdx.x] = box[threadIdx.x];
}
"""


@needs_gpu
def test_a_tensor_map_passes_by_value_and_reads_zeros_outside_the_tensor():
    if driver.device_target().arch != "sm_90a":
        pytest.skip("TMA needs a Hopper GPU")
    module = CudaModule(compile_cuda(TMA_KERNEL, "sm_90a"))
    x = fresh(20, 12, seed=14)
    out = torch.full((64,), float("nan"), device="cuda")
    module.launch("tma_box", 1, 64, [driver.tensor_map(x, (8, 8), 0), out, 16, 8])
    synchronize(timeout_s=30)
    expected = torch.zeros(8, 8, device="cuda")
    expected[:4, :4] = x[16:20, 8:12]
    torch.testing.assert_close(out.view(8, 8), expected, rtol=0, atol=0)
    with pytest.raises(CudaLaunchError, match=r"argument 0 is a tensor \(a pointer\), but the"):
        module.launch("tma_box", 1, 64, [x, out, 16, 8])
    with pytest.raises(CudaLaunchError, match="argument 1 is a tensor map, but the parameter"):
        module.launch("tma_box", 1, 64, [driver.tensor_map(x, (8, 8), 0)] * 2 + [16, 8])


@needs_gpu
def test_host_function_runs_on_the_gpu():
    x = fresh(ROWS, COLS, seed=8)
    program = HostProgram(parse(RMS_HOST), KERNELS)
    (out,) = program([x], poison=True)
    assert out.device.type == "cuda" and out.dtype == torch.float32
    assert not out.isnan().any()  # every element written
    reference = rms_reference(2 * x, rms_weight().to(x.device))
    assert float((out.double() - reference).norm() / reference.norm()) < 1e-6
    (again,) = program([x.cpu()])  # CPU inputs are copied over
    torch.testing.assert_close(again, out, rtol=0, atol=0)
    (planned,) = HostProgram.from_plan_text(program.plan_text(), KERNELS)([x])
    torch.testing.assert_close(planned, out, rtol=0, atol=0)


@needs_gpu
def test_host_function_names_a_kernel_the_cuda_lacks():
    source = KERNELS.replace("void rms_norm(", "void rms_norm_v2(")
    with pytest.raises(CudaLaunchError, match="no kernel 'rms_norm'"):
        run_host_function(parse(RMS_HOST), [fresh(ROWS, COLS)], cuda_source=source)


@needs_gpu
def test_bench_program_on_the_gpu(kernels):
    def emmy_fn(args):
        weight, x = args
        out = torch.empty_like(x)
        rows, cols = x.shape
        kernels.launch("rms_norm", rows, 256, [x, weight, out, cols, 1e-5])
        return [out]

    source = "nn.RMSNorm(1024, eps=1e-5)(torch.randn(256, 1024))"
    result = bench.bench_program(
        source, torch.float32, emmy_fn, warmup=3, reps=20, compile_mode="default"
    )
    rows = {row["backend"]: row for row in result["backends"]}
    assert set(rows) == {"eager", "torch.compile", "emmy"}
    for row in rows.values():
        assert row["correct"], row.get("error")
        assert row["median_us"] > 0 and row["gbps"] > 0
    assert rows["eager"]["vs_eager"] == 1.0 and rows["torch.compile"]["vs_compile"] == 1.0
    print(bench.format_table(result))


@needs_gpu
def test_the_events_time_the_gpu_not_a_slow_host():
    x = fresh(1024)

    def slow_host_small_kernel():
        time.sleep(300e-6)
        x.add_(1.0)

    stats = bench.measure(slow_host_small_kernel, warmup=2, reps=20)
    assert stats["method"] == "cuda-events"
    assert stats["median_us"] < 100, stats  # a 4 KB add, with 300 µs of host time before it
    assert bench.host_call_us(slow_host_small_kernel) >= 300


@needs_gpu
def test_copy_bandwidth_on_the_gpu():
    gbps = bench.device_copy_bandwidth(nbytes=256 << 20, warmup=2, reps=10)
    assert 100 < gbps < 20_000


@needs_gpu
def test_kernel_ir_runs_on_the_gpu():
    program = kernel_ir_program()
    x = fresh(32, 2048, seed=9)
    (y,) = program([x], poison=True)
    torch.testing.assert_close(y, x * x, rtol=0, atol=0)


MAX_MIN_IR = """
kernel.func @k_max_min(%x: memref<{n}x{t}>, %y: memref<{n}x{t}>, %hi: memref<{n}x{t}>,
                       %lo: memref<{n}x{t}>) block [{n}, 1, 1] {{
  %i = kernel.thread_id x
  %a = memref.load %x[%i] : memref<{n}x{t}>
  %b = memref.load %y[%i] : memref<{n}x{t}>
  %max = arith.maximumf %a, %b : {t}
  %min = arith.minimumf %a, %b : {t}
  memref.store %max, %hi[%i] : memref<{n}x{t}>
  memref.store %min, %lo[%i] : memref<{n}x{t}>
}}

func.func @forward(%x: memref<{n}x{t}>, %y: memref<{n}x{t}>)
    -> (memref<{n}x{t}>, memref<{n}x{t}>) {{
  %hi = memref.alloc() : memref<{n}x{t}>
  %lo = memref.alloc() : memref<{n}x{t}>
  kernel.launch @k_max_min(%x, %y, %hi, %lo) grid [1, 1, 1] block [{n}, 1, 1] smem 0
    : memref<{n}x{t}>, memref<{n}x{t}>, memref<{n}x{t}>, memref<{n}x{t}>
  func.return %hi, %lo : memref<{n}x{t}>, memref<{n}x{t}>
}}
"""


def ieee_maximum_minimum(a: float, b: float) -> tuple[float, float]:
    """IEEE 754-2019 maximum and minimum, as arith.maximumf / minimumf define them."""
    if math.isnan(a) or math.isnan(b):
        return math.nan, math.nan
    if a == b == 0:
        negative = (math.copysign(1, a) < 0, math.copysign(1, b) < 0)
        return (-0.0 if all(negative) else 0.0), (-0.0 if any(negative) else 0.0)
    return max(a, b), min(a, b)


@needs_gpu
@pytest.mark.parametrize(
    "t, dtype",
    [
        ("f32", torch.float32),
        ("f16", torch.float16),
        ("bf16", torch.bfloat16),
        ("f64", torch.float64),
    ],
)
def test_maximumf_and_minimumf_on_the_gpu_propagate_nan_and_order_zeros(t, dtype):
    from emmy.dialects import make_context

    special = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5, -1.5, 3.0]
    pairs = [(a, b) for a in special for b in special]
    module = Parser(make_context(), MAX_MIN_IR.format(n=len(pairs), t=t)).parse_module()
    module.verify()
    x = torch.tensor([a for a, _ in pairs], dtype=dtype, device="cuda")
    y = torch.tensor([b for _, b in pairs], dtype=dtype, device="cuda")
    hi, lo = HostProgram(module)([x, y], poison=True)
    for index, (a, b) in enumerate(pairs):
        for got, want in zip((float(hi[index]), float(lo[index])), ieee_maximum_minimum(a, b)):
            assert (math.isnan(got) and math.isnan(want)) or (
                got == want and math.copysign(1, got) == math.copysign(1, want)
            ), (t, a, b, got, want)


GATHER_OUT_OF_BOUNDS = """
import torch, emmy
table = torch.nn.Embedding(10, 64).cuda()
compiled = emmy.compile(table, torch.zeros(5, dtype=torch.long, device="cuda"))
good = torch.tensor([0, 3, 9, 1, 2], device="cuda")
assert torch.equal(compiled(good), table(good))
torch.cuda.synchronize()
print("in range: ok", flush=True)
compiled(torch.tensor([0, 3, 10, 1, 2], device="cuda"))
torch.cuda.synchronize()
"""


CACHE_POSITION_OUT_OF_BOUNDS = """
import torch, emmy
class Update(torch.nn.Module):
    def forward(self, cache, position, row):
        return cache.index_copy(1, position, row)
cache, row = torch.randn(4, 16, 8, device="cuda"), torch.randn(4, 1, 8, device="cuda")
compiled = emmy.compile(Update(), cache, torch.tensor([0], device="cuda"), row)
good = torch.tensor([15], device="cuda")
assert torch.equal(compiled(cache, good, row), cache.index_copy(1, good, row))
torch.cuda.synchronize()
print("in range: ok", flush=True)
compiled(cache, torch.tensor([16], device="cuda"), row)
torch.cuda.synchronize()
"""


@needs_gpu
@pytest.mark.parametrize(
    "script", [GATHER_OUT_OF_BOUNDS, CACHE_POSITION_OUT_OF_BOUNDS], ids=["embedding", "index_copy"]
)
def test_a_gathered_index_out_of_its_dim_stops_at_a_device_assert(script):
    """An embedding's row past the table, or a KV cache's position past the cache (which the
    scatter looks up in itself, `checked_index`), is a device-side assert, as in PyTorch's
    kernels, not a read of other memory or a write of nothing (`emmy_check_index`); the
    context it breaks is the child's."""
    import subprocess

    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert "in range: ok" in result.stdout, result.stderr
    assert result.returncode != 0
    assert "an index is outside its dim" in result.stderr + result.stdout
