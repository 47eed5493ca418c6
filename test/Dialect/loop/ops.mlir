// RUN: emmy-opt %s | emmy-opt | filecheck %s
// RUN: emmy-opt %s --print-op-generic | emmy-opt | filecheck %s

// A parallel loop prints without its empty loop.yield; a reduction loop prints the
// contribution it yields.

// CHECK-LABEL: loop.kernel @k_rms_norm(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<32x2048xf32>, %[[W:[a-z0-9_]+]]: memref<2048xf32>, %[[Y:[a-z0-9_]+]]: memref<32x2048xf32>) {
// CHECK-NEXT:    %[[N:.*]] = arith.constant 2.048000e+03 : f32
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 32 {
// CHECK-NEXT:      %[[SS:.*]] = loop.for %[[J:.*]] in 0 to 2048 reduce add init 0.0 : f32 {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[X]][%[[I]], %[[J]]] : memref<32x2048xf32>
// CHECK-NEXT:        %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT:        loop.yield %[[SQ]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[SS]], %[[N]] : f32
// CHECK-NEXT:      %[[RS:.*]] = math.rsqrt %[[MEAN]] : f32
// CHECK-NEXT:      loop.for %[[K:.*]] in 0 to 2048 {
// CHECK-NEXT:        %[[XV:.*]] = loop.load %[[X]][%[[I]], %[[K]]] : memref<32x2048xf32>
// CHECK-NEXT:        %[[WV:.*]] = loop.load %[[W]][%[[K]]] : memref<2048xf32>
// CHECK-NEXT:        %[[U:.*]] = arith.mulf %[[XV]], %[[RS]] : f32
// CHECK-NEXT:        %[[O:.*]] = arith.mulf %[[U]], %[[WV]] : f32
// CHECK-NEXT:        loop.store %[[O]], %[[Y]][%[[I]], %[[K]]] : memref<32x2048xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_rms_norm(%x: memref<32x2048xf32>, %w: memref<2048xf32>, %y: memref<32x2048xf32>) {
  %n = arith.constant 2.048000e+03 : f32
  loop.for %i in 0 to 32 {
    %ss = loop.for %j in 0 to 2048 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %j] : memref<32x2048xf32>
      %sq = arith.mulf %v, %v : f32
      loop.yield %sq : f32
    }
    %mean = arith.divf %ss, %n : f32
    %rs = math.rsqrt %mean : f32
    loop.for %j in 0 to 2048 {
      %v = loop.load %x[%i, %j] : memref<32x2048xf32>
      %g = loop.load %w[%j] : memref<2048xf32>
      %u = arith.mulf %v, %rs : f32
      %o = arith.mulf %u, %g : f32
      loop.store %o, %y[%i, %j] : memref<32x2048xf32>
    }
  }
}

// A reduction over two axes nests two reduction loops; the inner one's result is the
// outer one's contribution.

// CHECK-LABEL: loop.kernel @k_nested_reductions(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<4x8x16xbf16>, %[[Y:[a-z0-9_]+]]: memref<4xbf16>) {
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 4 {
// CHECK-NEXT:      %[[M:.*]] = loop.for %[[J:.*]] in 0 to 8 reduce max init -inf : bf16 {
// CHECK-NEXT:        %[[R:.*]] = loop.for %[[K:.*]] in 0 to 16 reduce max init -inf : bf16 {
// CHECK-NEXT:          %[[V:.*]] = loop.load %[[X]][%[[I]], %[[J]], %[[K]]] : memref<4x8x16xbf16>
// CHECK-NEXT:          loop.yield %[[V]] : bf16
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.yield %[[R]] : bf16
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.store %[[M]], %[[Y]][%[[I]]] : memref<4xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_nested_reductions(%x: memref<4x8x16xbf16>, %y: memref<4xbf16>) {
  loop.for %i in 0 to 4 {
    %m = loop.for %j in 0 to 8 reduce max init -inf : bf16 {
      %r = loop.for %k in 0 to 16 reduce max init -inf : bf16 {
        %v = loop.load %x[%i, %j, %k] : memref<4x8x16xbf16>
        loop.yield %v : bf16
      }
      loop.yield %r : bf16
    }
    loop.store %m, %y[%i] : memref<4xbf16>
  }
}

// CHECK-LABEL: loop.kernel @k_index_arithmetic(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<16xf16>, %[[Y:[a-z0-9_]+]]: memref<8xf16>) {
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 8 {
// CHECK-NEXT:      %[[EVEN:.*]] = arith.muli %[[I]], %[[C2]] : index
// CHECK-NEXT:      %[[ODD:.*]] = arith.addi %[[EVEN]], %[[C1]] : index
// CHECK-NEXT:      %[[A:.*]] = loop.load %[[X]][%[[EVEN]]] : memref<16xf16>
// CHECK-NEXT:      %[[B:.*]] = loop.load %[[X]][%[[ODD]]] : memref<16xf16>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : f16
// CHECK-NEXT:      loop.store %[[S]], %[[Y]][%[[I]]] : memref<8xf16>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_index_arithmetic(%x: memref<16xf16>, %y: memref<8xf16>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.for %i in 0 to 8 {
    %even = arith.muli %i, %c2 : index
    %odd = arith.addi %even, %c1 : index
    %a = loop.load %x[%even] : memref<16xf16>
    %b = loop.load %x[%odd] : memref<16xf16>
    %s = arith.addf %a, %b : f16
    loop.store %s, %y[%i] : memref<8xf16>
  }
}

// Each combiner, on integers, from its identity or from another init, over a loop that
// need not start at 0.

// CHECK-LABEL: loop.kernel @k_integer_combiners(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<8xi32>, %[[Y:[a-z0-9_]+]]: memref<4xi32>) {
// CHECK:         %[[SUM:.*]] = loop.for %{{.*}} in 0 to 8 reduce add init 0 : i32 {
// CHECK:         %[[PROD:.*]] = loop.for %{{.*}} in 2 to 6 reduce mul init 1 : i32 {
// CHECK:         %[[MAX:.*]] = loop.for %{{.*}} in 0 to 8 reduce max init -2147483648 : i32 {
// CHECK:         %[[MIN:.*]] = loop.for %{{.*}} in 0 to 8 reduce min init 100 : i32 {
// CHECK:         loop.store %[[SUM]], %[[Y]][%{{.*}}] : memref<4xi32>
// CHECK-NEXT:    loop.store %[[PROD]], %[[Y]][%{{.*}}] : memref<4xi32>
// CHECK-NEXT:    loop.store %[[MAX]], %[[Y]][%{{.*}}] : memref<4xi32>
// CHECK-NEXT:    loop.store %[[MIN]], %[[Y]][%{{.*}}] : memref<4xi32>
loop.kernel @k_integer_combiners(%x: memref<8xi32>, %y: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %sum = loop.for %i in 0 to 8 reduce add init 0 : i32 {
    %v = loop.load %x[%i] : memref<8xi32>
    loop.yield %v : i32
  }
  %prod = loop.for %i in 2 to 6 reduce mul init 1 : i32 {
    %v = loop.load %x[%i] : memref<8xi32>
    loop.yield %v : i32
  }
  %max = loop.for %i in 0 to 8 reduce max init -2147483648 : i32 {
    %v = loop.load %x[%i] : memref<8xi32>
    loop.yield %v : i32
  }
  %min = loop.for %i in 0 to 8 reduce min init 100 : i32 {
    %v = loop.load %x[%i] : memref<8xi32>
    loop.yield %v : i32
  }
  loop.store %sum, %y[%c0] : memref<4xi32>
  loop.store %prod, %y[%c1] : memref<4xi32>
  loop.store %max, %y[%c2] : memref<4xi32>
  loop.store %min, %y[%c3] : memref<4xi32>
}

// Zero-trip loops are valid: the parallel one does nothing, the reduction returns its init.
// A rank-0 buffer takes no indices.

// CHECK-LABEL: loop.kernel @k_zero_trip(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<4xf32>, %[[Y:[a-z0-9_]+]]: memref<f32>) {
// CHECK-NEXT:    loop.for %[[I:.*]] in 3 to 3 {
// CHECK-NEXT:      %[[V:.*]] = loop.load %[[X]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      loop.store %[[V]], %[[X]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[E:.*]] = loop.for %{{.*}} in 0 to 0 reduce min init inf : f32 {
// CHECK:         loop.store %[[E]], %[[Y]][] : memref<f32>
// CHECK-NEXT:  }
loop.kernel @k_zero_trip(%x: memref<4xf32>, %y: memref<f32>) {
  loop.for %i in 3 to 3 {
    %v = loop.load %x[%i] : memref<4xf32>
    loop.store %v, %x[%i] : memref<4xf32>
  }
  %e = loop.for %i in 0 to 0 reduce min init inf : f32 {
    %v = loop.load %x[%i] : memref<4xf32>
    loop.yield %v : f32
  }
  loop.store %e, %y[] : memref<f32>
}

// Empty bodies print as empty braces, which parse back to the same ops.

// CHECK-LABEL: loop.kernel @k_empty() {
// CHECK-NEXT:  }
loop.kernel @k_empty() {
}

// CHECK-LABEL: loop.kernel @k_empty_loop(
// CHECK-SAME:    %{{.*}}: memref<4xf32>) {
// CHECK-NEXT:    loop.for %{{.*}} in 0 to 4 {
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_empty_loop(%x: memref<4xf32>) {
  loop.for %i in 0 to 4 {
  }
}

// Discardable attributes survive a round trip: before the types, or after the keyword
// `attributes` where a region follows.

// CHECK-LABEL: loop.kernel @k_attributes(
// CHECK-SAME:    %[[X:.*]]: memref<4xf32>) attributes {tag} {
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 4 attributes {tag = 4 : i64} {
// CHECK-NEXT:      %[[V:.*]] = loop.load %[[X]][%[[I]]] {tag} : memref<4xf32>
// CHECK-NEXT:      loop.store %[[V]], %[[X]][%[[I]]] {tag} : memref<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = loop.for %[[J:.*]] in 0 to 4 reduce add init 0.0 : f32 attributes {tag} {
// CHECK-NEXT:      %[[W:.*]] = loop.load %[[X]][%[[J]]] : memref<4xf32>
// CHECK-NEXT:      loop.yield {tag} %[[W]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_attributes(%x: memref<4xf32>) attributes {tag} {
  loop.for %i in 0 to 4 attributes {tag = 4 : i64} {
    %v = loop.load %x[%i] {tag} : memref<4xf32>
    loop.store %v, %x[%i] {tag} : memref<4xf32>
  }
  %s = loop.for %i in 0 to 4 reduce add init 0.0 : f32 attributes {tag} {
    %v = loop.load %x[%i] : memref<4xf32>
    loop.yield {tag} %v : f32
  }
}

// A reduction with a combiner region carries one accumulator per init: its body yields each
// iteration's (value, position), the combiner keeps the first maximum.

// CHECK-LABEL: loop.kernel @k_first_maximum(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<8xf32>, %[[Y:[a-z0-9_]+]]: memref<1xi64>) {
// CHECK-NEXT:    %{{.*}}, %[[I:.*]] = loop.for %[[J:.*]] in 0 to 8 reduce (%[[A:.*]]: f32, %[[AI:.*]]: i64, %[[B:.*]]: f32, %[[BI:.*]]: i64) init (-inf, 9223372036854775807) {
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[B]], %[[A]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.select %[[GT]], %[[B]], %[[A]] : f32
// CHECK-NEXT:      %[[MI:.*]] = arith.select %[[GT]], %[[BI]], %[[AI]] : i64
// CHECK-NEXT:      loop.yield %[[M]], %[[MI]] : f32, i64
// CHECK-NEXT:    } {
// CHECK-NEXT:      %[[V:.*]] = loop.load %[[X]][%[[J]]] : memref<8xf32>
// CHECK-NEXT:      %[[P:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:      loop.yield %[[V]], %[[P]] : f32, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    loop.store %[[I]], %[[Y]][%[[C0]]] : memref<1xi64>
// CHECK-NEXT:  }
loop.kernel @k_first_maximum(%x: memref<8xf32>, %y: memref<1xi64>) {
  %m, %i = loop.for %j in 0 to 8 reduce (%a: f32, %ai: i64, %b: f32, %bi: i64) init (-inf, 9223372036854775807) {
    %gt = arith.cmpf ogt, %b, %a : f32
    %m2 = arith.select %gt, %b, %a : f32
    %i2 = arith.select %gt, %bi, %ai : i64
    loop.yield %m2, %i2 : f32, i64
  } {
    %v = loop.load %x[%j] : memref<8xf32>
    %p = arith.index_cast %j : index to i64
    loop.yield %v, %p : f32, i64
  }
  %c0 = arith.constant 0 : index
  loop.store %i, %y[%c0] : memref<1xi64>
}

// A loop.contract names its parallel indices, the iteration space and the reduction extent,
// the accumulated value and each operand's indexing map (d0, d1, .. by position, k, or 0);
// its epilogue prints without its empty loop.yield. nn.Linear's [N, K] weight is read in
// place, as %w[d1, k].

// CHECK-LABEL: loop.kernel @k_linear(
// CHECK-SAME:    %[[W:[a-z0-9_]+]]: memref<32x64xbf16>, %[[B:[a-z0-9_]+]]: memref<32xbf16>, %[[X:[a-z0-9_]+]]: memref<16x64xbf16>, %[[Y:[a-z0-9_]+]]: memref<16x32xbf16>) {
// CHECK-NEXT:    loop.contract (%[[I:.*]], %[[J:.*]]) in [16, 32], k in 64, %[[ACC:.*]] = sum %[[X]][d0, k] * %[[W]][d1, k] : memref<16x64xbf16>, memref<32x64xbf16> -> f32 {
// CHECK-NEXT:      %[[BV:.*]] = loop.load %[[B]][%[[J]]] : memref<32xbf16>
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[BV]] : bf16 to f32
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[ACC]], %[[BF]] : f32
// CHECK-NEXT:      %[[O:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT:      loop.store %[[O]], %[[Y]][%[[I]], %[[J]]] : memref<16x32xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_linear(%w: memref<32x64xbf16>, %bias: memref<32xbf16>, %x: memref<16x64xbf16>, %y: memref<16x32xbf16>) {
  loop.contract (%i, %j) in [16, 32], k in 64, %acc = sum %x[d0, k] * %w[d1, k] : memref<16x64xbf16>, memref<32x64xbf16> -> f32 {
    %b = loop.load %bias[%j] : memref<32xbf16>
    %bf = arith.extf %b : bf16 to f32
    %r = arith.addf %acc, %bf : f32
    %o = arith.truncf %r : f32 to bf16
    loop.store %o, %y[%i, %j] : memref<16x32xbf16>
  }
}

// Two batch dims: the lhs is broadcast along d1 (its size-1 dim read at 0), the rhs along d0
// and read transposed ([n, k, batch]); f16 widens to f32, f32 is read as it is. An integer
// product accumulates in its own type; attributes print before the types.

// CHECK-LABEL: loop.kernel @k_batched(
// CHECK-SAME:    %[[A:[a-z0-9_]+]]: memref<4x1x8x16xf16>, %[[B:[a-z0-9_]+]]: memref<5x16x3xf32>, %[[C:[a-z0-9_]+]]: memref<4x3x8x5xf32>) {
// CHECK-NEXT:    loop.contract (%[[I:.*]], %[[J:.*]], %[[M:.*]], %[[N:.*]]) in [4, 3, 8, 5], k in 16, %[[ACC:.*]] = sum %[[A]][d0, 0, d2, k] * %[[B]][d3, k, d1] attributes {tag} : memref<4x1x8x16xf16>, memref<5x16x3xf32> -> f32 {
// CHECK-NEXT:      loop.store %[[ACC]], %[[C]][%[[I]], %[[J]], %[[M]], %[[N]]] : memref<4x3x8x5xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_batched(%a: memref<4x1x8x16xf16>, %b: memref<5x16x3xf32>, %c: memref<4x3x8x5xf32>) {
  loop.contract (%i, %j, %m, %n) in [4, 3, 8, 5], k in 16, %acc = sum %a[d0, 0, d2, k] * %b[d3, k, d1] attributes {tag} : memref<4x1x8x16xf16>, memref<5x16x3xf32> -> f32 {
    loop.store %acc, %c[%i, %j, %m, %n] : memref<4x3x8x5xf32>
  }
}

// Sibling rhs (SwiGLU's gate and up weights): one rhs list read at one map, one accumulated
// value per rhs in the epilogue.

// CHECK-LABEL: loop.kernel @k_siblings(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<16x64xbf16>, %[[G:[a-z0-9_]+]]: memref<32x64xbf16>, %[[U:[a-z0-9_]+]]: memref<32x64xbf16>, %[[Y:[a-z0-9_]+]]: memref<16x32xf32>) {
// CHECK-NEXT:    loop.contract (%[[I:.*]], %[[J:.*]]) in [16, 32], k in 64, (%[[GA:.*]], %[[UA:.*]]) = sum %[[X]][d0, k] * (%[[G]], %[[U]])[d1, k] : memref<16x64xbf16>, memref<32x64xbf16>, memref<32x64xbf16> -> f32 {
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[GA]], %[[UA]] : f32
// CHECK-NEXT:      loop.store %[[P]], %[[Y]][%[[I]], %[[J]]] : memref<16x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_siblings(%x: memref<16x64xbf16>, %wg: memref<32x64xbf16>, %wu: memref<32x64xbf16>, %y: memref<16x32xf32>) {
  loop.contract (%i, %j) in [16, 32], k in 64, (%gate, %up) = sum %x[d0, k] * (%wg, %wu)[d1, k] : memref<16x64xbf16>, memref<32x64xbf16>, memref<32x64xbf16> -> f32 {
    %p = arith.mulf %gate, %up : f32
    loop.store %p, %y[%i, %j] : memref<16x32xf32>
  }
}

// CHECK-LABEL: loop.kernel @k_integer(
// CHECK:         loop.contract (%{{.*}}, %{{.*}}) in [2, 3], k in 4, %{{.*}} = sum %{{.*}}[d0, k] * %{{.*}}[k, d1] : memref<2x4xi32>, memref<4x3xi32> -> i32 {
loop.kernel @k_integer(%a: memref<2x4xi32>, %b: memref<4x3xi32>, %c: memref<2x3xi32>) {
  loop.contract (%i, %j) in [2, 3], k in 4, %acc = sum %a[d0, k] * %b[k, d1] : memref<2x4xi32>, memref<4x3xi32> -> i32 {
    loop.store %acc, %c[%i, %j] : memref<2x3xi32>
  }
}

// The host allocates buffers and launches kernels on them, in order.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<32x2048xf32>, %[[W:[a-z0-9_]+]]: memref<2048xf32>) -> memref<32x2048xf32> {
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<32x2048xf32>
// CHECK-NEXT:    %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    loop.launch @k_rms_norm(%[[X]], %[[W]], %[[Y]]) : memref<32x2048xf32>, memref<2048xf32>, memref<32x2048xf32>
// CHECK-NEXT:    loop.launch @k_empty()
// CHECK-NEXT:    loop.launch @k_attributes(%[[T]]) {tag} : memref<4xf32>
// CHECK-NEXT:    func.return %[[Y]] : memref<32x2048xf32>
func.func @forward(%x: memref<32x2048xf32>, %w: memref<2048xf32>) -> memref<32x2048xf32> {
  %y = memref.alloc() : memref<32x2048xf32>
  %t = memref.alloc() : memref<4xf32>
  loop.launch @k_rms_norm(%x, %w, %y) : memref<32x2048xf32>, memref<2048xf32>, memref<32x2048xf32>
  loop.launch @k_empty()
  loop.launch @k_attributes(%t) {tag} : memref<4xf32>
  func.return %y : memref<32x2048xf32>
}

// CHECK-LABEL: loop.kernel @attention(
// CHECK-NEXT:    loop.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale 1.250000e-01 causal into %{{.*}} : memref<2x4x5x8xf16>, memref<2x1x7x8xf16>, memref<2x1x7x8xf16> mask memref<2x1x5x7xf16> into memref<2x4x5x8xf16>
loop.kernel @attention(%q: memref<2x4x5x8xf16>, %k: memref<2x1x7x8xf16>, %v: memref<2x1x7x8xf16>, %m: memref<2x1x5x7xf16>, %o: memref<2x4x5x8xf16>) {
  loop.attention %q, %k, %v mask %m scale 0.125 causal into %o : memref<2x4x5x8xf16>, memref<2x1x7x8xf16>, memref<2x1x7x8xf16> mask memref<2x1x5x7xf16> into memref<2x4x5x8xf16>
}

// A kernel of ? buffers takes the dynamic size last; a loop runs to it.

// CHECK-LABEL: loop.kernel @k_dynamic(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<?x64xf32>, %[[Y:[a-z0-9_]+]]: memref<?x64xf32>, %[[S:[a-z0-9_]+]]: index) {
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to %[[S]] {
// CHECK-NEXT:      %[[T:.*]] = loop.for %[[J:.*]] in 0 to 64 reduce add init 0.0 : f32 {
// CHECK:         loop.launch @k_dynamic(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x64xf32>, memref<?x64xf32>, index
loop.kernel @k_dynamic(%x: memref<?x64xf32>, %y: memref<?x64xf32>, %s0: index) {
  %c0 = arith.constant 0 : index
  loop.for %i in 0 to %s0 {
    %t = loop.for %j in 0 to 64 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %j] : memref<?x64xf32>
      loop.yield %v : f32
    }
    loop.store %t, %y[%i, %c0] : memref<?x64xf32>
  }
}
func.func @forward_dynamic(%x: memref<?x64xf32>) -> memref<?x64xf32> {
  %c0 = arith.constant 0 : index
  %s0 = memref.dim %x, %c0 : memref<?x64xf32>
  %y = memref.alloc(%s0) : memref<?x64xf32>
  loop.launch @k_dynamic(%x, %y, %s0) : memref<?x64xf32>, memref<?x64xf32>, index
  func.return %y : memref<?x64xf32>
}
