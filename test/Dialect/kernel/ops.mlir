// RUN: emmy-opt %s | emmy-opt | filecheck %s
// RUN: emmy-opt %s --print-op-generic | emmy-opt | filecheck %s

// Every kernel op in its custom form. Shared memory is memory space 3, written `3 : i32`
// (a bare `3` reads as `3 : i64`, also shared memory, but a different type).

// CHECK-LABEL: kernel.func @k_ids(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<4x64xf32>) block [64, 2, 1] {
// CHECK-NEXT:    %[[TX:.*]] = kernel.thread_id x
// CHECK-NEXT:    %[[TY:.*]] = kernel.thread_id y
// CHECK-NEXT:    %[[TZ:.*]] = kernel.thread_id z
// CHECK-NEXT:    %[[BX:.*]] = kernel.block_id x
// CHECK-NEXT:    %[[BY:.*]] = kernel.block_id y
// CHECK-NEXT:    %[[BZ:.*]] = kernel.block_id z
// CHECK-NEXT:    %[[DX:.*]] = kernel.block_dim x
// CHECK-NEXT:    %[[DY:.*]] = kernel.block_dim y
// CHECK-NEXT:    %[[DZ:.*]] = kernel.block_dim z
// CHECK-NEXT:    %[[GX:.*]] = kernel.grid_dim x
// CHECK-NEXT:    %[[GY:.*]] = kernel.grid_dim y
// CHECK-NEXT:    %[[GZ:.*]] = kernel.grid_dim z {tag}
// CHECK-NEXT:    %[[S:.*]] = arith.muli %[[TX]], %[[TY]] : index
// CHECK-NEXT:    %[[V:.*]] = memref.load %[[X]][%[[BX]], %[[S]]] : memref<4x64xf32>
// CHECK-NEXT:    memref.store %[[V]], %[[X]][%[[BY]], %[[TZ]]] : memref<4x64xf32>
// CHECK-NEXT:  }
kernel.func @k_ids(%x: memref<4x64xf32>) block [64, 2, 1] {
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %tz = kernel.thread_id z
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %bz = kernel.block_id z
  %dx = kernel.block_dim x
  %dy = kernel.block_dim y
  %dz = kernel.block_dim z
  %gx = kernel.grid_dim x
  %gy = kernel.grid_dim y
  %gz = kernel.grid_dim z {tag}
  %s = arith.muli %tx, %ty : index
  %v = memref.load %x[%bx, %s] : memref<4x64xf32>
  memref.store %v, %x[%by, %tz] : memref<4x64xf32>
}

// CHECK-LABEL: kernel.func @k_shared(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<4x64xf32>, %[[G:[a-z0-9_]+]]: memref<64xf16>) block [64, 1, 1] attributes {tag} {
// CHECK-NEXT:    %[[S:.*]] = kernel.shared_alloc : memref<8xf32, 3 : i32>
// CHECK-NEXT:    %[[S64:.*]] = kernel.shared_alloc {tag} : memref<4x64xf16, 3 : i64>
// CHECK-NEXT:    %[[D:.*]] = kernel.dynamic_shared offset 16 : memref<1024xf32, 3 : i32>
// CHECK-NEXT:    %[[D2:.*]] = kernel.dynamic_shared offset 0 {tag} : memref<2x2xf64, 3 : i32>
// CHECK-NEXT:    %{{.*}} = kernel.dynamic_shared offset 1024 {layout = #kernel.swizzle<128>, tag} : memref<8x64xf16, 3 : i32>
// CHECK-NEXT:    %[[N32:.*]] = kernel.shared_alloc : memref<2xi32, 3 : i32>
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C16:.*]] = arith.constant 16 : i32
// CHECK-NEXT:    %[[T:.*]] = kernel.thread_id x
// CHECK-NEXT:    %[[V:.*]] = memref.load %[[X]][%[[C0]], %[[C0]]] : memref<4x64xf32>
// CHECK-NEXT:    memref.store %[[V]], %[[S]][%[[C0]]] : memref<8xf32, 3 : i32>
// CHECK-NEXT:    memref.store %[[V]], %[[D]][%[[T]]] : memref<1024xf32, 3 : i32>
// CHECK-NEXT:    kernel.barrier
// CHECK-NEXT:    kernel.barrier {tag}
// CHECK-NEXT:    %[[R0:.*]] = kernel.shuffle xor %[[V]], %[[C16]] : f32
// CHECK-NEXT:    %[[R1:.*]] = kernel.shuffle down %[[R0]], %[[C16]] : f32
// CHECK-NEXT:    %[[R2:.*]] = kernel.shuffle up %[[R1]], %[[C16]] : f32
// CHECK-NEXT:    %[[R3:.*]] = kernel.shuffle idx %[[T]], %[[C16]] {tag} : index
// CHECK-NEXT:    %[[O0:.*]] = kernel.atomic add %[[R2]], %[[S]][%[[C0]]] : memref<8xf32, 3 : i32>
// CHECK-NEXT:    %[[O1:.*]] = kernel.atomic max %[[O0]], %[[X]][%[[C0]], %[[R3]]] : memref<4x64xf32>
// CHECK-NEXT:    %[[O2:.*]] = kernel.atomic min %[[O1]], %[[D]][%[[T]]] {tag} : memref<1024xf32, 3 : i32>
// CHECK-NEXT:    %[[N:.*]] = kernel.atomic inc %[[C16]], %[[N32]][%[[C0]]] : memref<2xi32, 3 : i32>
// CHECK-NEXT:    %{{.*}} = kernel.atomic inc acq_rel %[[N]], %[[N32]][%[[C0]]] : memref<2xi32, 3 : i32>
// CHECK-NEXT:    %{{.*}} = kernel.atomic add acq_rel %[[N]], %[[N32]][%[[C0]]] {tag} : memref<2xi32, 3 : i32>
// CHECK-NEXT:    %[[A:.*]] = kernel.vector_load %[[X]][%[[C0]], %[[C0]]] : memref<4x64xf32>, vector<4xf32>
// CHECK-NEXT:    %[[W:.*]] = kernel.vector_load %[[X]][%[[C0]], %[[C0]]] {tag} : memref<4x64xf32>, vector<2xf32>
// CHECK-NEXT:    %[[ONE:.*]] = kernel.vector_load %[[S]][%[[C0]]] : memref<8xf32, 3 : i32>, vector<1xf32>
// CHECK-NEXT:    %[[W0:.*]] = vector.extract %[[W]][0] : f32 from vector<2xf32>
// CHECK-NEXT:    %[[AT:.*]] = vector.extract %[[A]][%[[C0]]] : f32 from vector<4xf32>
// CHECK-NEXT:    %[[WS:.*]] = vector.broadcast %[[AT]] : f32 to vector<2xf32>
// CHECK-NEXT:    %[[WW:.*]] = vector.insert %[[W0]], %[[WS]] [1] : f32 into vector<2xf32>
// CHECK-NEXT:    kernel.vector_store %[[A]], %[[X]][%[[C0]], %[[C0]]] : memref<4x64xf32>, vector<4xf32>
// CHECK-NEXT:    kernel.vector_store %[[WW]], %[[D]][%[[T]]] {tag} : memref<1024xf32, 3 : i32>, vector<2xf32>
// CHECK-NEXT:    kernel.cp_async %[[S64]][%[[C0]], %[[C0]]], %[[G]][%[[C0]]] bytes 16 : memref<4x64xf16, 3 : i64>, memref<64xf16>
// CHECK-NEXT:    kernel.cp_async %[[D]][%[[T]]], %[[X]][%[[C0]], %[[T]]] bytes 4 {tag} : memref<1024xf32, 3 : i32>, memref<4x64xf32>
// CHECK-NEXT:    kernel.cp_async %[[D]][%[[T]]], %[[X]][%[[C0]], %[[T]]] bytes 16 src_bytes %[[C16]] : memref<1024xf32, 3 : i32>, memref<4x64xf32>
// CHECK-NEXT:    kernel.cp_async_commit
// CHECK-NEXT:    kernel.cp_async_commit {tag}
// CHECK-NEXT:    kernel.cp_async_wait 0
// CHECK-NEXT:    kernel.cp_async_wait 2 {tag}
// CHECK-NEXT:  }
kernel.func @k_shared(%x: memref<4x64xf32>, %g: memref<64xf16>) block [64, 1, 1] attributes {tag} {
  %s = kernel.shared_alloc : memref<8xf32, 3 : i32>
  %s64 = kernel.shared_alloc {tag} : memref<4x64xf16, 3>
  %d = kernel.dynamic_shared offset 16 : memref<1024xf32, 3 : i32>
  %d2 = kernel.dynamic_shared offset 0 {tag} : memref<2x2xf64, 3 : i32>
  %d3 = kernel.dynamic_shared offset 1024 {layout = #kernel.swizzle<128>, tag} : memref<8x64xf16, 3 : i32>
  %s32 = kernel.shared_alloc : memref<2xi32, 3 : i32>
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : i32
  %t = kernel.thread_id x
  %v = memref.load %x[%c0, %c0] : memref<4x64xf32>
  memref.store %v, %s[%c0] : memref<8xf32, 3 : i32>
  memref.store %v, %d[%t] : memref<1024xf32, 3 : i32>
  kernel.barrier
  kernel.barrier {tag}
  %r0 = kernel.shuffle xor %v, %c16 : f32
  %r1 = kernel.shuffle down %r0, %c16 : f32
  %r2 = kernel.shuffle up %r1, %c16 : f32
  %r3 = kernel.shuffle idx %t, %c16 {tag} : index
  %o0 = kernel.atomic add %r2, %s[%c0] : memref<8xf32, 3 : i32>
  %o1 = kernel.atomic max %o0, %x[%c0, %r3] : memref<4x64xf32>
  %o2 = kernel.atomic min %o1, %d[%t] {tag} : memref<1024xf32, 3 : i32>
  %n = kernel.atomic inc %c16, %s32[%c0] : memref<2xi32, 3 : i32>
  %n1 = kernel.atomic inc acq_rel %n, %s32[%c0] : memref<2xi32, 3 : i32>
  %n2 = kernel.atomic add acq_rel %n, %s32[%c0] {tag} : memref<2xi32, 3 : i32>
  %a = kernel.vector_load %x[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
  %w = kernel.vector_load %x[%c0, %c0] {tag} : memref<4x64xf32>, vector<2xf32>
  %one = kernel.vector_load %s[%c0] : memref<8xf32, 3 : i32>, vector<1xf32>
  %w0 = vector.extract %w[0] : f32 from vector<2xf32>
  %at = vector.extract %a[%c0] : f32 from vector<4xf32>
  %ws = vector.broadcast %at : f32 to vector<2xf32>
  %ww = vector.insert %w0, %ws [1] : f32 into vector<2xf32>
  kernel.vector_store %a, %x[%c0, %c0] : memref<4x64xf32>, vector<4xf32>
  kernel.vector_store %ww, %d[%t] {tag} : memref<1024xf32, 3 : i32>, vector<2xf32>
  kernel.cp_async %s64[%c0, %c0], %g[%c0] bytes 16 : memref<4x64xf16, 3>, memref<64xf16>
  kernel.cp_async %d[%t], %x[%c0, %t] bytes 4 {tag} : memref<1024xf32, 3 : i32>, memref<4x64xf32>
  kernel.cp_async %d[%t], %x[%c0, %t] bytes 16 src_bytes %c16 : memref<1024xf32, 3 : i32>, memref<4x64xf32>
  kernel.cp_async_commit
  kernel.cp_async_commit {tag}
  kernel.cp_async_wait 0
  kernel.cp_async_wait 2 {tag}
}

// Scalar and tensor-map parameters, passed by kernel.launch (a memref of the tensor for a map);
// a swizzled shared buffer.

// CHECK-LABEL: kernel.func @k_parameters(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<64xf32>, %[[N:[a-z0-9_]+]]: index, %[[A:[a-z0-9_]+]]: f32, %[[H:[a-z0-9_]+]]: f16, %[[B:[a-z0-9_]+]]: i1, %[[M:[a-z0-9_]+]]: !kernel.tensor_map<memref<64x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
// CHECK-NEXT:    %[[S:.*]] = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<8x32xf32, 3 : i32>
// CHECK-NEXT:    %[[S2:.*]] = kernel.shared_alloc {layout = #kernel.swizzle<32>} : memref<2x64xf16, 3 : i32>
// CHECK-NEXT:    %[[V:.*]] = memref.load %[[X]][%[[N]]] : memref<64xf32>
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[V]], %[[A]] : f32
// CHECK-NEXT:    memref.store %[[P]], %[[S]][%[[N]], %[[N]]] : memref<8x32xf32, 3 : i32>
// CHECK-NEXT:    %[[Q:.*]] = memref.load %[[S]][%[[N]], %[[N]]] : memref<8x32xf32, 3 : i32>
// CHECK-NEXT:    memref.store %[[Q]], %[[X]][%[[N]]] : memref<64xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @launch_parameters(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<64xf32>, %[[M:[a-z0-9_]+]]: memref<64x64xbf16>) {
// CHECK-NEXT:    %[[N:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[A:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %[[H:.*]] = arith.constant 1.000000e+00 : f16
// CHECK-NEXT:    %[[B:.*]] = arith.constant true
// CHECK-NEXT:    kernel.launch @k_parameters(%[[X]], %[[N]], %[[A]], %[[H]], %[[B]], %[[M]]) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<64xf32>, index, f32, f16, i1, memref<64x64xbf16>
kernel.func @k_parameters(%x: memref<64xf32>, %n: index, %a: f32, %h: f16, %b: i1, %m: !kernel.tensor_map<memref<64x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<8x32xf32, 3 : i32>
  %s2 = kernel.shared_alloc {layout = #kernel.swizzle<32>} : memref<2x64xf16, 3 : i32>
  %v = memref.load %x[%n] : memref<64xf32>
  %p = arith.mulf %v, %a : f32
  memref.store %p, %s[%n, %n] : memref<8x32xf32, 3 : i32>
  %q = memref.load %s[%n, %n] : memref<8x32xf32, 3 : i32>
  memref.store %q, %x[%n] : memref<64xf32>
}

func.func @launch_parameters(%x: memref<64xf32>, %m: memref<64x64xbf16>) {
  %n = arith.constant 3 : index
  %a = arith.constant 2.0 : f32
  %h = arith.constant 1.0 : f16
  %b = arith.constant true
  kernel.launch @k_parameters(%x, %n, %a, %h, %b, %m) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<64xf32>, index, f32, f16, i1, memref<64x64xbf16>
  func.return
}

// Barriers under uniform control flow: a loop over a block-uniform range, and an if on the
// block id. A barrier after a thread-dependent if is fine: every thread reaches it.

// CHECK-LABEL: kernel.func @k_uniform_barriers(
// CHECK:         scf.for
// CHECK-NEXT:      kernel.barrier
// CHECK:         scf.if
// CHECK-NEXT:      kernel.barrier
// CHECK:         scf.if
// CHECK-NEXT:      arith.constant
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.barrier
kernel.func @k_uniform_barriers(%x: memref<32xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = kernel.block_id x
  %n = kernel.grid_dim x
  %t = kernel.thread_id x
  %end = arith.addi %b, %n : index
  scf.for %i = %b to %end step %c1 {
    kernel.barrier
  }
  %first_block = arith.cmpi eq, %b, %c0 : index
  scf.if %first_block {
    kernel.barrier
  }
  %first_thread = arith.cmpi eq, %t, %c0 : index
  scf.if %first_thread {
    %v = arith.constant 1.0 : f32
    memref.store %v, %x[%t] : memref<32xf32>
  }
  kernel.barrier
}

// Shuffles under control flow that every lane of a warp takes alike: an if on the warp's index
// (thread_id x / 64, x extent 128), on thread_id y (each warp lies in one row of x), a loop
// over a range that differs between warps only, and an if on thread_id x >= 64.

// CHECK-LABEL: kernel.func @k_warp_uniform_shuffles(
// CHECK:         scf.if
// CHECK-NEXT:      kernel.shuffle
// CHECK:         scf.if
// CHECK-NEXT:      kernel.shuffle
// CHECK:         scf.for
// CHECK-NEXT:      kernel.shuffle
// CHECK:         scf.if
// CHECK-NEXT:      kernel.shuffle
kernel.func @k_warp_uniform_shuffles() block [128, 2, 1] {
  %v = arith.constant 1.0 : f32
  %c1 = arith.constant 1 : i32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %pair = arith.divui %tx, %c64 : index
  %first_pair = arith.cmpi eq, %pair, %c0 : index
  scf.if %first_pair {
    %r = kernel.shuffle xor %v, %c1 : f32
  }
  %row0 = arith.cmpi eq, %ty, %c0 : index
  scf.if %row0 {
    %r = kernel.shuffle down %v, %c1 : f32
  }
  scf.for %i = %pair to %c2 step %c64 {
    %r = kernel.shuffle up %v, %c1 : f32
  }
  %late = arith.cmpi uge, %tx, %c64 : index
  scf.if %late {
    %r = kernel.shuffle idx %v, %c1 : f32
  }
}

// Warp-level tensor cores: ldmatrix (x1, x2, x4, trans; from static, swizzled and dynamic shared
// memory) and mma_sync in each of its forms.

// CHECK-LABEL: kernel.func @k_tensor_cores(
// CHECK-SAME:    %[[Y:[a-z0-9_]+]]: memref<32x4xf32>) block [64, 1, 1] {
// CHECK-NEXT:    %[[S:.*]] = kernel.shared_alloc : memref<16x32xbf16, 3 : i32>
// CHECK-NEXT:    %[[W:.*]] = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<8x64xf16, 3 : i32>
// CHECK-NEXT:    %[[D:.*]] = kernel.dynamic_shared offset 0 : memref<8x8xi16, 3 : i32>
// CHECK-NEXT:    %[[T:.*]] = kernel.thread_id x
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[R:.*]] = arith.remui %[[T]], %[[C8]] : index
// CHECK-NEXT:    %[[A:.*]] = kernel.ldmatrix %[[S]][%[[R]], %[[C8]]] : memref<16x32xbf16, 3 : i32>, vector<8xbf16>
// CHECK-NEXT:    %[[B:.*]] = kernel.ldmatrix %[[S]][%[[R]], %[[C0]]] trans : memref<16x32xbf16, 3 : i32>, vector<4xbf16>
// CHECK-NEXT:    %[[H:.*]] = kernel.ldmatrix %[[W]][%[[R]], %[[C8]]] {tag} : memref<8x64xf16, 3 : i32>, vector<4xf16>
// CHECK-NEXT:    %[[H1:.*]] = kernel.ldmatrix %[[W]][%[[R]], %[[C0]]] trans : memref<8x64xf16, 3 : i32>, vector<2xf16>
// CHECK-NEXT:    %[[I:.*]] = kernel.ldmatrix %[[D]][%[[R]], %[[C0]]] : memref<8x8xi16, 3 : i32>, vector<2xi16>
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ACC:.*]] = vector.broadcast %[[Z]] : f32 to vector<4xf32>
// CHECK-NEXT:    %[[D0:.*]] = kernel.mma_sync m16n8k16 %[[A]], %[[B]], %[[ACC]] : vector<8xbf16>, vector<4xbf16>, vector<4xf32> -> vector<4xf32>
// CHECK-NEXT:    %[[HA:.*]] = kernel.ldmatrix %[[W]][%[[R]], %[[C0]]] : memref<8x64xf16, 3 : i32>, vector<8xf16>
// CHECK-NEXT:    %[[D1:.*]] = kernel.mma_sync m16n8k16 %[[HA]], %[[H]], %[[D0]] {tag} : vector<8xf16>, vector<4xf16>, vector<4xf32> -> vector<4xf32>
// CHECK-NEXT:    %[[BA:.*]] = kernel.ldmatrix %[[S]][%[[R]], %[[C0]]] : memref<16x32xbf16, 3 : i32>, vector<4xbf16>
// CHECK-NEXT:    %[[BB:.*]] = kernel.ldmatrix %[[S]][%[[R]], %[[C8]]] trans : memref<16x32xbf16, 3 : i32>, vector<2xbf16>
// CHECK-NEXT:    %[[D2:.*]] = kernel.mma_sync m16n8k8 %[[BA]], %[[BB]], %[[D1]] : vector<4xbf16>, vector<2xbf16>, vector<4xf32> -> vector<4xf32>
// CHECK-NEXT:    %[[D3:.*]] = kernel.mma_sync m16n8k8 %[[H]], %[[H1]], %[[D2]] : vector<4xf16>, vector<2xf16>, vector<4xf32> -> vector<4xf32>
// CHECK-NEXT:    %[[FA:.*]] = vector.broadcast %[[Z]] : f32 to vector<4xf32>
// CHECK-NEXT:    %[[FB:.*]] = vector.broadcast %[[Z]] : f32 to vector<2xf32>
// CHECK-NEXT:    %[[D4:.*]] = kernel.mma_sync m16n8k8 tf32 %[[FA]], %[[FB]], %[[D3]] : vector<4xf32>, vector<2xf32>, vector<4xf32> -> vector<4xf32>
// CHECK-NEXT:    kernel.vector_store %[[D4]], %[[Y]][%[[R]], %[[C0]]] : memref<32x4xf32>, vector<4xf32>
// CHECK-NEXT:  }
kernel.func @k_tensor_cores(%y: memref<32x4xf32>) block [64, 1, 1] {
  %s = kernel.shared_alloc : memref<16x32xbf16, 3 : i32>
  %w = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<8x64xf16, 3 : i32>
  %d = kernel.dynamic_shared offset 0 : memref<8x8xi16, 3 : i32>
  %t = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %r = arith.remui %t, %c8 : index
  %a = kernel.ldmatrix %s[%r, %c8] : memref<16x32xbf16, 3 : i32>, vector<8xbf16>
  %b = kernel.ldmatrix %s[%r, %c0] trans : memref<16x32xbf16, 3 : i32>, vector<4xbf16>
  %h = kernel.ldmatrix %w[%r, %c8] {tag} : memref<8x64xf16, 3 : i32>, vector<4xf16>
  %h1 = kernel.ldmatrix %w[%r, %c0] trans : memref<8x64xf16, 3 : i32>, vector<2xf16>
  %i = kernel.ldmatrix %d[%r, %c0] : memref<8x8xi16, 3 : i32>, vector<2xi16>
  %z = arith.constant 0.0 : f32
  %acc = vector.broadcast %z : f32 to vector<4xf32>
  %d0 = kernel.mma_sync m16n8k16 %a, %b, %acc : vector<8xbf16>, vector<4xbf16>, vector<4xf32> -> vector<4xf32>
  %ha = kernel.ldmatrix %w[%r, %c0] : memref<8x64xf16, 3 : i32>, vector<8xf16>
  %d1 = kernel.mma_sync m16n8k16 %ha, %h, %d0 {tag} : vector<8xf16>, vector<4xf16>, vector<4xf32> -> vector<4xf32>
  %ba = kernel.ldmatrix %s[%r, %c0] : memref<16x32xbf16, 3 : i32>, vector<4xbf16>
  %bb = kernel.ldmatrix %s[%r, %c8] trans : memref<16x32xbf16, 3 : i32>, vector<2xbf16>
  %d2 = kernel.mma_sync m16n8k8 %ba, %bb, %d1 : vector<4xbf16>, vector<2xbf16>, vector<4xf32> -> vector<4xf32>
  %d3 = kernel.mma_sync m16n8k8 %h, %h1, %d2 : vector<4xf16>, vector<2xf16>, vector<4xf32> -> vector<4xf32>
  %fa = vector.broadcast %z : f32 to vector<4xf32>
  %fb = vector.broadcast %z : f32 to vector<2xf32>
  %d4 = kernel.mma_sync m16n8k8 tf32 %fa, %fb, %d3 : vector<4xf32>, vector<2xf32>, vector<4xf32> -> vector<4xf32>
  kernel.vector_store %d4, %y[%r, %c0] : memref<32x4xf32>, vector<4xf32>
}

// tf32 fragments from f32 tiles: ldmatrix moves 32-bit words, one f32 of each matrix a lane.

// CHECK-LABEL: kernel.func @k_tf32_fragments(
// CHECK:         %[[FA:.*]] = kernel.ldmatrix %[[F:.*]][%{{.*}}, %{{.*}}] : memref<16x8xf32, 3 : i32>, vector<4xf32>
// CHECK-NEXT:    %[[FB:.*]] = kernel.ldmatrix %[[F]][%{{.*}}, %{{.*}}] : memref<16x8xf32, 3 : i32>, vector<2xf32>
// CHECK-NEXT:    kernel.mma_sync m16n8k8 tf32 %[[FA]], %[[FB]], %{{.*}} : vector<4xf32>, vector<2xf32>, vector<4xf32> -> vector<4xf32>
kernel.func @k_tf32_fragments(%y: memref<32x4xf32>) block [32, 1, 1] {
  %f = kernel.shared_alloc : memref<16x8xf32, 3 : i32>
  %t = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %r = arith.remui %t, %c16 : index
  %z = arith.constant 0.0 : f32
  %acc = vector.broadcast %z : f32 to vector<4xf32>
  %fa = kernel.ldmatrix %f[%r, %c0] : memref<16x8xf32, 3 : i32>, vector<4xf32>
  %fb = kernel.ldmatrix %f[%r, %c0] : memref<16x8xf32, 3 : i32>, vector<2xf32>
  %d = kernel.mma_sync m16n8k8 tf32 %fa, %fb, %acc : vector<4xf32>, vector<2xf32>, vector<4xf32> -> vector<4xf32>
  kernel.vector_store %d, %y[%r, %c0] : memref<32x4xf32>, vector<4xf32>
}

// CHECK-LABEL: kernel.func @k_empty() block [32, 1, 1] {
// CHECK-NEXT:  }
kernel.func @k_empty() block [32, 1, 1] {
}

// The host allocates buffers and launches kernels with a grid, a block and the bytes of
// dynamic shared memory; a `persistent` launch's blocks stride through their work, so the
// runtime may launch fewer.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<4x64xf32>, %[[G:[a-z0-9_]+]]: memref<64xf16>) -> memref<32xf32> {
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<32xf32>
// CHECK-NEXT:    kernel.launch @k_ids(%[[X]]) grid [4, 2, 1] block [64, 2, 1] smem 0 : memref<4x64xf32>
// CHECK-NEXT:    kernel.launch @k_shared(%[[X]], %[[G]]) grid [1, 1, 1] block [64, 1, 1] smem 4112 {tag} : memref<4x64xf32>, memref<64xf16>
// CHECK-NEXT:    kernel.launch @k_uniform_barriers(%[[Y]]) grid [2147483647, 65535, 65535] block [32, 1, 1] smem 0 : memref<32xf32>
// CHECK-NEXT:    kernel.launch @k_empty() grid [1, 1, 1] block [32, 1, 1] smem 0
// CHECK-NEXT:    kernel.launch @k_empty() grid [4, 1, 1] block [32, 1, 1] smem 0 persistent
// CHECK-NEXT:    func.return %[[Y]] : memref<32xf32>
func.func @forward(%x: memref<4x64xf32>, %g: memref<64xf16>) -> memref<32xf32> {
  %y = memref.alloc() : memref<32xf32>
  kernel.launch @k_ids(%x) grid [4, 2, 1] block [64, 2, 1] smem 0 : memref<4x64xf32>
  kernel.launch @k_shared(%x, %g) grid [1, 1, 1] block [64, 1, 1] smem 4112 {tag} : memref<4x64xf32>, memref<64xf16>
  kernel.launch @k_uniform_barriers(%y) grid [2147483647, 65535, 65535] block [32, 1, 1] smem 0 : memref<32xf32>
  kernel.launch @k_empty() grid [1, 1, 1] block [32, 1, 1] smem 0
  kernel.launch @k_empty() grid [4, 1, 1] block [32, 1, 1] smem 0 persistent
  func.return %y : memref<32xf32>
}

// Hopper (sm_90a): mbarriers, a TMA load through a tensor map, warpgroup MMAs, setmaxnreg;
// named barriers.

// CHECK-LABEL: kernel.func @k_hopper(%map: !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>) block [384, 1, 1] {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c16 = arith.constant 16 : index
// CHECK-NEXT:    %c64 = arith.constant 64 : index
// CHECK-NEXT:    %full = kernel.mbarrier_alloc : !kernel.mbarrier<2>
// CHECK-NEXT:    %a = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x128x64xbf16, 3 : i32>
// CHECK-NEXT:    %b = kernel.dynamic_shared offset 32768 {layout = #kernel.swizzle<128>} : memref<2x256x64xbf16, 3 : i32>
// CHECK-NEXT:    kernel.mbarrier_init %full[%c0], arrivals 1 : !kernel.mbarrier<2>
// CHECK-NEXT:    kernel.fence_proxy_async
// CHECK-NEXT:    kernel.mbarrier_arrive_expect_tx %full[%c0], bytes 16384 : !kernel.mbarrier<2>
// CHECK-NEXT:    kernel.tma_load %map[%c0, %c64], %a[%c1, %c0, %c0], %full[%c0] : !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>, memref<2x128x64xbf16, 3 : i32>, !kernel.mbarrier<2>
// CHECK-NEXT:    kernel.mbarrier_wait %full[%c0], %c0 : !kernel.mbarrier<2>
// CHECK-NEXT:    kernel.mbarrier_arrive %full[%c1] : !kernel.mbarrier<2>
// CHECK-NEXT:    %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %c = vector.broadcast %z : f32 to vector<128xf32>
// CHECK-NEXT:    kernel.wgmma_fence
// CHECK-NEXT:    %d = kernel.wgmma m64n256k16 %a[%c0, %c64, %c0], %b[%c0, %c0, %c0], %c : memref<2x128x64xbf16, 3 : i32>, memref<2x256x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>
// CHECK-NEXT:    %e = kernel.wgmma m64n256k16 %a[%c0, %c64, %c0], %b[%c0, %c0, %c0], %d : memref<2x128x64xbf16, 3 : i32>, memref<2x256x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>
// CHECK-NEXT:    %p = kernel.dynamic_shared offset 98304 {layout = #kernel.swizzle<128>} : memref<2x4x64x64xbf16, 3 : i32>
// CHECK-NEXT:    %d2 = kernel.wgmma m64n256k16 %a[%c0, %c64, %c0], %p[%c1, %c0, %c16, %c0] mn_major, %e : memref<2x128x64xbf16, 3 : i32>, memref<2x4x64x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>
// CHECK-NEXT:    kernel.wgmma_commit
// CHECK-NEXT:    %f, %g = kernel.wgmma_wait 0, %d2, %c : vector<128xf32>, vector<128xf32>
// CHECK-NEXT:    kernel.wgmma_wait 1
// CHECK-NEXT:    kernel.setmaxnreg inc 240
// CHECK-NEXT:    kernel.setmaxnreg dec 24 {tag}
// CHECK-NEXT:    kernel.named_barrier sync %c1, threads 256
// CHECK-NEXT:    kernel.named_barrier arrive %c1, threads 256 {tag}
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @launch_hopper(%x: memref<256x128xbf16>) {
// CHECK-NEXT:    kernel.launch @k_hopper(%x) grid [1, 1, 1] block [384, 1, 1] smem 163840 : memref<256x128xbf16>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
kernel.func @k_hopper(%map: !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>) block [384, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %full = kernel.mbarrier_alloc : !kernel.mbarrier<2>
  %a = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x128x64xbf16, 3 : i32>
  %b = kernel.dynamic_shared offset 32768 {layout = #kernel.swizzle<128>} : memref<2x256x64xbf16, 3 : i32>
  kernel.mbarrier_init %full[%c0], arrivals 1 : !kernel.mbarrier<2>
  kernel.fence_proxy_async
  kernel.mbarrier_arrive_expect_tx %full[%c0], bytes 16384 : !kernel.mbarrier<2>
  kernel.tma_load %map[%c0, %c64], %a[%c1, %c0, %c0], %full[%c0] : !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>, memref<2x128x64xbf16, 3 : i32>, !kernel.mbarrier<2>
  kernel.mbarrier_wait %full[%c0], %c0 : !kernel.mbarrier<2>
  kernel.mbarrier_arrive %full[%c1] : !kernel.mbarrier<2>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<128xf32>
  kernel.wgmma_fence
  %d = kernel.wgmma m64n256k16 %a[%c0, %c64, %c0], %b[%c0, %c0, %c0], %c : memref<2x128x64xbf16, 3 : i32>, memref<2x256x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>
  %e = kernel.wgmma m64n256k16 %a[%c0, %c64, %c0], %b[%c0, %c0, %c0], %d : memref<2x128x64xbf16, 3 : i32>, memref<2x256x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>
  %p = kernel.dynamic_shared offset 98304 {layout = #kernel.swizzle<128>} : memref<2x4x64x64xbf16, 3 : i32>
  %d2 = kernel.wgmma m64n256k16 %a[%c0, %c64, %c0], %p[%c1, %c0, %c16, %c0] mn_major, %e : memref<2x128x64xbf16, 3 : i32>, memref<2x4x64x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>
  kernel.wgmma_commit
  %f, %g = kernel.wgmma_wait 0, %d2, %c : vector<128xf32>, vector<128xf32>
  kernel.wgmma_wait 1
  kernel.setmaxnreg inc 240
  kernel.setmaxnreg dec 24 {tag}
  kernel.named_barrier sync %c1, threads 256
  kernel.named_barrier arrive %c1, threads 256 {tag}
}
func.func @launch_hopper(%x: memref<256x128xbf16>) {
  kernel.launch @k_hopper(%x) grid [1, 1, 1] block [384, 1, 1] smem 163840 : memref<256x128xbf16>
  func.return
}

// TMA stores of a staging buffer into a tensor, in bulk-async groups that the thread
// commits and waits for (until their reads of shared memory are done, with `read`).
// CHECK-LABEL: kernel.func @k_tma_store(%map: !kernel.tensor_map<memref<256x128xbf16>, box [64, 64], swizzle 128>) block [128, 1, 1] {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c64 = arith.constant 64 : index
// CHECK-NEXT:    %out = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
// CHECK-NEXT:    kernel.fence_proxy_async
// CHECK-NEXT:    kernel.tma_store %map[%c64, %c0], %out[%c1, %c0, %c0] : !kernel.tensor_map<memref<256x128xbf16>, box [64, 64], swizzle 128>, memref<2x64x64xbf16, 3 : i32>
// CHECK-NEXT:    kernel.tma_store %map[%c0, %c64], %out[%c0, %c0, %c0] {tag} : !kernel.tensor_map<memref<256x128xbf16>, box [64, 64], swizzle 128>, memref<2x64x64xbf16, 3 : i32>
// CHECK-NEXT:    kernel.tma_store_commit
// CHECK-NEXT:    kernel.tma_store_commit {tag}
// CHECK-NEXT:    kernel.tma_store_wait 1 read
// CHECK-NEXT:    kernel.tma_store_wait 0
// CHECK-NEXT:    kernel.tma_store_wait 63 read {tag}
// CHECK-NEXT:  }
kernel.func @k_tma_store(%map: !kernel.tensor_map<memref<256x128xbf16>, box [64, 64], swizzle 128>) block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %out = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
  kernel.fence_proxy_async
  kernel.tma_store %map[%c64, %c0], %out[%c1, %c0, %c0] : !kernel.tensor_map<memref<256x128xbf16>, box [64, 64], swizzle 128>, memref<2x64x64xbf16, 3 : i32>
  kernel.tma_store %map[%c0, %c64], %out[%c0, %c0, %c0] {tag} : !kernel.tensor_map<memref<256x128xbf16>, box [64, 64], swizzle 128>, memref<2x64x64xbf16, 3 : i32>
  kernel.tma_store_commit
  kernel.tma_store_commit {tag}
  kernel.tma_store_wait 1 read
  kernel.tma_store_wait 0
  kernel.tma_store_wait 63 read {tag}
}

// A wgmma with A in registers (P of attention's P V), B an MN-major panel.
// CHECK-LABEL: kernel.func @k_wgmma_a_registers(%xx: bf16) block [128, 1, 1] {
// CHECK-NEXT:    %frag = vector.broadcast %xx : bf16 to vector<8xbf16>
// CHECK-NEXT:    %k0 = arith.constant 0 : index
// CHECK-NEXT:    %vt = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x1x64x64xbf16, 3 : i32>
// CHECK-NEXT:    %zz = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %acc = vector.broadcast %zz : f32 to vector<32xf32>
// CHECK-NEXT:    kernel.wgmma_fence
// CHECK-NEXT:    %dd = kernel.wgmma m64n64k16 %frag, %vt[%k0, %k0, %k0, %k0] mn_major, %acc : vector<8xbf16>, memref<2x1x64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
// CHECK-NEXT:    kernel.wgmma_commit
// CHECK-NEXT:    %ee = kernel.wgmma_wait 0, %dd : vector<32xf32>
// CHECK-NEXT:  }
kernel.func @k_wgmma_a_registers(%xx: bf16) block [128, 1, 1] {
  %frag = vector.broadcast %xx : bf16 to vector<8xbf16>
  %k0 = arith.constant 0 : index
  %vt = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x1x64x64xbf16, 3 : i32>
  %zz = arith.constant 0.0 : f32
  %acc = vector.broadcast %zz : f32 to vector<32xf32>
  kernel.wgmma_fence
  %dd = kernel.wgmma m64n64k16 %frag, %vt[%k0, %k0, %k0, %k0] mn_major, %acc : vector<8xbf16>, memref<2x1x64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
  kernel.wgmma_commit
  %ee = kernel.wgmma_wait 0, %dd : vector<32xf32>
}

// A cluster of 4 blocks along x: each reads the shared buffer of the next block of its cluster.
// CHECK-LABEL: kernel.func @k_cluster(%y: memref<8x32xf32>) block [32, 1, 1] cluster 4 {
// CHECK-NEXT:    %s = kernel.shared_alloc : memref<32xf32, 3 : i32>
// CHECK-NEXT:    %t = kernel.thread_id x
// CHECK-NEXT:    %b = kernel.block_id x
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    %v = memref.load %y[%b, %t] : memref<8x32xf32>
// CHECK-NEXT:    memref.store %v, %s[%t] : memref<32xf32, 3 : i32>
// CHECK-NEXT:    kernel.cluster_barrier
// CHECK-NEXT:    %n = arith.addi %b, %c1 : index
// CHECK-NEXT:    %r = arith.remui %n, %c4 : index
// CHECK-NEXT:    %m = kernel.map_shared_rank %s, %r : memref<32xf32, 3 : i32>
// CHECK-NEXT:    %w = memref.load %m[%t] : memref<32xf32, 3 : i32>
// CHECK-NEXT:    kernel.cluster_barrier {tag}
// CHECK-NEXT:    memref.store %w, %y[%b, %t] : memref<8x32xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @launch_cluster(%y: memref<8x32xf32>) {
// CHECK-NEXT:    kernel.launch @k_cluster(%y) grid [8, 1, 1] block [32, 1, 1] smem 0 : memref<8x32xf32>
kernel.func @k_cluster(%y: memref<8x32xf32>) block [32, 1, 1] cluster 4 {
  %s = kernel.shared_alloc : memref<32xf32, 3 : i32>
  %t = kernel.thread_id x
  %b = kernel.block_id x
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %v = memref.load %y[%b, %t] : memref<8x32xf32>
  memref.store %v, %s[%t] : memref<32xf32, 3 : i32>
  kernel.cluster_barrier
  %n = arith.addi %b, %c1 : index
  %r = arith.remui %n, %c4 : index
  %m = kernel.map_shared_rank %s, %r : memref<32xf32, 3 : i32>
  %w = memref.load %m[%t] : memref<32xf32, 3 : i32>
  kernel.cluster_barrier {tag}
  memref.store %w, %y[%b, %t] : memref<8x32xf32>
}
func.func @launch_cluster(%y: memref<8x32xf32>) {
  kernel.launch @k_cluster(%y) grid [8, 1, 1] block [32, 1, 1] smem 0 : memref<8x32xf32>
  func.return
}

// Hopper clusters: a TMA load multicast to the blocks of the cluster in a mask of ranks, and
// arrivals on the mbarrier of the block of a rank (the other block's, and the block's own).
// CHECK-LABEL: kernel.func @k_cluster_hopper(%map: !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>) block [128, 1, 1] cluster 2 {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %c64 = arith.constant 64 : index
// CHECK-NEXT:    %mask = arith.constant 3 : index
// CHECK-NEXT:    %full = kernel.mbarrier_alloc : !kernel.mbarrier<2>
// CHECK-NEXT:    %a = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x128x64xbf16, 3 : i32>
// CHECK-NEXT:    kernel.tma_load %map[%c0, %c64], %a[%c1, %c0, %c0], %full[%c0] multicast %mask : !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>, memref<2x128x64xbf16, 3 : i32>, !kernel.mbarrier<2>
// CHECK-NEXT:    kernel.tma_load %map[%c64, %c0], %a[%c0, %c0, %c0], %full[%c1] multicast %c1 {tag} : !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>, memref<2x128x64xbf16, 3 : i32>, !kernel.mbarrier<2>
// CHECK-NEXT:    kernel.tma_load %map[%c0, %c0], %a[%c0, %c0, %c0], %full[%c1] : !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>, memref<2x128x64xbf16, 3 : i32>, !kernel.mbarrier<2>
// CHECK-NEXT:    %b = kernel.block_id x
// CHECK-NEXT:    %r = arith.remui %b, %c2 : index
// CHECK-NEXT:    %o = arith.subi %c1, %r : index
// CHECK-NEXT:    kernel.mbarrier_arrive %full[%c1] rank %o : !kernel.mbarrier<2>
// CHECK-NEXT:    kernel.mbarrier_arrive %full[%c0] rank %c0 {tag} : !kernel.mbarrier<2>
// CHECK-NEXT:    kernel.mbarrier_arrive %full[%c0] : !kernel.mbarrier<2>
// CHECK-NEXT:  }
kernel.func @k_cluster_hopper(%map: !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>) block [128, 1, 1] cluster 2 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %mask = arith.constant 3 : index
  %full = kernel.mbarrier_alloc : !kernel.mbarrier<2>
  %a = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x128x64xbf16, 3 : i32>
  kernel.tma_load %map[%c0, %c64], %a[%c1, %c0, %c0], %full[%c0] multicast %mask : !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>, memref<2x128x64xbf16, 3 : i32>, !kernel.mbarrier<2>
  kernel.tma_load %map[%c64, %c0], %a[%c0, %c0, %c0], %full[%c1] multicast %c1 {tag} : !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>, memref<2x128x64xbf16, 3 : i32>, !kernel.mbarrier<2>
  kernel.tma_load %map[%c0, %c0], %a[%c0, %c0, %c0], %full[%c1] : !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>, memref<2x128x64xbf16, 3 : i32>, !kernel.mbarrier<2>
  %b = kernel.block_id x
  %r = arith.remui %b, %c2 : index
  %o = arith.subi %c1, %r : index
  kernel.mbarrier_arrive %full[%c1] rank %o : !kernel.mbarrier<2>
  kernel.mbarrier_arrive %full[%c0] rank %c0 {tag} : !kernel.mbarrier<2>
  kernel.mbarrier_arrive %full[%c0] : !kernel.mbarrier<2>
}

// A kernel of ? buffers takes the dynamic size last; its launch runs the blocks the size
// needs (`sized`).

// CHECK-LABEL: kernel.func @k_dynamic(
// CHECK-SAME:    %{{.*}}: memref<?x64xf32>, %[[S:[a-z0-9_]+]]: index) block [32, 1, 1] {
// CHECK:       kernel.launch @k_dynamic(%{{.*}}, %{{.*}}) grid [1024, 1, 1] sized [2, 1, 1] block [32, 1, 1] smem 0 : memref<?x64xf32>, index
kernel.func @k_dynamic(%x: memref<?x64xf32>, %s0: index) block [32, 1, 1] {
  %0 = kernel.block_id x
  %1 = kernel.grid_dim x
  scf.for %i = %0 to %s0 step %1 {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%i, %c0] : memref<?x64xf32>
    memref.store %v, %x[%i, %c0] : memref<?x64xf32>
  }
}
func.func @launch_dynamic(%x: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %s0 = memref.dim %x, %c0 : memref<?x64xf32>
  kernel.launch @k_dynamic(%x, %s0) grid [1024, 1, 1] sized [2, 1, 1] block [32, 1, 1] smem 0 : memref<?x64xf32>, index
  func.return
}

// A wgmma on f32 tiles multiplies them as tf32, K = 8 (32 bytes of each row, as f16's 16).

// CHECK-LABEL: kernel.func @k_tf32_wgmma() block [128, 1, 1] {
// CHECK:         %d = kernel.wgmma m64n64k8 %a[%c0, %c8], %b[%c0, %c8], %c : memref<64x32xf32, 3 : i32>, memref<64x32xf32, 3 : i32>, vector<32xf32> -> vector<32xf32>
kernel.func @k_tf32_wgmma() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %a = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x32xf32, 3 : i32>
  %b = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x32xf32, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  kernel.wgmma_fence
  %d = kernel.wgmma m64n64k8 %a[%c0, %c8], %b[%c0, %c8], %c : memref<64x32xf32, 3 : i32>, memref<64x32xf32, 3 : i32>, vector<32xf32> -> vector<32xf32>
  kernel.wgmma_commit
  %e = kernel.wgmma_wait 0, %d : vector<32xf32>
}
