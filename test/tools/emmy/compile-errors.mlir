// Bad programs are located errors, never tracebacks.

// RUN: not emmy compile -c "nn.RMSNorm(8)(torch.randn(2, 8)).cumsum(0)" 2>&1 | filecheck %s --check-prefix=LAST
// LAST: <source>:1:1: error: {{.*}}
// LAST-NOT: Traceback

// RUN: not emmy compile -c "torch.cumsum" 2>&1 | filecheck %s --check-prefix=NOTCALL
// NOTCALL: <source>:1:1: error:
// NOTCALL-NOT: Traceback

// RUN: not emmy compile %S/Inputs/unsupported.py --ir loop 2>&1 | filecheck %s --check-prefix=UNKNOWN-OP
// UNKNOWN-OP: unsupported.py:3:30: error: unsupported PyTorch op 'aten.special_ndtri.default'
// UNKNOWN-OP-NEXT: return torch.special.ndtri(x)
// UNKNOWN-OP-NOT: Traceback

// RUN: not emmy compile -c "nn.RMSNorm(8)(torch.randn(2, 8)" 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX: <source>:1:{{[0-9]+}}: error: invalid Python

// A form of an op that Torch IR does not take is the user's error at the call, not an
// internal error: here a bf16 input with the fp32 weight of an RMSNorm left in fp32.
// RUN: not emmy compile -c "nn.RMSNorm(8)(torch.randn(2, 8, dtype=torch.bfloat16))" 2>&1 | filecheck %s --check-prefix=MIXED
// MIXED: <source>:1:1: error: unsupported form of PyTorch op 'aten.rms_norm.default': operands must share one element type, got bf16, bf16, f32
// MIXED-NOT: internal error
// MIXED-NOT: Traceback

// Every op Torch IR cannot take is reported in one run, each at its line; an op that only
// reads one of them (line 5) is not.
// RUN: not emmy compile %S/Inputs/several-unsupported.py 2>&1 | filecheck %s --check-prefix=SEVERAL
// SEVERAL: several-unsupported.py:3:27: error: unsupported PyTorch op 'aten.special_ndtri.default'
// SEVERAL: several-unsupported.py:4:19: error: unsupported PyTorch op 'aten.i0.default'
// SEVERAL-NOT: several-unsupported.py:5:
// SEVERAL: several-unsupported.py:6:33: error: unsupported PyTorch op 'aten.special_ndtri.default'
// SEVERAL-NOT: error

// A program that mutates a buffer in place is refused at the mutation: `emmy compile` runs
// the module once and keeps no state to write back into.
// RUN: not emmy compile %S/Inputs/mutates-a-buffer.py 2>&1 | filecheck %s --check-prefix=MUTATES
// MUTATES: mutates-a-buffer.py:11:20: error: the program mutates its buffer 'count' in place, which `emmy compile` does not write back; `emmy.compile` and `torch.compile(..., backend="emmy")` do
// MUTATES-NEXT: self.count.add_(x)
// MUTATES-NOT: Traceback
