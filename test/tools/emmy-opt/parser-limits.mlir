// Input past the parser's limits is an error at the input, not an internal error: regions
// nested hundreds deep, and an integer literal longer than Python converts by default (read
// whole, then judged by its type).

// RUN: %python -c "n = 300; print('func.func @f() {'); print(''.join('\"test.op\"() ({' for _ in range(n))); print('}) : () -> ()' * n); print('func.return }')" > %t.deep.mlir
// RUN: not emmy-opt --allow-unregistered-dialect %t.deep.mlir 2>&1 | filecheck %s --check-prefix=DEEP
// DEEP: deep.mlir:{{[0-9]+}}:{{[0-9]+}}: error: ops nested too deeply: regions nest at most about {{[0-9]+}} levels deep
// DEEP-NOT: internal error

// RUN: %python -c "print('func.func @f() -> i64 {'); print('  %%c = arith.constant ' + '9' * 5000 + ' : i64'); print('  func.return %%c : i64'); print('}')" > %t.long.mlir
// RUN: not emmy-opt %t.long.mlir 2>&1 | filecheck %s --check-prefix=LONG
// LONG: long.mlir:2:3: error: Integer value 9999{{9+}} is out of range for type i64
// LONG-NOT: internal error
