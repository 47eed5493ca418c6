// Bad programs are located errors, never tracebacks.

// RUN: not emmy compile -c "nn.RMSNorm(8)(torch.randn(2, 8)).cumsum(0)" 2>&1 | filecheck %s --check-prefix=LAST
// LAST: <source>:1:1: error: {{.*}}
// LAST-NOT: Traceback

// RUN: not emmy compile -c "torch.cumsum" 2>&1 | filecheck %s --check-prefix=NOTCALL
// NOTCALL: <source>:1:1: error:
// NOTCALL-NOT: Traceback

// RUN: not emmy compile %S/Inputs/unsupported.py --ir loop 2>&1 | filecheck %s --check-prefix=UNKNOWN-OP
// UNKNOWN-OP: unsupported.py:3:{{[0-9]+}}: error: {{.*}}aten.cumsum
// UNKNOWN-OP-NEXT: return torch.cumsum(x, dim=0)
// UNKNOWN-OP-NOT: Traceback

// RUN: not emmy compile -c "nn.RMSNorm(8)(torch.randn(2, 8)" 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX: <source>:1:{{[0-9]+}}: error: invalid Python
