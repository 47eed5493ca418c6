// RUN: emmy-opt %s -t cuda | filecheck %s

// Elementwise bf16 kernels with vector accesses: each thread loads 8 bf16 (one 16-byte access,
// a uint4) or 4 bf16 (8 bytes, a uint2) into a vector struct, computes on its lanes, and
// stores the same way; a broadcast and a chain of inserts fill one struct in place. bf16
// arithmetic uses the bf16 intrinsics; math functions go through float and round once.

// CHECK:       #include <cuda_bf16.h>
// CHECK-NOT:   #include <cuda_fp16.h>
// CHECK:       struct __align__(16) emmy_bf16x8 { __nv_bfloat16 lane[8]; };
// CHECK:       struct __align__(8) emmy_bf16x4 { __nv_bfloat16 lane[4]; };

// CHECK-LABEL: // kernel.func @scale_bf16: block [128, 1, 1], 0 bytes of static shared memory
// CHECK-NEXT:  extern "C" __global__ void __launch_bounds__(128) scale_bf16(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y) {
// CHECK-NEXT:    long bid = blockIdx.x;
// CHECK-NEXT:    long tid = threadIdx.x;
// CHECK-NEXT:    long base = bid * 1024;
// CHECK-NEXT:    long offset = tid * 8;
// CHECK-NEXT:    long i = base + offset;
// CHECK-NEXT:    emmy_bf16x8 xv;
// CHECK-NEXT:    *reinterpret_cast<uint4*>(&xv) = *reinterpret_cast<const uint4*>(&x[i]);
// CHECK-NEXT:    emmy_bf16x8 wv;
// CHECK-NEXT:    *reinterpret_cast<uint4*>(&wv) = *reinterpret_cast<const uint4*>(&w[i]);
// CHECK-NEXT:    __nv_bfloat16 x0 = xv.lane[0];
// CHECK-NEXT:    __nv_bfloat16 w0 = wv.lane[0];
// CHECK:         __nv_bfloat16 w7 = wv.lane[7];
// CHECK-NEXT:    __nv_bfloat16 y0 = __hmul(x0, w0);
// CHECK-NEXT:    __nv_bfloat16 y1 = __hmul(x1, w1);
// CHECK:         __nv_bfloat16 y7 = __hmul(x7, w7);
// CHECK-NEXT:    emmy_bf16x8 yv0 = {{[{][{]}}y0, y0, y0, y0, y0, y0, y0, y0{{[}][}]}};
// CHECK-NEXT:    yv0.lane[1] = y1;
// CHECK:         yv0.lane[7] = y7;
// CHECK-NEXT:    *reinterpret_cast<uint4*>(&y[i]) = *reinterpret_cast<const uint4*>(&yv0);
// CHECK-NEXT:  }

kernel.func @scale_bf16(%x: memref<4096xbf16>, %w: memref<4096xbf16>, %y: memref<4096xbf16>) block [128, 1, 1] {
  %bid = kernel.block_id x
  %tid = kernel.thread_id x
  %c8 = arith.constant 8 : index
  %c1024 = arith.constant 1024 : index
  %base = arith.muli %bid, %c1024 : index
  %offset = arith.muli %tid, %c8 : index
  %i = arith.addi %base, %offset : index
  %xv = kernel.vector_load %x[%i] : memref<4096xbf16>, vector<8xbf16>
  %wv = kernel.vector_load %w[%i] : memref<4096xbf16>, vector<8xbf16>
  %x0 = vector.extract %xv[0] : bf16 from vector<8xbf16>
  %w0 = vector.extract %wv[0] : bf16 from vector<8xbf16>
  %x1 = vector.extract %xv[1] : bf16 from vector<8xbf16>
  %w1 = vector.extract %wv[1] : bf16 from vector<8xbf16>
  %x2 = vector.extract %xv[2] : bf16 from vector<8xbf16>
  %w2 = vector.extract %wv[2] : bf16 from vector<8xbf16>
  %x3 = vector.extract %xv[3] : bf16 from vector<8xbf16>
  %w3 = vector.extract %wv[3] : bf16 from vector<8xbf16>
  %x4 = vector.extract %xv[4] : bf16 from vector<8xbf16>
  %w4 = vector.extract %wv[4] : bf16 from vector<8xbf16>
  %x5 = vector.extract %xv[5] : bf16 from vector<8xbf16>
  %w5 = vector.extract %wv[5] : bf16 from vector<8xbf16>
  %x6 = vector.extract %xv[6] : bf16 from vector<8xbf16>
  %w6 = vector.extract %wv[6] : bf16 from vector<8xbf16>
  %x7 = vector.extract %xv[7] : bf16 from vector<8xbf16>
  %w7 = vector.extract %wv[7] : bf16 from vector<8xbf16>
  %y0 = arith.mulf %x0, %w0 : bf16
  %y1 = arith.mulf %x1, %w1 : bf16
  %y2 = arith.mulf %x2, %w2 : bf16
  %y3 = arith.mulf %x3, %w3 : bf16
  %y4 = arith.mulf %x4, %w4 : bf16
  %y5 = arith.mulf %x5, %w5 : bf16
  %y6 = arith.mulf %x6, %w6 : bf16
  %y7 = arith.mulf %x7, %w7 : bf16
  %yv0 = vector.broadcast %y0 : bf16 to vector<8xbf16>
  %yv1 = vector.insert %y1, %yv0 [1] : bf16 into vector<8xbf16>
  %yv2 = vector.insert %y2, %yv1 [2] : bf16 into vector<8xbf16>
  %yv3 = vector.insert %y3, %yv2 [3] : bf16 into vector<8xbf16>
  %yv4 = vector.insert %y4, %yv3 [4] : bf16 into vector<8xbf16>
  %yv5 = vector.insert %y5, %yv4 [5] : bf16 into vector<8xbf16>
  %yv6 = vector.insert %y6, %yv5 [6] : bf16 into vector<8xbf16>
  %yv7 = vector.insert %y7, %yv6 [7] : bf16 into vector<8xbf16>
  kernel.vector_store %yv7, %y[%i] : memref<4096xbf16>, vector<8xbf16>
}

// SiLU(gate) * up on rows of bf16, four elements (8 bytes) per thread, computed in f32:
// extf is __bfloat162float, truncf __float2bfloat16_rn, math.exp expf. Unused elements of a
// vector load are not declared.

// CHECK-LABEL: // kernel.func @silu_mul_bf16: block [64, 1, 1], 0 bytes of static shared memory
// CHECK-NEXT:  extern "C" __global__ void __launch_bounds__(64) silu_mul_bf16(const __nv_bfloat16* __restrict__ gate, const __nv_bfloat16* __restrict__ up, __nv_bfloat16* __restrict__ out) {
// CHECK-NEXT:    long row = blockIdx.x;
// CHECK-NEXT:    long tid = threadIdx.x;
// CHECK-NEXT:    long col = tid * 4;
// CHECK-NEXT:    emmy_bf16x4 g;
// CHECK-NEXT:    *reinterpret_cast<uint2*>(&g) = *reinterpret_cast<const uint2*>(&gate[row * 256 + col]);
// CHECK-NEXT:    emmy_bf16x4 u;
// CHECK-NEXT:    *reinterpret_cast<uint2*>(&u) = *reinterpret_cast<const uint2*>(&up[row * 256 + col]);
// CHECK-NEXT:    __nv_bfloat16 g0 = g.lane[0];
// CHECK-NEXT:    __nv_bfloat16 u0 = u.lane[0];
// CHECK-NEXT:    __nv_bfloat16 g1 = g.lane[1];
// CHECK-NEXT:    __nv_bfloat16 u1 = u.lane[1];
// CHECK-NEXT:    __nv_bfloat16 g2 = g.lane[2];
// CHECK-NEXT:    __nv_bfloat16 g3 = g.lane[3];
// CHECK-NEXT:    __nv_bfloat16 u3 = u.lane[3];
// CHECK-NEXT:    float f0 = __bfloat162float(g0);
// CHECK-NEXT:    float n0 = -f0;
// CHECK-NEXT:    float e0 = exp2f(n0 * 1.44269504f);
// CHECK-NEXT:    float d0 = e0 + 1.0f;
// CHECK-NEXT:    float s0 = f0 / d0;
// CHECK-NEXT:    __nv_bfloat16 b0 = __float2bfloat16_rn(s0);
// CHECK-NEXT:    __nv_bfloat16 r0 = __hmul(b0, u0);
// CHECK:         __nv_bfloat16 r3 = __hmul(g3, u3);
// CHECK-NEXT:    __nv_bfloat16 r2 = __hmul(g2, __float2bfloat16_rn(0.5f));
// CHECK-NEXT:    emmy_bf16x4 rv0 = {{[{][{]}}r0, r0, r0, r0{{[}][}]}};
// CHECK-NEXT:    rv0.lane[1] = r1;
// CHECK-NEXT:    rv0.lane[2] = r2;
// CHECK-NEXT:    rv0.lane[3] = r3;
// CHECK-NEXT:    *reinterpret_cast<uint2*>(&out[row * 256 + col]) = *reinterpret_cast<const uint2*>(&rv0);
// CHECK-NEXT:  }

kernel.func @silu_mul_bf16(%gate: memref<16x256xbf16>, %up: memref<16x256xbf16>, %out: memref<16x256xbf16>) block [64, 1, 1] {
  %row = kernel.block_id x
  %tid = kernel.thread_id x
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %col = arith.muli %tid, %c4 : index
  %g = kernel.vector_load %gate[%row, %col] : memref<16x256xbf16>, vector<4xbf16>
  %u = kernel.vector_load %up[%row, %col] : memref<16x256xbf16>, vector<4xbf16>
  %g0 = vector.extract %g[0] : bf16 from vector<4xbf16>
  %u0 = vector.extract %u[0] : bf16 from vector<4xbf16>
  %g1 = vector.extract %g[1] : bf16 from vector<4xbf16>
  %u1 = vector.extract %u[1] : bf16 from vector<4xbf16>
  %g2 = vector.extract %g[2] : bf16 from vector<4xbf16>
  %u2 = vector.extract %u[2] : bf16 from vector<4xbf16>
  %g3 = vector.extract %g[3] : bf16 from vector<4xbf16>
  %u3 = vector.extract %u[3] : bf16 from vector<4xbf16>
  %f0 = arith.extf %g0 : bf16 to f32
  %n0 = arith.negf %f0 : f32
  %e0 = math.exp %n0 : f32
  %d0 = arith.addf %e0, %one : f32
  %s0 = arith.divf %f0, %d0 : f32
  %b0 = arith.truncf %s0 : f32 to bf16
  %r0 = arith.mulf %b0, %u0 : bf16
  %r1 = arith.mulf %g1, %u1 : bf16
  %r3 = arith.mulf %g3, %u3 : bf16
  %half = arith.constant 0.5 : bf16
  %h = arith.addf %half, %half : bf16
  %r2 = arith.mulf %g2, %half : bf16
  %rv0 = vector.broadcast %r0 : bf16 to vector<4xbf16>
  %rv1 = vector.insert %r1, %rv0 [1] : bf16 into vector<4xbf16>
  %rv2 = vector.insert %r2, %rv1 [2] : bf16 into vector<4xbf16>
  %rv3 = vector.insert %r3, %rv2 [3] : bf16 into vector<4xbf16>
  kernel.vector_store %rv3, %out[%row, %col] : memref<16x256xbf16>, vector<4xbf16>
}

func.func @forward(%x: memref<4096xbf16>, %w: memref<4096xbf16>, %gate: memref<16x256xbf16>, %up: memref<16x256xbf16>) -> (memref<4096xbf16>, memref<16x256xbf16>) {
  %y = memref.alloc() : memref<4096xbf16>
  kernel.launch @scale_bf16(%x, %w, %y) grid [4, 1, 1] block [128, 1, 1] smem 0 : memref<4096xbf16>, memref<4096xbf16>, memref<4096xbf16>
  %out = memref.alloc() : memref<16x256xbf16>
  kernel.launch @silu_mul_bf16(%gate, %up, %out) grid [16, 1, 1] block [64, 1, 1] smem 0 : memref<16x256xbf16>, memref<16x256xbf16>, memref<16x256xbf16>
  func.return %y, %out : memref<4096xbf16>, memref<16x256xbf16>
}
