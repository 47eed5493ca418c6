// RUN: emmy-opt %s -t cuda | filecheck %s

// Kernel parameters besides buffers: scalars by value, a tensor map as a
// `const __grid_constant__` CUtensorMap of 128 bytes aligned to 64 (the launch passes the
// tensor's buffer, from which the host encodes the map).
// Vector values: one 16-byte access fills an `emmy_f32x4`, whose lanes are read at static and
// per-thread positions and carried through a loop. A swizzled shared buffer is aligned to its
// pattern and indexed through `emmy_swizzle`.

// CHECK:       // A CUtensorMap, encoded on the host (cuTensorMapEncodeTiled), read by TMA.
// CHECK-NEXT:  struct __align__(64) emmy_CUtensorMap { unsigned char bytes[128]; };
// CHECK:       struct __align__(16) emmy_f32x4 { float lane[4]; };
// CHECK:       __device__ __forceinline__ long emmy_swizzle(long i, int shift, long mask, int chunk_shift) {
// CHECK-NEXT:    return i ^ (((i >> shift) & mask) << chunk_shift);
// CHECK-NEXT:  }

// CHECK-LABEL: // kernel.func @scaled_rows: block [32, 1, 1], 16384 bytes of static shared memory
// CHECK-NEXT:  extern "C" __global__ void __launch_bounds__(32) scaled_rows(const float* __restrict__ x, float* __restrict__ y, float alpha, long rows, int lane, const __grid_constant__ emmy_CUtensorMap map) {
// CHECK-NEXT:    __shared__ alignas(1024) float tile[4096];
// CHECK-NEXT:    long t = threadIdx.x;
// CHECK-NEXT:    long j = t * 4;
// CHECK-NEXT:    emmy_f32x4 zero = {{[{][{]}}0.0f, 0.0f, 0.0f, 0.0f{{[}][}]}};
// CHECK-NEXT:    emmy_f32x4 acc = zero;
// CHECK-NEXT:    for (long r = 0; r < rows; r += 1) {
// CHECK-NEXT:      emmy_f32x4 v;
// CHECK-NEXT:      *reinterpret_cast<float4*>(&v) = *reinterpret_cast<const float4*>(&x[r * 128 + j]);
// CHECK-NEXT:      float v0 = v.lane[0];
// CHECK-NEXT:      float s0 = v0 * alpha;
// CHECK-NEXT:      emmy_f32x4 w = v;
// CHECK-NEXT:      w.lane[0] = s0;
// CHECK-NEXT:      acc = w;
// CHECK-NEXT:    }
// CHECK-NEXT:    *reinterpret_cast<float4*>(&tile[emmy_swizzle(t * 128 + j, 5, 7, 2)]) = *reinterpret_cast<const float4*>(&acc);
// CHECK-NEXT:    __syncthreads();
// CHECK-NEXT:    long position = (long)lane;
// CHECK-NEXT:    float picked = acc.lane[position];
// CHECK-NEXT:    float back = tile[emmy_swizzle(t * 128 + 1, 5, 7, 2)];
// CHECK-NEXT:    float sum = picked + back;
// CHECK-NEXT:    y[t] = sum;
// CHECK-NEXT:  }

kernel.func @scaled_rows(%x: memref<8x128xf32>, %y: memref<32xf32>, %alpha: f32, %rows: index, %lane: i32, %map: !kernel.tensor_map<memref<64x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %tile = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<32x128xf32, 3 : i32>
  %t = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %j = arith.muli %t, %c4 : index
  %f0 = arith.constant 0.0 : f32
  %zero = vector.broadcast %f0 : f32 to vector<4xf32>
  %acc = scf.for %r = %c0 to %rows step %c1 iter_args(%a = %zero) -> (vector<4xf32>) {
    %v = kernel.vector_load %x[%r, %j] : memref<8x128xf32>, vector<4xf32>
    %v0 = vector.extract %v[0] : f32 from vector<4xf32>
    %s0 = arith.mulf %v0, %alpha : f32
    %w = vector.insert %s0, %v [0] : f32 into vector<4xf32>
    scf.yield %w : vector<4xf32>
  }
  kernel.vector_store %acc, %tile[%t, %j] : memref<32x128xf32, 3 : i32>, vector<4xf32>
  kernel.barrier
  %position = arith.index_cast %lane : i32 to index
  %picked = vector.extract %acc[%position] : f32 from vector<4xf32>
  %back = memref.load %tile[%t, %c1] : memref<32x128xf32, 3 : i32>
  %sum = arith.addf %picked, %back : f32
  memref.store %sum, %y[%t] : memref<32xf32>
}

func.func @forward(%x: memref<8x128xf32>, %map: memref<64x64xbf16>) -> memref<32xf32> {
  %y = memref.alloc() : memref<32xf32>
  %alpha = arith.constant 2.0 : f32
  %rows = arith.constant 8 : index
  %lane = arith.constant 1 : i32
  kernel.launch @scaled_rows(%x, %y, %alpha, %rows, %lane, %map) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<8x128xf32>, memref<32xf32>, f32, index, i32, memref<64x64xbf16>
  func.return %y : memref<32xf32>
}
