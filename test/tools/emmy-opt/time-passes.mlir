// --time-passes (or MLIR's --mlir-timing) reports the wall time of each pass, and of parsing,
// verifying and printing, on stderr after the output.

// RUN: emmy-opt %s --time-passes --cse --canonicalize -o %t 2>&1 | filecheck %s
// RUN: emmy-opt %s --mlir-timing --cse --canonicalize -o %t 2>&1 | filecheck %s

// CHECK:      ... Execution time report ...
// CHECK:      Total Execution Time: {{[0-9.]+}} seconds
// CHECK:      ----Wall Time----  ----Name----
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Parser
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  cse
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  canonicalize
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Verifier
// CHECK-NEXT: {{[0-9.]+}} ({{ *[0-9.]+}}%)  Output
// CHECK-NEXT: {{[0-9.]+}} (100.0%)  Total
func.func @f(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  func.return %y : f32
}
