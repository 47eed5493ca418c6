// RUN: emmy-opt %s --expand-loop-attention | filecheck %s

// Grouped-query heads (query head b1 reads key/value head b1 / 2), an additive f16 mask
// broadcast along the keys, causal: per query row the max, the sum of exponentials, then
// per output column the weighted sum, each recomputing the scores from the buffers. With a
// mask, a row masked whole (its max -inf) takes its exponents from 0 over a sum of 1: zeros.

// CHECK-LABEL: loop.kernel @k_attention(
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    loop.for %[[H:.*]] in 0 to 4 {
// CHECK-NEXT:      %[[G:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[KV:.*]] = arith.divui %[[H]], %[[G]] : index
// CHECK-NEXT:      loop.for %[[I:.*]] in 0 to 5 {
// CHECK-NEXT:        %[[MAX:.*]] = loop.for %[[J:.*]] in 0 to 7 reduce max init -inf : f32 {
// CHECK-NEXT:          %[[S:.*]] = loop.for %[[E:.*]] in 0 to 8 reduce add init 0.0 : f32 {
// CHECK-NEXT:            loop.load %q[%[[C0]], %[[H]], %[[I]], %[[E]]] : memref<1x4x5x8xf16>
// CHECK-NEXT:            arith.extf
// CHECK-NEXT:            loop.load %k[%[[C0]], %[[KV]], %[[J]], %[[E]]] : memref<1x2x7x8xf16>
// CHECK:               %[[SCALE:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:          %[[SCALED:.*]] = arith.mulf %[[S]], %[[SCALE]] : f32
// CHECK-NEXT:          %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:          %[[MV:.*]] = loop.load %m[%[[I]], %[[C0]]] : memref<5x1xf16>
// CHECK-NEXT:          %[[MW:.*]] = arith.extf %[[MV]] : f16 to f32
// CHECK-NEXT:          %[[MASKED:.*]] = arith.addf %[[SCALED]], %[[MW]] : f32
// CHECK-NEXT:          %[[KEEP:.*]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK-NEXT:          %[[SEL:.*]] = arith.select %[[KEEP]], %[[MASKED]], %[[NEG_INF]] : f32
// CHECK-NEXT:          loop.yield %[[SEL]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[NO_MAX:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:        %[[WHOLE:.*]] = arith.cmpf oeq, %[[MAX]], %[[NO_MAX]] : f32
// CHECK-NEXT:        %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:        %[[BASE:.*]] = arith.select %[[WHOLE]], %[[ZERO]], %[[MAX]] : f32
// CHECK-NEXT:        %[[EXPS:.*]] = loop.for %{{.*}} in 0 to 7 reduce add init 0.0 : f32 {
// CHECK:               arith.subf %{{.*}}, %[[BASE]] : f32
// CHECK-NEXT:          math.exp
// CHECK-NEXT:          loop.yield
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:        %[[SUM:.*]] = arith.select %[[WHOLE]], %[[ONE]], %[[EXPS]] : f32
// CHECK-NEXT:        loop.for %[[D:.*]] in 0 to 6 {
// CHECK-NEXT:          %[[ACC:.*]] = loop.for %[[J2:.*]] in 0 to 7 reduce add init 0.0 : f32 {
// CHECK:                 %[[P:.*]] = arith.divf %{{.*}}, %[[SUM]] : f32
// CHECK-NEXT:            %[[P16:.*]] = arith.truncf %[[P]] : f32 to f16
// CHECK-NEXT:            %[[PW:.*]] = arith.extf %[[P16]] : f16 to f32
// CHECK-NEXT:            %[[VV:.*]] = loop.load %v[%[[C0]], %[[KV]], %[[J2]], %[[D]]] : memref<1x2x7x6xf16>
// CHECK-NEXT:            %[[VW:.*]] = arith.extf %[[VV]] : f16 to f32
// CHECK-NEXT:            %[[PV:.*]] = arith.mulf %[[PW]], %[[VW]] : f32
// CHECK-NEXT:            loop.yield %[[PV]] : f32
// CHECK-NEXT:          }
// CHECK-NEXT:          %[[O:.*]] = arith.truncf %[[ACC]] : f32 to f16
// CHECK-NEXT:          loop.store %[[O]], %out[%[[C0]], %[[H]], %[[I]], %[[D]]] : memref<1x4x5x6xf16>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @k_attention(%q: memref<1x4x5x8xf16>, %k: memref<1x2x7x8xf16>, %v: memref<1x2x7x6xf16>, %m: memref<5x1xf16>, %out: memref<1x4x5x6xf16>) {
  loop.attention %q, %k, %v mask %m scale 0.5 causal into %out : memref<1x4x5x8xf16>, memref<1x2x7x8xf16>, memref<1x2x7x6xf16> mask memref<5x1xf16> into memref<1x4x5x6xf16>
}
