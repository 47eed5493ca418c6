"""Complex tensors as pairs of reals: an aten graph's complex values become real tensors with
a trailing dim of 2 (real, imaginary; `torch.view_as_real`'s layout), or their two parts,
computed by real ops.

    xc = aten.view_as_complex(x)               x: f32[8, 4, 2]
    y = aten.mul.Tensor(xc, freqs)             freqs: c64[8, 4] (a graph input)
    out = aten.view_as_real(y)

becomes

    f = aten.view_as_real(freqs)               at the boundary: a view PyTorch makes
    xr, xi = aten.select.int(x, -1, 0), aten.select.int(x, -1, 1)
    fr, fi = aten.select.int(f, -1, 0), aten.select.int(f, -1, 1)
    out = aten.cat([unsqueeze(xr * fr - xi * fi, -1), unsqueeze(xr * fi + xi * fr, -1)], -1)

so that rotary embeddings written with complex numbers (Meta's Llama, torchtitan:
`view_as_complex`, `torch.polar`, a complex product, `view_as_real`) compile like any other
elementwise work. A value is held as its parts where an op made them (the product's two
sums above) and as its pair where it came as one (`x`), each made from the other only where
an op needs it: a chain of complex ops computes on parts throughout, never taking apart a
pair it has just put together (which fusion would compute twice over at each step).

`RULES` (listed by `COMPLEX_OPS`) say how each op computes on pairs or parts. Any other op
that reads a complex value reads it through `view_as_complex` of its pair, and a complex
value no rule made (a graph input, or the result of an op no rule takes) is paired by
`view_as_real`: those boundary views carry `BOUNDARY` in their meta, saying why they are
there. Under `torch.compile` they run in PyTorch, where they copy nothing (and so does an op
no rule takes); the importer refuses them with that reason. For an exported program
(`retype_inputs`), the complex inputs are typed as their pairs instead, and
`forward_arguments` passes them as `torch.view_as_real` views.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable
from functools import cached_property
from typing import Any

import torch
from torch._guards import detect_fake_mode
from torch.fx import Graph, Node
from torch.utils._pytree import tree_map

aten = torch.ops.aten

BOUNDARY = "emmy.complex_boundary"
"""The meta key of a boundary view: its value says what reads or makes the complex tensor."""

KEPT_META = ("stack_trace", "torch_fn", "nn_module_stack", "source_fn_stack", "from_node")
"""The meta a new node takes from the node it computes (for the user's line)."""

Part = Node | float | None
"""A real or imaginary part: a real tensor, a Python number, or None for a zero."""

Parts = tuple[Node, Node]
"""A complex value's two parts, real tensors of its shape."""


def as_pairs(values: list[Any]) -> list[Any]:
    """Arguments for a program whose complex inputs are typed as their pairs: each complex
    tensor as `torch.view_as_real` of it (a view)."""
    return [
        torch.view_as_real(v) if isinstance(v, torch.Tensor) and v.is_complex() else v
        for v in values
    ]


def is_complex(arg: Any) -> bool:
    value = arg.meta.get("val") if isinstance(arg, Node) else None
    return isinstance(value, torch.Tensor) and value.is_complex()


class _Pairs:
    """Rewrites one graph in place: each complex node has its pair (`pairs`: a real node whose
    last dim holds the two parts) or its parts (`known`) or both, the other made on demand;
    new nodes are inserted before the node being rewritten (`at`), with its meta (so its
    stack trace: the user's line)."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.pairs: dict[Node, Node] = {}
        self.known: dict[Node, Parts] = {}
        self.retyped: dict[Node, torch.Tensor] = {}
        """The complex example values of the inputs that are their own pairs (`retype_inputs`)."""
        self.at: Node | None = None
        self.emitted: list[Node] = []
        """The nodes the rule being applied has made (erased again if it fails)."""
        self.all_emitted: list[Node] = []
        """Every node the rules have made (those left unused are erased at the end)."""

    def emit(self, target: Any, *args: Any, **kwargs: Any) -> Node:
        node = self.graph.call_function(target, args, kwargs)
        self.emitted.append(node)
        assert self.at is not None
        node.meta = {key: value for key, value in self.at.meta.items() if key in KEPT_META}

        def example(arg: Any) -> Any:
            return arg.meta["val"] if isinstance(arg, Node) else arg

        with self.fake_mode or contextlib.nullcontext():
            node.meta["val"] = target(*tree_map(example, args), **tree_map(example, kwargs))
        return node

    @cached_property
    def fake_mode(self) -> Any:
        """The graph's fake tensor mode, for the example values of new nodes (a factory's
        too); looked for only in a graph that has complex values."""
        values = [n.meta.get("val") for n in self.graph.nodes]
        return detect_fake_mode([v for v in values if isinstance(v, torch.Tensor)])

    def boundary(self, target: Any, value: Node, why: str) -> Node:
        node = self.emit(target, value)
        node.meta[BOUNDARY] = why
        return node

    # --- values ------------------------------------------------------------------------------

    def value(self, node: Node) -> torch.Tensor:
        """The node's example value: a retyped input's is the complex one."""
        return self.retyped.get(node, node.meta["val"])

    def is_complex(self, arg: Any) -> bool:
        return arg in self.retyped or is_complex(arg)

    def pair_of(self, a: Node) -> Node:
        if a not in self.pairs:
            columns = [self.emit(aten.unsqueeze.default, part, -1) for part in self.known[a]]
            self.pairs[a] = self.emit(aten.cat.default, columns, -1)
        return self.pairs[a]

    def parts_of(self, a: Node) -> Parts:
        if a not in self.known:
            pair = self.pairs[a]
            self.known[a] = (
                self.emit(aten.select.int, pair, -1, 0),
                self.emit(aten.select.int, pair, -1, 1),
            )
        return self.known[a]

    def parts(self, arg: Any) -> tuple[Part, Part]:
        """(real, imaginary) of an operand: a complex node, a real node, or a number."""
        if self.is_complex(arg):
            return self.parts_of(arg)
        if isinstance(arg, complex):
            return arg.real, arg.imag
        return arg, None

    def assemble(self, real: Part, imaginary: Part, shape: Any = None) -> Parts:
        """Two parts as nodes of `shape` (by default the rewritten node's) and of the
        rewritten node's parts' dtype."""
        assert self.at is not None
        value = self.at.meta["val"]
        part_dtype = value.real.dtype if value.is_complex() else value.dtype
        shape = list(value.shape if shape is None else shape)

        def full(part: Part) -> Node:
            if not isinstance(part, Node):
                part = self.emit(
                    aten.full.default, shape, part or 0.0, dtype=part_dtype, device=value.device
                )
            if part.meta["val"].dtype != part_dtype:
                part = self.emit(aten._to_copy.default, part, dtype=part_dtype)
            if list(part.meta["val"].shape) != shape:
                part = self.emit(aten.expand.default, part, shape)
            return part

        return full(real), full(imaginary)

    # --- arithmetic on parts -----------------------------------------------------------------

    def combine(self, target: Any, a: Part, b: Part) -> Part:
        """`target` (mul, add or sub) of two parts, where None is zero."""
        if target is aten.mul.Tensor and (a is None or b is None):
            return None
        if b is None:
            return a
        if a is None:
            return b if target is aten.add.Tensor else self.apply(aten.neg.default, b)
        if not isinstance(a, Node) and not isinstance(b, Node):
            return {aten.mul.Tensor: operator.mul, aten.add.Tensor: operator.add}.get(
                target, operator.sub
            )(a, b)
        if not isinstance(a, Node):
            a, b = (b, a) if target is not aten.sub.Tensor else (self.apply(aten.neg.default, b), a)
            target = aten.add.Tensor if target is aten.sub.Tensor else target
        return self.emit(target, a, b)

    def apply(self, target: Any, part: Part) -> Part:
        """A unary real op of a part (a number's is computed here)."""
        if isinstance(part, Node):
            return self.emit(target, part)
        result = float(target(torch.tensor(part or 0.0, dtype=torch.float64)))
        return None if part is None and result == 0 else result

    def divided(self, part: Part, denominator: Part) -> Part:
        if part is None:
            return None
        if isinstance(part, Node):
            return self.emit(aten.div.Tensor, part, denominator)
        if isinstance(denominator, Node):
            return self.emit(aten.mul.Tensor, self.emit(aten.reciprocal.default, denominator), part)
        return part / denominator

    # --- the ops -----------------------------------------------------------------------------

    def product(self, a: Any, b: Any) -> Parts:
        (ar, ai), (br, bi) = self.parts(a), self.parts(b)
        mul, add, sub = aten.mul.Tensor, aten.add.Tensor, aten.sub.Tensor
        real = self.combine(sub, self.combine(mul, ar, br), self.combine(mul, ai, bi))
        imaginary = self.combine(add, self.combine(mul, ar, bi), self.combine(mul, ai, br))
        return self.assemble(real, imaginary)

    def quotient(self, a: Any, b: Any) -> Parts:
        (ar, ai), (br, bi) = self.parts(a), self.parts(b)
        mul, add, sub = aten.mul.Tensor, aten.add.Tensor, aten.sub.Tensor
        if bi is None:
            real, imaginary, denominator = ar, ai, br
        else:
            real = self.combine(add, self.combine(mul, ar, br), self.combine(mul, ai, bi))
            imaginary = self.combine(sub, self.combine(mul, ai, br), self.combine(mul, ar, bi))
            denominator = self.combine(add, self.combine(mul, br, br), self.combine(mul, bi, bi))
        return self.assemble(*(self.divided(part, denominator) for part in (real, imaginary)))

    def sum_or_difference(self, target: Any, a: Any, b: Any, alpha: Any = 1) -> Parts:
        (ar, ai), (br, bi) = self.parts(a), self.parts(b)
        if alpha != 1:
            (br, bi) = (self.combine(aten.mul.Tensor, part, alpha) for part in (br, bi))
        return self.assemble(self.combine(target, ar, br), self.combine(target, ai, bi))

    def exponential(self, a: Node) -> Parts:
        real, imaginary = self.parts(a)
        return self.polar(self.apply(aten.exp.default, real), imaginary)

    def polar(self, magnitude: Part, angle: Part) -> Parts:
        cos, sin = (self.apply(f, angle) for f in (aten.cos.default, aten.sin.default))
        return self.assemble(
            self.combine(aten.mul.Tensor, magnitude, cos),
            self.combine(aten.mul.Tensor, magnitude, sin),
        )

    def conjugate(self, a: Node) -> Parts:
        real, imaginary = self.parts(a)
        return self.assemble(real, self.apply(aten.neg.default, imaginary))

    def real_view(self, a: Node) -> Node:
        """`view_as_real` of `a`: its pair, as a node of its own (an input that is its own pair
        is complex to the rules, its view real)."""
        pair = self.pair_of(a)
        return self.emit(aten.alias.default, pair) if pair is a else pair

    def viewed(
        self, target: Any, a: Node, *args: Any, pair_args: Any = None, **kwargs: Any
    ) -> Node | Parts:
        """`target` (a view, a copy, a reduction: an op of the two parts alike, given the
        complex tensor's dims as `dims` makes them) of the parts where the value is held as
        them, else of its pair (with `pair_args`, if given, for the pair's extra dim)."""
        kwargs = {key: _real_dtype(value) for key, value in kwargs.items()}
        if a in self.pairs:
            return self.emit(
                target, self.pairs[a], *(args if pair_args is None else pair_args), **kwargs
            )
        real, imaginary = self.parts_of(a)
        return self.emit(target, real, *args, **kwargs), self.emit(
            target, imaginary, *args, **kwargs
        )

    def rank(self, a: Node) -> int:
        return self.value(a).dim()

    def dims(self, a: Node, dims: Any) -> Any:
        """Dims of the complex tensor `a`, not negative (so the same dims of its pair)."""
        rank = self.rank(a)
        if isinstance(dims, int):
            return dims % rank if rank else 0
        return [d % rank for d in dims]


def _real_dtype(dtype: Any) -> Any:
    return dtype.to_real() if isinstance(dtype, torch.dtype) and dtype.is_complex else dtype


def _reduced(target: Any) -> Rule:
    def rule(p: _Pairs, a: Node, dims: Any = None, keepdim: bool = False, **kwargs: Any) -> Any:
        dims = list(range(p.rank(a))) if not dims else p.dims(a, dims)
        return p.viewed(target, a, dims, keepdim, **kwargs)

    return rule


def _to_copy(p: _Pairs, a: Node, **kwargs: Any) -> Node | Parts:
    """A copy: to another complex dtype (its parts' dtype), or to a real one (the real part,
    as torch takes it)."""
    dtype = kwargs.get("dtype")
    if dtype is None or dtype.is_complex:
        return p.viewed(aten._to_copy.default, a, **kwargs)
    return p.emit(aten._to_copy.default, p.parts_of(a)[0], **kwargs)


def _squeeze(p: _Pairs, a: Node, dims: Any = None) -> Node | Parts:
    if dims is None:
        dims = [d for d, size in enumerate(p.value(a).shape) if size == 1]
    return p.viewed(aten.squeeze.dims, a, p.dims(a, [dims] if isinstance(dims, int) else dims))


def _reshape(p: _Pairs, target: Any, a: Node, size: Any) -> Node | Parts:
    if a in p.pairs:
        return p.emit(target, p.pairs[a], [*size, 2])
    return p.viewed(aten.reshape.default, a, size)


def _slice(
    p: _Pairs, a: Node, dim: int = 0, start: Any = None, end: Any = None, step: int = 1
) -> Node | Parts:
    return p.viewed(aten.slice.Tensor, a, p.dims(a, dim), start, end, step)


def _cat(p: _Pairs, tensors: list[Any], dim: int = 0) -> Parts:
    parts = [
        p.parts_of(t) if p.is_complex(t) else p.assemble(t, None, t.meta["val"].shape)
        for t in tensors
    ]
    dim = p.dims(tensors[0], dim)
    return (
        p.emit(aten.cat.default, [real for real, _ in parts], dim),
        p.emit(aten.cat.default, [imaginary for _, imaginary in parts], dim),
    )


Rule = Callable[..., Any]


def _filled(fill: float | None) -> Rule:
    """The rule of a factory of a complex tensor filled with a real number (None: zero)."""
    return lambda p, *_, **__: p.assemble(fill, None)


RULES: dict[Any, Rule] = {
    aten.view_as_complex.default: lambda p, x: x,
    aten.view_as_real.default: lambda p, a: p.real_view(a),
    aten.complex.default: lambda p, real, imaginary: p.assemble(real, imaginary),
    aten.polar.default: lambda p, magnitude, angle: p.polar(magnitude, angle),
    aten.mul.Tensor: lambda p, a, b: p.product(a, b),
    aten.mul.Scalar: lambda p, a, b: p.product(a, b),
    aten.div.Tensor: lambda p, a, b: p.quotient(a, b),
    aten.div.Scalar: lambda p, a, b: p.quotient(a, b),
    aten.add.Tensor: lambda p, a, b, alpha=1: p.sum_or_difference(aten.add.Tensor, a, b, alpha),
    aten.add.Scalar: lambda p, a, b, alpha=1: p.sum_or_difference(aten.add.Tensor, a, b, alpha),
    aten.sub.Tensor: lambda p, a, b, alpha=1: p.sum_or_difference(aten.sub.Tensor, a, b, alpha),
    aten.sub.Scalar: lambda p, a, b, alpha=1: p.sum_or_difference(aten.sub.Tensor, a, b, alpha),
    aten.neg.default: lambda p, a: p.viewed(aten.neg.default, a),
    aten.exp.default: lambda p, a: p.exponential(a),
    aten._conj.default: lambda p, a: p.conjugate(a),
    aten.conj_physical.default: lambda p, a: p.conjugate(a),
    aten.abs.default: lambda p, a: p.emit(aten.hypot.default, *p.parts_of(a)),
    aten.angle.default: lambda p, a: p.emit(aten.atan2.default, *reversed(p.parts_of(a))),
    aten.real.default: lambda p, a: p.parts_of(a)[0],
    aten.imag.default: lambda p, a: p.parts_of(a)[1],
    aten.clone.default: lambda p, a, **_: p.viewed(aten.clone.default, a),
    aten.alias.default: lambda p, a: p.viewed(aten.alias.default, a),
    aten.view.default: lambda p, a, size: _reshape(p, aten.view.default, a, size),
    aten._unsafe_view.default: lambda p, a, size: _reshape(p, aten.view.default, a, size),
    aten.reshape.default: lambda p, a, size: _reshape(p, aten.reshape.default, a, size),
    aten.expand.default: lambda p, a, size, **_: p.viewed(
        aten.expand.default, a, size, pair_args=([*size, 2],)
    ),
    aten.unsqueeze.default: lambda p, a, dim: p.viewed(
        aten.unsqueeze.default, a, dim % (p.rank(a) + 1)
    ),
    aten.squeeze.default: lambda p, a: _squeeze(p, a),
    aten.squeeze.dim: _squeeze,
    aten.squeeze.dims: _squeeze,
    aten.permute.default: lambda p, a, dims: p.viewed(
        aten.permute.default, a, p.dims(a, dims), pair_args=([*p.dims(a, dims), p.rank(a)],)
    ),
    aten.transpose.int: lambda p, a, d0, d1: p.viewed(aten.transpose.int, a, *p.dims(a, [d0, d1])),
    aten.slice.Tensor: _slice,
    aten.select.int: lambda p, a, dim, index: p.viewed(aten.select.int, a, p.dims(a, dim), index),
    aten.flip.default: lambda p, a, dims: p.viewed(aten.flip.default, a, p.dims(a, dims)),
    aten.index.Tensor: lambda p, a, indices: p.viewed(aten.index.Tensor, a, indices),
    aten.cat.default: _cat,
    aten.sum.dim_IntList: _reduced(aten.sum.dim_IntList),
    aten.sum.default: _reduced(aten.sum.dim_IntList),
    aten.mean.dim: _reduced(aten.mean.dim),
    aten._to_copy.default: _to_copy,
    aten.zeros.default: _filled(None),
    aten.zeros_like.default: _filled(None),
    aten.new_zeros.default: _filled(None),
    aten.ones.default: _filled(1.0),
    aten.ones_like.default: _filled(1.0),
    aten.new_ones.default: _filled(1.0),
    aten.full.default: lambda p, size, fill, **_: p.assemble(*p.parts(fill)),
    aten.full_like.default: lambda p, a, fill, **_: p.assemble(*p.parts(fill)),
    aten.new_full.default: lambda p, a, size, fill, **_: p.assemble(*p.parts(fill)),
}
"""How each op computes on complex operands: given the rewriter and the node's arguments, a
complex result's pair (a node) or parts (two), or a real result."""

COMPLEX_OPS = sorted(str(op) for op in RULES)
"""The ops taken on complex operands (for the README's table)."""

COMPLEX_REFUSAL = (
    "emmy takes complex tensors, as pairs of reals, through the ops the README lists for them"
)


def complex_as_real_pairs(graph: Graph, retype_inputs: bool = False) -> bool:
    """Rewrites `graph`'s complex values as pairs of reals (see the module docstring);
    with `retype_inputs`, a complex placeholder's example value becomes its pair's (the
    caller passes `torch.view_as_real` of the input). Whether the graph changed."""
    rewriter = _Pairs(graph)
    made: list[Node] = []
    for node in list(graph.nodes):
        rewriter.at = node
        if node.op == "placeholder" and is_complex(node):
            if retype_inputs:
                rewriter.retyped[node] = node.meta["val"]
                node.meta["val"] = torch.view_as_real(node.meta["val"])
                rewriter.pairs[node] = node
                continue
            with graph.inserting_after(node):
                rewriter.pairs[node] = rewriter.boundary(
                    aten.view_as_real.default, node, "a complex input"
                )
            continue
        reads_complex = any(rewriter.is_complex(arg) for arg in node.all_input_nodes)
        if node.op != "call_function" or not (reads_complex or is_complex(node)):
            if reads_complex:
                _read_through_boundaries(rewriter, node)
            continue
        rule = RULES.get(node.target)
        with graph.inserting_before(node):
            result = _apply(rule, rewriter, node) if rule is not None else None
        if result is None:
            _read_through_boundaries(rewriter, node)
            if is_complex(node):
                with graph.inserting_after(node):
                    rewriter.at = node
                    rewriter.pairs[node] = rewriter.boundary(
                        aten.view_as_real.default, node, f"'{node.target}' of complex tensors"
                    )
        elif is_complex(node):
            if isinstance(result, tuple):
                rewriter.known[node] = result
            else:
                rewriter.pairs[node] = result
            made.append(node)
        else:
            node.replace_all_uses_with(result, propagate_meta=False)
            graph.erase_node(node)
    # What was made on demand and not used, then the complex nodes, all read through parts.
    for node in [*reversed(rewriter.all_emitted), *reversed(made)]:
        if not node.users and BOUNDARY not in node.meta:
            graph.erase_node(node)
    return bool(made) or bool(rewriter.pairs)


def _apply(rule: Rule, rewriter: _Pairs, node: Node) -> Any:
    """The rule's result, or None where it does not take the node's form (an operand of a
    kind it has no case for), having added nothing to the graph."""
    rewriter.emitted = []
    held = dict(rewriter.pairs), dict(rewriter.known)
    try:
        result = rule(rewriter, *node.args, **node.kwargs)
    except (KeyError, TypeError, AttributeError, RuntimeError):
        for made in reversed(rewriter.emitted):
            rewriter.graph.erase_node(made)
        rewriter.pairs, rewriter.known = held
        return None
    rewriter.all_emitted.extend(rewriter.emitted)
    return result


def _read_through_boundaries(rewriter: _Pairs, node: Node) -> None:
    """`node`, which no rule takes, reads each complex operand as `view_as_complex` of its
    pair: complex again, for PyTorch to compute (or the importer to refuse)."""
    reason = "a complex result" if node.op == "output" else f"'{node.target}' of complex tensors"
    for arg in [a for a in node.all_input_nodes if rewriter.is_complex(a)]:
        with rewriter.graph.inserting_before(node):
            rewriter.at = arg
            rewriter.emitted = []
            complex_again = rewriter.boundary(
                aten.view_as_complex.default, rewriter.pair_of(arg), reason
            )
            rewriter.all_emitted.extend(rewriter.emitted)
        node.replace_input_with(arg, complex_again)
