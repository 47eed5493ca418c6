"""The GPU a program is compiled for: the one place hardware facts live.

    builtin.module attributes {kernel.target = #kernel.target<"sm_90a">} {
      kernel.func @k(...) block [256, 1, 1] { ... }
    }

A `GpuTarget` names an architecture (`sm_90a`) and its limits and features; verifiers, passes,
the SIMT emulator, the CUDA printer and the runtime read them from here and from nowhere else.
In the IR a module says which GPU it is for with the `kernel.target` attribute; a module without
one is for `DEFAULT_TARGET`, an H200 (sm_90a), so that the CPU tools need no GPU to agree with it.

The attribute is the one way to choose a target: every verifier, pass, emulator and printer
reads it through `target_of`, and none takes a target option of its own, so a module's text
says everything its compilation depends on. A driver compiling for another GPU (the runtime,
for the device it runs on) sets the attribute on the module before the first pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


@dataclass(frozen=True)
class GpuTarget:
    """An NVIDIA GPU architecture's limits and features, as a compiler needs them."""

    arch: str
    """The architecture nvcc/NVRTC compile for (`sm_90a`)."""
    name: str
    """The GPU these figures were taken from."""
    sm_count: int
    warp_size: int
    max_threads_per_block: int
    max_block_shape: tuple[int, int, int]
    max_grid_shape: tuple[int, int, int]
    static_shared_bytes_per_block: int
    """Shared memory a block gets without opting in (static `__shared__` arrays)."""
    shared_bytes_per_block: int
    """Shared memory a block may use after opting in, static and dynamic together."""
    shared_bytes_per_sm: int
    registers_per_sm: int
    l2_bytes: int
    has_mma_sync: bool
    """Warp-level tensor cores: `mma.sync` m16n8k16 / m16n8k8 on f16, bf16 and tf32 (sm_80 on)."""
    has_wgmma: bool
    has_tma: bool
    has_clusters: bool
    """Thread-block clusters (sm_90 on): blocks of a cluster run at once, read each other's
    shared memory and wait for each other at a cluster barrier."""

    @property
    def max_cluster_blocks(self) -> int:
        """The most blocks of a cluster that every GPU of the architecture runs (the portable
        cluster size, 8; 1 without clusters)."""
        return 8 if self.has_clusters else 1

    @property
    def compute_capability(self) -> tuple[int, int]:
        digits = self.arch.removeprefix("sm_").rstrip("a")
        return int(digits[:-1]), int(digits[-1])


TARGETS: dict[str, GpuTarget] = {
    target.arch: target
    for target in (
        GpuTarget(
            arch="sm_90a",
            name="H200",
            sm_count=132,
            warp_size=32,
            max_threads_per_block=1024,
            max_block_shape=(1024, 1024, 64),
            max_grid_shape=(2**31 - 1, 65535, 65535),
            static_shared_bytes_per_block=48 * 1024,
            shared_bytes_per_block=227 * 1024,
            shared_bytes_per_sm=228 * 1024,
            registers_per_sm=65536,
            l2_bytes=50 * 1024 * 1024,
            has_mma_sync=True,
            has_wgmma=True,
            has_tma=True,
            has_clusters=True,
        ),
        GpuTarget(
            arch="sm_80",
            name="A100",
            sm_count=108,
            warp_size=32,
            max_threads_per_block=1024,
            max_block_shape=(1024, 1024, 64),
            max_grid_shape=(2**31 - 1, 65535, 65535),
            static_shared_bytes_per_block=48 * 1024,
            shared_bytes_per_block=163 * 1024,
            shared_bytes_per_sm=164 * 1024,
            registers_per_sm=65536,
            l2_bytes=40 * 1024 * 1024,
            has_mma_sync=True,
            has_wgmma=False,
            has_tma=False,
            has_clusters=False,
        ),
    )
}
DEFAULT_TARGET = TARGETS["sm_90a"]
TARGET_ATTRIBUTE = "kernel.target"
"""The module attribute that names a module's target."""


def known_target(arch: str) -> GpuTarget:
    """The target of `arch`; a VerifyException names the known ones otherwise."""
    if arch not in TARGETS:
        raise VerifyException(
            f"unknown GPU target '{arch}'; expected one of {', '.join(sorted(TARGETS))}"
        )
    return TARGETS[arch]


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """`#kernel.target<"sm_90a">`: the GPU a module is compiled for."""

    name = "kernel.target"
    arch: StringAttr

    def __init__(self, arch: str):
        super().__init__(StringAttr(arch))

    @property
    def target(self) -> GpuTarget:
        return known_target(self.arch.data)

    def verify(self) -> None:
        known_target(self.arch.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_str_literal("a GPU architecture such as sm_90a")),)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.arch.data)


def target_of(op: Operation) -> GpuTarget:
    """The target of the module `op` is in: its `kernel.target`, else `DEFAULT_TARGET`."""
    top = op
    while top.parent_op() is not None:
        top = top.parent_op()
    attribute = top.attributes.get(TARGET_ATTRIBUTE) if isinstance(top, ModuleOp) else None
    if attribute is None:
        return DEFAULT_TARGET
    if not isinstance(attribute, TargetAttr):
        raise VerifyException(
            f"a module's {TARGET_ATTRIBUTE} attribute names its GPU, as in "
            f'#kernel.target<"{DEFAULT_TARGET.arch}">, got {attribute}'
        )
    return attribute.target
