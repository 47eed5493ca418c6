// RUN: emmy-opt %s --split-input-file --place-results-in-arguments | filecheck %s

// A cache's update, whose result the caller copies into the cache (result 0 into argument
// 0): the kernel reads each element of the cache where it then stores the result, so it
// stores into the cache itself; the attention after it reads the cache, and the function
// returns it.

// CHECK-LABEL: loop.kernel @k_update(
// CHECK-SAME:    %[[C:[a-z0-9_]+]]: memref<4x8xf32>, %[[K:[a-z0-9_]+]]: memref<8xf32>, %[[HERE:[a-z0-9_]+]]: memref<4xi1>) {
// CHECK:           %[[OLD:.*]] = loop.load %[[C]][%[[I:.*]], %[[J:.*]]] : memref<4x8xf32>
// CHECK:           loop.store %{{.*}}, %[[C]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[CACHE:[a-z0-9_]+]]: memref<4x8xf32>, %[[KEY:[a-z0-9_]+]]: memref<8xf32>, %[[AT:[a-z0-9_]+]]: memref<4xi1>, %[[Q:[a-z0-9_]+]]: memref<1x8xf32>)
// CHECK-NOT:     memref.alloc() : memref<4x8xf32>
// CHECK:         loop.launch @k_update(%[[CACHE]], %[[KEY]], %[[AT]]) : memref<4x8xf32>, memref<8xf32>, memref<4xi1>
// CHECK:         loop.launch @k_read(%[[Q]], %[[CACHE]], %{{.*}})
// CHECK:         func.return %[[CACHE]], %{{.*}} : memref<4x8xf32>, memref<1x4xf32>

builtin.module attributes {emmy.results_in_arguments = [[0 : i64, 0 : i64]]} {
  loop.kernel @k_update(%cache: memref<4x8xf32>, %k: memref<8xf32>, %here: memref<4xi1>, %out: memref<4x8xf32>) {
    loop.for %i in 0 to 4 {
      %at = loop.load %here[%i] : memref<4xi1>
      loop.for %j in 0 to 8 {
        %new = loop.load %k[%j] : memref<8xf32>
        %old = loop.load %cache[%i, %j] : memref<4x8xf32>
        %v = arith.select %at, %new, %old : f32
        loop.store %v, %out[%i, %j] : memref<4x8xf32>
      }
    }
  }
  loop.kernel @k_read(%q: memref<1x8xf32>, %c: memref<4x8xf32>, %s: memref<1x4xf32>) {
    %c0 = arith.constant 0 : index
    loop.for %i in 0 to 4 {
      %d = loop.for %j in 0 to 8 reduce add init 0.0 : f32 {
        %a = loop.load %q[%c0, %j] : memref<1x8xf32>
        %b = loop.load %c[%i, %j] : memref<4x8xf32>
        %p = arith.mulf %a, %b : f32
        loop.yield %p : f32
      }
      loop.store %d, %s[%c0, %i] : memref<1x4xf32>
    }
  }
  func.func @forward(%cache: memref<4x8xf32>, %k: memref<8xf32>, %here: memref<4xi1>, %q: memref<1x8xf32>) -> (memref<4x8xf32>, memref<1x4xf32>) {
    %new = memref.alloc() : memref<4x8xf32>
    loop.launch @k_update(%cache, %k, %here, %new) : memref<4x8xf32>, memref<8xf32>, memref<4xi1>, memref<4x8xf32>
    %s = memref.alloc() : memref<1x4xf32>
    loop.launch @k_read(%q, %new, %s) : memref<1x8xf32>, memref<4x8xf32>, memref<1x4xf32>
    func.return %new, %s : memref<4x8xf32>, memref<1x4xf32>
  }
}

// -----

// Not placed: the kernel reads the cache also where it does not store (its row sums, another
// loop nest), which would then see new values.

// CHECK-LABEL: loop.kernel @k_update_and_sum(
// CHECK-SAME:    %{{.*}}: memref<4xf32>)
// CHECK-LABEL: func.func @forward(
// CHECK:         %[[NEW:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         func.return %[[NEW]], %{{.*}} : memref<4x8xf32>, memref<4xf32>

builtin.module attributes {emmy.results_in_arguments = [[0 : i64, 0 : i64]]} {
  loop.kernel @k_update_and_sum(%cache: memref<4x8xf32>, %k: memref<8xf32>, %out: memref<4x8xf32>, %sums: memref<4xf32>) {
    loop.for %i in 0 to 4 {
      loop.for %j in 0 to 8 {
        %new = loop.load %k[%j] : memref<8xf32>
        %old = loop.load %cache[%i, %j] : memref<4x8xf32>
        %v = arith.addf %new, %old : f32
        loop.store %v, %out[%i, %j] : memref<4x8xf32>
      }
      %t = loop.for %j2 in 0 to 8 reduce add init 0.0 : f32 {
        %o = loop.load %cache[%i, %j2] : memref<4x8xf32>
        loop.yield %o : f32
      }
      loop.store %t, %sums[%i] : memref<4xf32>
    }
  }
  func.func @forward(%cache: memref<4x8xf32>, %k: memref<8xf32>) -> (memref<4x8xf32>, memref<4xf32>) {
    %new = memref.alloc() : memref<4x8xf32>
    %sums = memref.alloc() : memref<4xf32>
    loop.launch @k_update_and_sum(%cache, %k, %new, %sums) : memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>, memref<4xf32>
    func.return %new, %sums : memref<4x8xf32>, memref<4xf32>
  }
}

// -----

// Not placed: a later launch reads the cache's old value; and without the module's attribute
// nothing is placed.

// CHECK-LABEL: func.func @forward(
// CHECK:         %[[NEW:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         loop.launch @k_add(%[[CACHE:.*]], %{{.*}}, %[[NEW]])
// CHECK:         loop.launch @k_copy(%[[CACHE]], %{{.*}})
// CHECK:         func.return %[[NEW]], %{{.*}}

builtin.module attributes {emmy.results_in_arguments = [[0 : i64, 0 : i64]]} {
  loop.kernel @k_add(%cache: memref<4x8xf32>, %k: memref<8xf32>, %out: memref<4x8xf32>) {
    loop.for %i in 0 to 4 {
      loop.for %j in 0 to 8 {
        %new = loop.load %k[%j] : memref<8xf32>
        %old = loop.load %cache[%i, %j] : memref<4x8xf32>
        %v = arith.addf %new, %old : f32
        loop.store %v, %out[%i, %j] : memref<4x8xf32>
      }
    }
  }
  loop.kernel @k_copy(%cache: memref<4x8xf32>, %out: memref<4x8xf32>) {
    loop.for %i in 0 to 4 {
      loop.for %j in 0 to 8 {
        %old = loop.load %cache[%i, %j] : memref<4x8xf32>
        loop.store %old, %out[%i, %j] : memref<4x8xf32>
      }
    }
  }
  func.func @forward(%cache: memref<4x8xf32>, %k: memref<8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>) {
    %new = memref.alloc() : memref<4x8xf32>
    loop.launch @k_add(%cache, %k, %new) : memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>
    %old = memref.alloc() : memref<4x8xf32>
    loop.launch @k_copy(%cache, %old) : memref<4x8xf32>, memref<4x8xf32>
    func.return %new, %old : memref<4x8xf32>, memref<4x8xf32>
  }
}

// -----

// CHECK-LABEL: func.func @forward(
// CHECK:         %[[NEW:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK:         func.return %[[NEW]]

builtin.module {
  loop.kernel @k_add(%cache: memref<4x8xf32>, %k: memref<8xf32>, %out: memref<4x8xf32>) {
    loop.for %i in 0 to 4 {
      loop.for %j in 0 to 8 {
        %new = loop.load %k[%j] : memref<8xf32>
        %old = loop.load %cache[%i, %j] : memref<4x8xf32>
        %v = arith.addf %new, %old : f32
        loop.store %v, %out[%i, %j] : memref<4x8xf32>
      }
    }
  }
  func.func @forward(%cache: memref<4x8xf32>, %k: memref<8xf32>) -> memref<4x8xf32> {
    %new = memref.alloc() : memref<4x8xf32>
    loop.launch @k_add(%cache, %k, %new) : memref<4x8xf32>, memref<8xf32>, memref<4x8xf32>
    func.return %new : memref<4x8xf32>
  }
}
