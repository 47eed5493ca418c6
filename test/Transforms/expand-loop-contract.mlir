// RUN: emmy-opt %s --split-input-file --expand-loop-contract | filecheck %s

// nn.Linear in bf16: a parallel loop per dim, the sum over k in the innermost one (each
// operand loaded at its indexing map and widened), then the epilogue.

// CHECK-LABEL: loop.kernel @k_linear(
// CHECK-SAME:    %[[W:[a-z0-9_]+]]: memref<32x64xbf16>, %[[B:[a-z0-9_]+]]: memref<32xbf16>, %[[X:[a-z0-9_]+]]: memref<16x64xbf16>, %[[Y:[a-z0-9_]+]]: memref<16x32xbf16>) {
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 16 {
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 32 {
// CHECK-NEXT:        %[[ACC:.*]] = loop.for %[[K:.*]] in 0 to 64 reduce add init 0.0 : f32 {
// CHECK-NEXT:          %[[XV:.*]] = loop.load %[[X]][%[[I]], %[[K]]] : memref<16x64xbf16>
// CHECK-NEXT:          %[[XF:.*]] = arith.extf %[[XV]] : bf16 to f32
// CHECK-NEXT:          %[[WV:.*]] = loop.load %[[W]][%[[J]], %[[K]]] : memref<32x64xbf16>
// CHECK-NEXT:          %[[WF:.*]] = arith.extf %[[WV]] : bf16 to f32
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[XF]], %[[WF]] : f32
// CHECK-NEXT:          loop.yield %[[P]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[BV:.*]] = loop.load %[[B]][%[[J]]] : memref<32xbf16>
// CHECK-NEXT:        %[[BF:.*]] = arith.extf %[[BV]] : bf16 to f32
// CHECK-NEXT:        %[[R:.*]] = arith.addf %[[ACC]], %[[BF]] : f32
// CHECK-NEXT:        %[[O:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT:        loop.store %[[O]], %[[Y]][%[[I]], %[[J]]] : memref<16x32xbf16>
// CHECK-NEXT:      }
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

// -----

// A dim of extent 1 gets no loop and is indexed at 0, as a `0` in an indexing map is; the
// weight omits the batch dim. Epilogue ops go to the outermost loop where their operands
// exist: the constant before the nest, the per-batch scale in the batch loop.

// CHECK-LABEL: loop.kernel @k_batched(
// CHECK-SAME:    %[[A:[a-z0-9_]+]]: memref<2x1x8x16xf16>, %[[B:[a-z0-9_]+]]: memref<5x16xf32>, %[[S:[a-z0-9_]+]]: memref<2xf32>, %[[C:[a-z0-9_]+]]: memref<2x1x8x5xf32>) {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 2 {
// CHECK-NEXT:      %[[SV:.*]] = loop.load %[[S]][%[[I]]] : memref<2xf32>
// CHECK-NEXT:      %[[SCALE:.*]] = arith.mulf %[[SV]], %[[HALF]] : f32
// CHECK-NEXT:      loop.for %[[M:.*]] in 0 to 8 {
// CHECK-NEXT:        loop.for %[[N:.*]] in 0 to 5 {
// CHECK-NEXT:          %[[ACC:.*]] = loop.for %[[K:.*]] in 0 to 16 reduce add init 0.0 : f32 {
// CHECK-NEXT:            %[[AV:.*]] = loop.load %[[A]][%[[I]], %[[C0]], %[[M]], %[[K]]] : memref<2x1x8x16xf16>
// CHECK-NEXT:            %[[AF:.*]] = arith.extf %[[AV]] : f16 to f32
// CHECK-NEXT:            %[[BV:.*]] = loop.load %[[B]][%[[N]], %[[K]]] : memref<5x16xf32>
// CHECK-NEXT:            %[[P:.*]] = arith.mulf %[[AF]], %[[BV]] : f32
// CHECK-NEXT:            loop.yield %[[P]] : f32
// CHECK-NEXT:          }
// CHECK-NEXT:          %[[R:.*]] = arith.mulf %[[ACC]], %[[SCALE]] : f32
// CHECK-NEXT:          loop.store %[[R]], %[[C]][%[[I]], %[[C0]], %[[M]], %[[N]]] : memref<2x1x8x5xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_batched(%a: memref<2x1x8x16xf16>, %b: memref<5x16xf32>, %s: memref<2xf32>, %c: memref<2x1x8x5xf32>) {
  loop.contract (%i, %u, %m, %n) in [2, 1, 8, 5], k in 16, %acc = sum %a[d0, 0, d2, k] * %b[d3, k] : memref<2x1x8x16xf16>, memref<5x16xf32> -> f32 {
    %half = arith.constant 0.5 : f32
    %sv = loop.load %s[%i] : memref<2xf32>
    %scale = arith.mulf %sv, %half : f32
    %r = arith.mulf %acc, %scale : f32
    loop.store %r, %c[%i, %u, %m, %n] : memref<2x1x8x5xf32>
  }
}

// -----

// An rhs that does not depend on n: the sum is computed once per row, before the column
// loop. A load of a buffer the kernel writes stays innermost, where the epilogue read it.

// CHECK-LABEL: loop.kernel @k_matrix_vector(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<4x8xf32>, %[[V:[a-z0-9_]+]]: memref<8xf32>, %[[Y:[a-z0-9_]+]]: memref<4x3xf32>) {
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 4 {
// CHECK-NEXT:      %[[ACC:.*]] = loop.for %[[K:.*]] in 0 to 8 reduce add init 0.0 : f32 {
// CHECK-NEXT:        %[[XV:.*]] = loop.load %[[X]][%[[I]], %[[K]]] : memref<4x8xf32>
// CHECK-NEXT:        %[[VV:.*]] = loop.load %[[V]][%[[K]]] : memref<8xf32>
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[XV]], %[[VV]] : f32
// CHECK-NEXT:        loop.yield %[[P]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 3 {
// CHECK-NEXT:        %[[FIRST:.*]] = loop.load %[[Y]][%[[I]], %[[Z]]] : memref<4x3xf32>
// CHECK-NEXT:        %[[R:.*]] = arith.addf %[[ACC]], %[[FIRST]] : f32
// CHECK-NEXT:        loop.store %[[R]], %[[Y]][%[[I]], %[[J]]] : memref<4x3xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_matrix_vector(%x: memref<4x8xf32>, %v: memref<8xf32>, %y: memref<4x3xf32>) {
  loop.contract (%i, %j) in [4, 3], k in 8, %acc = sum %x[d0, k] * %v[k] : memref<4x8xf32>, memref<8xf32> -> f32 {
    %z = arith.constant 0 : index
    %first = loop.load %y[%i, %z] : memref<4x3xf32>
    %r = arith.addf %acc, %first : f32
    loop.store %r, %y[%i, %j] : memref<4x3xf32>
  }
}

// -----

// A sum over one k is its one product (of integers, muli), at index 0.

// CHECK-LABEL: loop.kernel @k_outer_product(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<4x1xi32>, %[[V:[a-z0-9_]+]]: memref<1x3xi32>, %[[Y:[a-z0-9_]+]]: memref<4x3xi32>) {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 4 {
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 3 {
// CHECK-NEXT:        %[[XV:.*]] = loop.load %[[X]][%[[I]], %[[C0]]] : memref<4x1xi32>
// CHECK-NEXT:        %[[VV:.*]] = loop.load %[[V]][%[[C0]], %[[J]]] : memref<1x3xi32>
// CHECK-NEXT:        %[[P:.*]] = arith.muli %[[XV]], %[[VV]] : i32
// CHECK-NEXT:        loop.store %[[P]], %[[Y]][%[[I]], %[[J]]] : memref<4x3xi32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_outer_product(%x: memref<4x1xi32>, %v: memref<1x3xi32>, %y: memref<4x3xi32>) {
  loop.contract (%i, %j) in [4, 3], k in 1, %acc = sum %x[d0, k] * %v[k, d1] : memref<4x1xi32>, memref<1x3xi32> -> i32 {
    loop.store %acc, %y[%i, %j] : memref<4x3xi32>
  }
}

// -----

// Sibling rhs: a sum over k of each, in order, which the epilogue takes as its accumulated
// values.

// CHECK-LABEL: loop.kernel @k_siblings(
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 4 {
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 6 {
// CHECK-NEXT:        %[[GATE:.*]] = loop.for %[[K:.*]] in 0 to 8 reduce add init 0.0 : f64 {
// CHECK-NEXT:          %[[X:.*]] = loop.load %x[%[[I]], %[[K]]] : memref<4x8xf64>
// CHECK-NEXT:          %[[G:.*]] = loop.load %wg[%[[K]], %[[J]]] : memref<8x6xf64>
// CHECK-NEXT:          %[[XG:.*]] = arith.mulf %[[X]], %[[G]] : f64
// CHECK-NEXT:          loop.yield %[[XG]] : f64
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[UP:.*]] = loop.for %[[K2:.*]] in 0 to 8 reduce add init 0.0 : f64 {
// CHECK-NEXT:          %[[X2:.*]] = loop.load %x[%[[I]], %[[K2]]] : memref<4x8xf64>
// CHECK-NEXT:          %[[U:.*]] = loop.load %wu[%[[K2]], %[[J]]] : memref<8x6xf64>
// CHECK-NEXT:          %[[XU:.*]] = arith.mulf %[[X2]], %[[U]] : f64
// CHECK-NEXT:          loop.yield %[[XU]] : f64
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[GATE]], %[[UP]] : f64
// CHECK-NEXT:        loop.store %[[P]], %y[%[[I]], %[[J]]] : memref<4x6xf64>

loop.kernel @k_siblings(%x: memref<4x8xf64>, %wg: memref<8x6xf64>, %wu: memref<8x6xf64>, %y: memref<4x6xf64>) {
  loop.contract (%i, %j) in [4, 6], k in 8, (%gate, %up) = sum %x[d0, k] * (%wg, %wu)[k, d1] : memref<4x8xf64>, memref<8x6xf64>, memref<8x6xf64> -> f64 {
    %p = arith.mulf %gate, %up : f64
    loop.store %p, %y[%i, %j] : memref<4x6xf64>
  }
}
