// RUN: emmy-opt %s --split-input-file --verify-diagnostics

// --- kernel.func ---------------------------------------------------------------------------

func.func @host() {
  // expected-error @+1 {{a kernel.func is a module-level symbol that kernel.launch can find, but its parent is 'func.func'}}
  kernel.func @nested() block [32, 1, 1] {
  }
  func.return
}

// -----

// expected-error @+1 {{a kernel.func returns nothing, it writes its buffer arguments; its type (memref<4xf32>) -> f32 has results}}
"kernel.func"() <{sym_name = "with_results", function_type = (memref<4xf32>) -> f32, block = array<i64: 32, 1, 1>}> ({
^bb0(%x: memref<4xf32>):
}) : () -> ()

// -----

// expected-error @+1 {{unknown GPU target 'sm_75'; expected one of sm_80, sm_90a}}
builtin.module attributes {kernel.target = #kernel.target<"sm_75">} {
}

// -----

// An scf.if with results whose else branch is empty: its values would be undefined when the
// condition is false (xDSL's scf.if accepts it).
// expected-error @+1 {{the else branch of an scf.if yields (), its results are (f32)}}
kernel.func @if_without_else_value(%x: memref<4xf32>) block [32, 1, 1] {
  %c = arith.constant true
  %v = scf.if %c -> (f32) {
    %a = arith.constant 1.0 : f32
    scf.yield %a : f32
  } else {
  }
}

// -----

// expected-error @+1 {{a block has 3 dimensions (x, y, z), got [256, 1]}}
kernel.func @two_dims() block [256, 1] {
}

// -----

// expected-error @+1 {{block [32, 1, 0]: dimension z must be between 1 and 64}}
kernel.func @empty_dim() block [32, 1, 0] {
}

// -----

// expected-error @+1 {{block [1, 1, 128]: dimension z must be between 1 and 64}}
kernel.func @deep() block [1, 1, 128] {
}

// -----

// expected-error @+1 {{block [64, 32, 1] has 2048 threads, but a block has at most 1024}}
kernel.func @too_many_threads() block [64, 32, 1] {
}

// -----

// expected-error @+1 {{block [48, 1, 1] has 48 threads, which is not a multiple of the warp size 32}}
kernel.func @partial_warp() block [48, 1, 1] {
}

// -----

// expected-error @+1 {{kernel argument #1 is a memref, a scalar (f16, bf16, f32, f64, i1, i8, i16, i32, i64 or index) or a !kernel.tensor_map, got vector<4xf32>}}
kernel.func @vector_argument(%x: memref<4xf32>, %s: vector<4xf32>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{kernel argument #0 is a memref, a scalar (f16, bf16, f32, f64, i1, i8, i16, i32, i64 or index) or a !kernel.tensor_map, got i128}}
kernel.func @wide_integer_argument(%s: i128) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{a tensor map's tensor has rank 1 to 5, got memref<1x1x1x1x1x8xbf16>}}
kernel.func @tensor_map_rank(%t: !kernel.tensor_map<memref<1x1x1x1x1x8xbf16>, box [1, 1, 1, 1, 1, 8], swizzle 0>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{a tensor map's box has one extent from 1 to 256 per dimension of memref<512x64xbf16>, got [512, 64]}}
kernel.func @tensor_map_box(%t: !kernel.tensor_map<memref<512x64xbf16>, box [512, 64], swizzle 128>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{a tensor map's box has one extent from 1 to 256 per dimension of memref<512x64xbf16>, got [64]}}
kernel.func @tensor_map_box_rank(%t: !kernel.tensor_map<memref<512x64xbf16>, box [64], swizzle 128>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{a tensor map's swizzle is 0 (none), 32, 64 or 128 bytes, got 256}}
kernel.func @tensor_map_swizzle(%t: !kernel.tensor_map<memref<512x64xbf16>, box [64, 64], swizzle 256>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{a tensor map's last box dimension spans a multiple of 16 bytes and at most the 128-byte swizzle span, got 128 x bf16 = 256 bytes}}
kernel.func @tensor_map_wide_box(%t: !kernel.tensor_map<memref<512x128xbf16>, box [64, 128], swizzle 128>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{a tensor map's last box dimension spans a multiple of 16 bytes, got 4 x bf16 = 8 bytes}}
kernel.func @tensor_map_narrow_box(%t: !kernel.tensor_map<memref<512x128xbf16>, box [64, 4], swizzle 0>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{a tensor map's tensor is global memory, but its type memref<64x64xbf16, 3 : i32> is in shared memory space 3}}
kernel.func @tensor_map_shared(%t: !kernel.tensor_map<memref<64x64xbf16, 3 : i32>, box [64, 64], swizzle 128>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{a tensor map's tensor is a memref, got vector<64xbf16>}}
kernel.func @tensor_map_vector(%t: !kernel.tensor_map<vector<64xbf16>, box [64], swizzle 0>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{a kernel.func whose buffers have a dynamic dim (?) takes the dynamic size as its last argument, an index}}
kernel.func @dynamic_buffer(%x: memref<?x4xf32>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{kernel argument #0 has type memref<4xf32, strided<[2]>>, but kernel buffers are dense row-major, with the default layout}}
kernel.func @strided_buffer(%x: memref<4xf32, strided<[2]>>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{kernel buffers hold f16, bf16, f32, f64, i1, i8, i16, i32, i64, index, ui8, ui16, ui32 or ui64 elements, got f80}}
kernel.func @long_double(%x: memref<4xf80>) block [32, 1, 1] {
}

// -----

// A buffer of 4-bit integers: no element type emmy lays out (nor prints, nor runs).
// expected-error @+1 {{kernel buffers hold f16, bf16, f32, f64, i1, i8, i16, i32, i64, index, ui8, ui16, ui32 or ui64 elements, got i4}}
kernel.func @nibbles(%x: memref<32xi4>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{kernel argument #0 is global memory, but its type memref<4xf32, 3 : i32> is in shared memory space 3}}
kernel.func @shared_argument(%x: memref<4xf32, 3 : i32>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{kernel argument #0 is global memory, which has the default memory space, but its type is memref<4xf32, 5 : i32>}}
kernel.func @local_argument(%x: memref<4xf32, 5 : i32>) block [32, 1, 1] {
}

// -----

// expected-error @+1 {{a kernel.func body holds only kernel, arith and math ops, scf.for, scf.if, scf.yield, memref.load and memref.store, vector.broadcast, vector.extract and vector.insert, found 'memref.alloc'}}
kernel.func @allocates(%x: memref<4xf32>) block [32, 1, 1] {
  %scratch = memref.alloc() : memref<4xf32>
}

// -----

kernel.func @k() block [32, 1, 1] {
}

kernel.func @launches_from_kernel() block [32, 1, 1] {
  // expected-error @+1 {{a kernel.launch runs on the host, in a func.func, but its parent is 'kernel.func'}}
  kernel.launch @k() grid [1, 1, 1] block [32, 1, 1] smem 0
}

// -----

// 49152 bytes is the most static shared memory one block may use (more is dynamic shared
// memory, up to the 227 KB of an sm_90a block); each shared buffer is rounded up to 16 bytes.
// expected-error @+1 {{kernel @too_much_shared allocates 49616 bytes of static shared memory, over the 49152-byte (48 KB) limit of one block on sm_90a (larger buffers are dynamic shared memory)}}
kernel.func @too_much_shared() block [32, 1, 1] {
  %a = kernel.shared_alloc : memref<12288xf32, 3 : i32>
  %b = kernel.shared_alloc : memref<112xf32, 3 : i32>
  %c = kernel.shared_alloc : memref<1xf32, 3 : i32>
}

// --- thread and block ids -----------------------------------------------------------------

// -----

func.func @thread_id_on_host() {
  // expected-error @+1 {{'kernel.thread_id' must be nested in a kernel.func}}
  %t = kernel.thread_id x
  func.return
}

// -----

func.func @grid_dim_on_host() {
  // expected-error @+1 {{'kernel.grid_dim' must be nested in a kernel.func}}
  %t = kernel.grid_dim x
  func.return
}

// -----

kernel.func @bad_dimension() block [32, 1, 1] {
  // expected-error @+1 {{'kernel.block_id' op "w" should be of base attribute kernel.dim}}
  %t = "kernel.block_id"() <{dimension = "w"}> : () -> index
}

// -----

kernel.func @bad_dimension_syntax() block [32, 1, 1] {
  // expected-error @+1 {{Expected `x`, `y`, or `z`.}}
  %t = kernel.block_dim w
}

// --- shared memory ------------------------------------------------------------------------

// -----

kernel.func @global_shared_alloc() block [32, 1, 1] {
  // expected-error @+1 {{a kernel.shared_alloc buffer is shared memory, which is memory space 3 (memref<..., 3 : i32>), but its type is memref<8xf32>}}
  %s = kernel.shared_alloc : memref<8xf32>
}

// -----

kernel.func @dynamic_shared_alloc() block [32, 1, 1] {
  // expected-error @+1 {{a kernel.shared_alloc buffer has type memref<?xf32, 3 : i32>, but shared memory is static}}
  %s = "kernel.shared_alloc"() : () -> memref<?xf32, 3 : i32>
}

// -----

func.func @shared_alloc_on_host() {
  // expected-error @+1 {{'kernel.shared_alloc' must be nested in a kernel.func}}
  %s = kernel.shared_alloc : memref<8xf32, 3 : i32>
  func.return
}

// -----

kernel.func @misaligned_view() block [32, 1, 1] {
  // expected-error @+1 {{a dynamic shared view starts at a byte offset that is a non-negative multiple of 16, got 4}}
  %d = kernel.dynamic_shared offset 4 : memref<8xf32, 3 : i32>
}

// -----

kernel.func @swizzled_view_offset() block [32, 1, 1] {
  // expected-error @+1 {{a view swizzled in 128-byte spans starts where its pattern does, at a multiple of 1024 bytes, got 512}}
  %d = kernel.dynamic_shared offset 512 {layout = #kernel.swizzle<128>} : memref<8x64xf16, 3 : i32>
}

// -----

kernel.func @swizzled_view_size() block [32, 1, 1] {
  // expected-error @+1 {{a buffer swizzled in 128-byte spans is a whole number of them, but memref<8x4xf16, 3 : i32> is 64 bytes}}
  %d = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<8x4xf16, 3 : i32>
}

// -----

kernel.func @negative_view() block [32, 1, 1] {
  // expected-error @+1 {{a dynamic shared view starts at a byte offset that is a non-negative multiple of 16, got -16}}
  %d = kernel.dynamic_shared offset -16 : memref<8xf32, 3 : i32>
}

// -----

kernel.func @huge_view() block [32, 1, 1] {
  // expected-error @+1 {{a dynamic shared view ending at byte 232464 is over the 232448-byte (227 KB) limit of one block}}
  %d = kernel.dynamic_shared offset 16 : memref<58112xf32, 3 : i32>
}

// -----

kernel.func @global_view() block [32, 1, 1] {
  // expected-error @+1 {{a kernel.dynamic_shared view is shared memory, which is memory space 3 (memref<..., 3 : i32>), but its type is memref<8xf32, 1 : i32>}}
  %d = kernel.dynamic_shared offset 0 : memref<8xf32, 1 : i32>
}

// --- barriers -------------------------------------------------------------------------------

// -----

kernel.func @barrier_under_lane_if() block [64, 1, 1] {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %t = kernel.thread_id x
  %lane = arith.remui %t, %c32 : index
  %first = arith.cmpi eq, %lane, %c0 : index
  scf.if %first {
    // expected-error @+1 {{a kernel.barrier must be reached by every thread of the block, but it is inside an scf.if whose condition depends on kernel.thread_id}}
    kernel.barrier
  }
}

// -----

kernel.func @barrier_in_strided_loop() block [64, 1, 1] {
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %t = kernel.thread_id y
  scf.for %j = %t to %c1024 step %c64 {
    // expected-error @+1 {{a kernel.barrier must be reached by every thread of the block, but it is inside an scf.for whose bounds depend on kernel.thread_id}}
    kernel.barrier
  }
}

// -----

// Under a uniform if that is itself inside a divergent one.
kernel.func @barrier_nested() block [64, 1, 1] {
  %c0 = arith.constant 0 : index
  %b = kernel.block_id x
  %t = kernel.thread_id x
  %low = arith.cmpi ult, %t, %b : index
  %first_block = arith.cmpi eq, %b, %c0 : index
  scf.if %low {
    scf.if %first_block {
      // expected-error @+1 {{inside an scf.if whose condition depends on kernel.thread_id}}
      kernel.barrier
    }
  }
}

// -----

// A loop-carried value that picks up the thread id makes the loop's result thread-dependent.
kernel.func @barrier_after_carried_taint() block [64, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = kernel.thread_id x
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %c0) -> (index) {
    %next = arith.addi %acc, %t : index
    scf.yield %next : index
  }
  scf.for %j = %c0 to %sum step %c1 {
    // expected-error @+1 {{inside an scf.for whose bounds depend on kernel.thread_id}}
    kernel.barrier
  }
}

// -----

// Loads at thread-dependent indices, shuffles of thread-dependent values and the old values
// of atomics all depend on the thread.
kernel.func @barrier_after_load(%x: memref<64xf32>) block [64, 1, 1] {
  %zero = arith.constant 0.0 : f32
  %t = kernel.thread_id x
  %v = memref.load %x[%t] : memref<64xf32>
  %positive = arith.cmpf ogt, %v, %zero : f32
  scf.if %positive {
    // expected-error @+1 {{inside an scf.if whose condition depends on kernel.thread_id}}
    kernel.barrier
  }
}

// -----

kernel.func @barrier_after_shuffle() block [64, 1, 1] {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %t = kernel.thread_id x
  %s = kernel.shuffle down %t, %one : index
  %zero = arith.cmpi eq, %s, %c0 : index
  scf.if %zero {
    // expected-error @+1 {{inside an scf.if whose condition depends on kernel.thread_id}}
    kernel.barrier
  }
}

// -----

kernel.func @barrier_after_atomic(%counter: memref<1xi32>) block [64, 1, 1] {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %ticket = kernel.atomic add %one, %counter[%c0] : memref<1xi32>
  %first = arith.cmpi eq, %ticket, %one : i32
  scf.if %first {
    // expected-error @+1 {{inside an scf.if whose condition depends on kernel.atomic}}
    kernel.barrier
  }
}

// -----

// An if whose result is computed from the thread id.
kernel.func @barrier_after_if_result() block [64, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %t = kernel.thread_id x
  %r = scf.if %true -> (index) {
    scf.yield %t : index
  } else {
    scf.yield %c0 : index
  }
  scf.for %i = %c0 to %r step %c1 {
    // expected-error @+1 {{inside an scf.for whose bounds depend on kernel.thread_id}}
    kernel.barrier
  }
}

// -----

func.func @barrier_on_host() {
  // expected-error @+1 {{'kernel.barrier' must be nested in a kernel.func}}
  kernel.barrier
  func.return
}

// --- shuffles -------------------------------------------------------------------------------

// -----

kernel.func @index_offset() block [32, 1, 1] {
  %v = arith.constant 1.0 : f32
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{operand 'offset' at position 1 does not verify: Expected attribute i32 but got index}}
  %r = "kernel.shuffle"(%v, %c1) <{mode = #kernel<shuffle_mode xor>}> : (f32, index) -> f32
}

// -----

kernel.func @bad_mode() block [32, 1, 1] {
  %v = arith.constant 1.0 : f32
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{'kernel.shuffle' op "butterfly" should be of base attribute kernel.shuffle_mode}}
  %r = "kernel.shuffle"(%v, %c1) <{mode = "butterfly"}> : (f32, i32) -> f32
}

// -----

kernel.func @bad_mode_syntax() block [32, 1, 1] {
  %v = arith.constant 1.0 : f32
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{Expected `xor`, `down`, `up`, or `idx`.}}
  %r = kernel.shuffle butterfly %v, %c1 : f32
}

// -----

kernel.func @shuffle_bool() block [32, 1, 1] {
  %v = arith.constant true
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{a shuffle moves an f16, bf16, f32, f64, i8, i16, i32, i64 or index Underlying verification failure: Expected one of i16, i32, i64, i8, but got i1}}
  %r = kernel.shuffle xor %v, %c1 : i1
}

// -----

kernel.func @shuffle_result_type() block [32, 1, 1] {
  %v = arith.constant 1.0 : f32
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{result 'result' at position 0 does not verify: attribute f32 expected from variable 'T', but got f16}}
  %r = "kernel.shuffle"(%v, %c1) <{mode = #kernel<shuffle_mode xor>}> : (f32, i32) -> f16
}

// -----

func.func @shuffle_on_host(%v: f32, %c1: i32) {
  // expected-error @+1 {{'kernel.shuffle' must be nested in a kernel.func}}
  %r = kernel.shuffle xor %v, %c1 : f32
  func.return
}

// -----

// Only the first 20 lanes of warp 0 would take part (a hang or garbage on the GPU).
kernel.func @shuffle_under_lane_if() block [64, 1, 1] {
  %v = arith.constant 1.0 : f32
  %c1 = arith.constant 1 : i32
  %c20 = arith.constant 20 : index
  %t = kernel.thread_id x
  %some = arith.cmpi ult, %t, %c20 : index
  scf.if %some {
    // expected-error @+1 {{a kernel.shuffle must be reached by every lane of the warp, but it is inside an scf.if whose condition depends on kernel.thread_id}}
    %r = kernel.shuffle xor %v, %c1 : f32
  }
}

// -----

kernel.func @shuffle_in_lane_strided_loop() block [64, 1, 1] {
  %v = arith.constant 1.0 : f32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %t = kernel.thread_id x
  scf.for %j = %t to %c100 step %c64 {
    // expected-error @+1 {{a kernel.shuffle must be reached by every lane of the warp, but it is inside an scf.for whose bounds depend on kernel.thread_id}}
    %r = kernel.shuffle xor %v, %c1 : f32
  }
}

// -----

// thread_id x / 32 is the warp's index only where the block's x extent is a multiple of 32:
// with 48, warp 1 holds threads 32 to 47 of row 0 and 0 to 15 of row 1.
kernel.func @shuffle_under_straddling_warp_if() block [48, 2, 1] {
  %v = arith.constant 1.0 : f32
  %c1 = arith.constant 1 : i32
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %t = kernel.thread_id x
  %warp = arith.divui %t, %c32 : index
  %first = arith.cmpi eq, %warp, %c0 : index
  scf.if %first {
    // expected-error @+1 {{inside an scf.if whose condition depends on kernel.thread_id}}
    %r = kernel.shuffle xor %v, %c1 : f32
  }
}

// -----

// A quotient by 16 differs between the two halves of a warp.
kernel.func @shuffle_under_half_warp_if() block [64, 1, 1] {
  %v = arith.constant 1.0 : f32
  %c1 = arith.constant 1 : i32
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %t = kernel.thread_id x
  %half = arith.divui %t, %c16 : index
  %even = arith.cmpi eq, %half, %c0 : index
  scf.if %even {
    // expected-error @+1 {{inside an scf.if whose condition depends on kernel.thread_id}}
    %r = kernel.shuffle xor %v, %c1 : f32
  }
}

// -----

// Under a warp-uniform if, a shuffle is fine, but a barrier is still not.
kernel.func @barrier_under_warp_if() block [64, 1, 1] {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %t = kernel.thread_id x
  %warp = arith.divui %t, %c32 : index
  %first = arith.cmpi eq, %warp, %c0 : index
  scf.if %first {
    // expected-error @+1 {{a kernel.barrier must be reached by every thread of the block, but it is inside an scf.if whose condition depends on kernel.thread_id}}
    kernel.barrier
  }
}

// --- atomics --------------------------------------------------------------------------------

// -----

kernel.func @bad_atomic_kind(%x: memref<4xf32>) block [32, 1, 1] {
  %v = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'kernel.atomic' op "mul" should be of base attribute kernel.atomic_kind}}
  %r = "kernel.atomic"(%v, %x, %c0) <{kind = "mul"}> : (f32, memref<4xf32>, index) -> f32
}

// -----

kernel.func @atomic_index_count(%x: memref<4x4xf32>) block [32, 1, 1] {
  %v = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a rank-2 memref<4x4xf32> takes 2 indices, but 1 are given}}
  %r = kernel.atomic add %v, %x[%c0] : memref<4x4xf32>
}

// -----

kernel.func @atomic_value_type(%x: memref<4xf32>) block [32, 1, 1] {
  %v = arith.constant 1.0 : f16
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{an atomic combines and returns the element type f32, got value f16 and result f16}}
  %r = "kernel.atomic"(%v, %x, %c0) <{kind = #kernel<atomic_kind add>}> : (f16, memref<4xf32>, index) -> f16
}

// -----

kernel.func @atomic_max_half(%x: memref<4xf16>) block [32, 1, 1] {
  %v = arith.constant 1.0 : f16
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{an atomic max works on f32, f64, i32 or i64 elements, got f16}}
  %r = kernel.atomic max %v, %x[%c0] : memref<4xf16>
}

// -----

kernel.func @atomic_add_short(%x: memref<4xi16>) block [32, 1, 1] {
  %v = arith.constant 1 : i16
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{an atomic add works on f16, bf16, f32, f64, i32 or i64 elements, got i16}}
  %r = kernel.atomic add %v, %x[%c0] : memref<4xi16>
}

// -----

kernel.func @atomic_inc_float(%x: memref<4xf32>) block [32, 1, 1] {
  %v = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{an atomic inc works on i32 elements, got f32}}
  %r = kernel.atomic inc %v, %x[%c0] : memref<4xf32>
}

// -----

kernel.func @atomic_acq_rel_max(%x: memref<4xi32>) block [32, 1, 1] {
  %v = arith.constant 1 : i32
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{an acq_rel atomic is an i32 add or inc, got max of i32}}
  %r = kernel.atomic max acq_rel %v, %x[%c0] : memref<4xi32>
}

// -----

kernel.func @atomic_acq_rel_wide(%x: memref<4xi64>) block [32, 1, 1] {
  %v = arith.constant 1 : i64
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{an acq_rel atomic is an i32 add or inc, got add of i64}}
  %r = kernel.atomic add acq_rel %v, %x[%c0] : memref<4xi64>
}

// --- vector accesses ------------------------------------------------------------------------

// -----

kernel.func @vector_crosses_rows(%x: memref<4x6xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a vector load of 4 elements must divide the last dimension of memref<4x6xf32> (6), so that no access crosses a row}}
  %v = kernel.vector_load %x[%c0, %c0] : memref<4x6xf32>, vector<4xf32>
}

// -----

kernel.func @vector_too_wide(%x: memref<64xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a vector load of 8 x f32 is 32 bytes, but one access is 1, 2, 4, 8 or 16 bytes}}
  %v = kernel.vector_load %x[%c0] : memref<64xf32>, vector<8xf32>
}

// -----

kernel.func @vector_of_three(%x: memref<63xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a vector load of 3 x f32 is 12 bytes, but one access is 1, 2, 4, 8 or 16 bytes}}
  %v = kernel.vector_load %x[%c0] : memref<63xf32>, vector<3xf32>
}

// -----

kernel.func @vector_of_scalar(%x: memref<f32>) block [32, 1, 1] {
  // expected-error @+1 {{a vector load needs a buffer with at least one dimension, got memref<f32>}}
  %v = kernel.vector_load %x[] : memref<f32>, vector<1xf32>
}

// -----

kernel.func @vector_scalar_result(%x: memref<8xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{result 'result' at position 0 does not verify: f32 should be of base attribute vector}}
  %v = "kernel.vector_load"(%x, %c0) : (memref<8xf32>, index) -> f32
}

// -----

kernel.func @vector_result_type(%x: memref<8xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a vector load of memref<8xf32> moves a vector<Nxf32>, got vector<2xf16>}}
  %v = kernel.vector_load %x[%c0] : memref<8xf32>, vector<2xf16>
}

// -----

kernel.func @vector_of_rank_two(%x: memref<8xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a vector load of memref<8xf32> moves a vector<Nxf32>, got vector<2x2xf32>}}
  %v = kernel.vector_load %x[%c0] : memref<8xf32>, vector<2x2xf32>
}

// -----

kernel.func @vector_index_count(%x: memref<4x8xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a rank-2 memref<4x8xf32> takes 2 indices, but 1 are given}}
  %v = kernel.vector_load %x[%c0] : memref<4x8xf32>, vector<2xf32>
}

// -----

kernel.func @vector_store_crosses_rows(%x: memref<4x6xbf16>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = arith.constant 1.0 : bf16
  %v = vector.broadcast %s : bf16 to vector<4xbf16>
  // expected-error @+1 {{a vector store of 4 elements must divide the last dimension of memref<4x6xbf16> (6), so that no access crosses a row}}
  kernel.vector_store %v, %x[%c0, %c0] : memref<4x6xbf16>, vector<4xbf16>
}

// -----

kernel.func @vector_store_type(%x: memref<8xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %h = arith.constant 1.0 : f16
  %v = vector.broadcast %h : f16 to vector<2xf16>
  // expected-error @+1 {{a vector store of memref<8xf32> moves a vector<Nxf32>, got vector<2xf16>}}
  kernel.vector_store %v, %x[%c0] : memref<8xf32>, vector<2xf16>
}

// -----

func.func @vector_store_on_host(%x: memref<8xf32>, %v: vector<2xf32>, %c0: index) {
  // expected-error @+1 {{'kernel.vector_store' must be nested in a kernel.func}}
  kernel.vector_store %v, %x[%c0] : memref<8xf32>, vector<2xf32>
  func.return
}

// -----

// expected-error @+1 {{a kernel.func body holds only kernel, arith and math ops, scf.for, scf.if, scf.yield, memref.load and memref.store, vector.broadcast, vector.extract and vector.insert, found 'vector.fma'}}
kernel.func @vector_op_outside_the_body_set(%x: memref<8xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %v = kernel.vector_load %x[%c0] : memref<8xf32>, vector<4xf32>
  %w = vector.fma %v, %v, %v : vector<4xf32>
}

// --- cp.async -------------------------------------------------------------------------------

// -----

kernel.func @cp_async_to_global(%x: memref<64xf32>, %y: memref<64xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a cp_async destination is shared memory, which is memory space 3 (memref<..., 3 : i32>), but its type is memref<64xf32>}}
  kernel.cp_async %y[%c0], %x[%c0] bytes 16 : memref<64xf32>, memref<64xf32>
}

// -----

kernel.func @cp_async_from_shared() block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %a = kernel.shared_alloc : memref<64xf32, 3 : i32>
  %b = kernel.shared_alloc : memref<64xf32, 3 : i32>
  // expected-error @+1 {{a cp_async source is global memory, but its type memref<64xf32, 3 : i32> is in shared memory space 3}}
  kernel.cp_async %a[%c0], %b[%c0] bytes 16 : memref<64xf32, 3 : i32>, memref<64xf32, 3 : i32>
}

// -----

kernel.func @cp_async_size(%x: memref<64xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc : memref<64xf32, 3 : i32>
  // expected-error @+1 {{a cp_async copies 4, 8 or 16 bytes, got 32}}
  kernel.cp_async %s[%c0], %x[%c0] bytes 32 : memref<64xf32, 3 : i32>, memref<64xf32>
}

// -----

kernel.func @cp_async_types(%x: memref<64xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc : memref<64xi32, 3 : i32>
  // expected-error @+1 {{a cp_async copies between buffers of one element type, got f32 to i32}}
  kernel.cp_async %s[%c0], %x[%c0] bytes 16 : memref<64xi32, 3 : i32>, memref<64xf32>
}

// -----

kernel.func @cp_async_part_element(%x: memref<64xf64>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc : memref<64xf64, 3 : i32>
  // expected-error @+1 {{a cp_async of 4 bytes does not copy whole f64 elements}}
  kernel.cp_async %s[%c0], %x[%c0] bytes 4 : memref<64xf64, 3 : i32>, memref<64xf64>
}

// -----

kernel.func @cp_async_crosses_rows(%x: memref<4x6xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc : memref<64xf32, 3 : i32>
  // expected-error @+1 {{a cp_async of 4 elements must divide the last dimension of memref<4x6xf32> (6), so that no access crosses a row}}
  kernel.cp_async %s[%c0], %x[%c0, %c0] bytes 16 : memref<64xf32, 3 : i32>, memref<4x6xf32>
}

// -----

kernel.func @cp_async_wait_negative() block [32, 1, 1] {
  // expected-error @+1 {{a cp_async_wait leaves a non-negative number of groups pending, got -1}}
  kernel.cp_async_wait -1
}

// -----

func.func @cp_async_commit_on_host() {
  // expected-error @+1 {{'kernel.cp_async_commit' must be nested in a kernel.func}}
  kernel.cp_async_commit
  func.return
}

// --- kernel.launch ------------------------------------------------------------------------

// -----

kernel.func @k() block [32, 1, 1] {
}

// expected-error @+1 {{a kernel.launch runs on the host, in a func.func, but its parent is 'builtin.module'}}
kernel.launch @k() grid [1, 1, 1] block [32, 1, 1] smem 0

// -----

func.func @launch_unknown_kernel(%x: memref<4xf32>) {
  // expected-error @+1 {{no kernel.func named @missing in the enclosing module}}
  kernel.launch @missing(%x) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<4xf32>
  func.return
}

// -----

func.func private @not_a_kernel(memref<4xf32>)

func.func @launch_a_function(%x: memref<4xf32>) {
  // expected-error @+1 {{'@not_a_kernel' names a 'func.func', not a kernel.func}}
  kernel.launch @not_a_kernel(%x) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<4xf32>
  func.return
}

// -----

kernel.func @k() block [32, 1, 1] {
}

func.func @nested_reference() {
  // expected-error @+1 {{a kernel.launch names a module-level kernel.func, got the nested reference @k::@inner}}
  "kernel.launch"() <{kernel = @k::@inner, grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, smem = 0 : i64}> : () -> ()
  func.return
}

// -----

kernel.func @k() block [256, 1, 1] {
}

func.func @launch_block_mismatch() {
  // expected-error @+1 {{launch block [128, 1, 1] differs from the block [256, 1, 1] that @k is compiled for}}
  kernel.launch @k() grid [1, 1, 1] block [128, 1, 1] smem 0
  func.return
}

// -----

kernel.func @k() block [32, 1, 1] {
}

func.func @launch_partial_warp() {
  // expected-error @+1 {{block [16, 1, 1] has 16 threads, which is not a multiple of the warp size 32}}
  kernel.launch @k() grid [1, 1, 1] block [16, 1, 1] smem 0
  func.return
}

// -----

kernel.func @k(%x: memref<4xf32>, %y: memref<4xf32>) block [32, 1, 1] {
}

func.func @launch_buffer_types(%x: memref<4xf32>, %y: memref<4xf16>) {
  // expected-error @+1 {{launch passes (memref<4xf32>, memref<4xf16>) but @k takes (memref<4xf32>, memref<4xf32>)}}
  kernel.launch @k(%x, %y) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<4xf32>, memref<4xf16>
  func.return
}

// -----

kernel.func @k() block [32, 1, 1] {
}

func.func @launch_empty_grid() {
  // expected-error @+1 {{grid [1, 0, 1]: dimension y must be between 1 and 65535}}
  kernel.launch @k() grid [1, 0, 1] block [32, 1, 1] smem 0
  func.return
}

// -----

kernel.func @k() block [32, 1, 1] {
}

func.func @launch_tall_grid() {
  // expected-error @+1 {{grid [1, 65536, 1]: dimension y must be between 1 and 65535}}
  kernel.launch @k() grid [1, 65536, 1] block [32, 1, 1] smem 0
  func.return
}

// -----

kernel.func @k() block [32, 1, 1] {
}

func.func @launch_negative_smem() {
  // expected-error @+1 {{dynamic shared memory is a number of bytes, got -4}}
  kernel.launch @k() grid [1, 1, 1] block [32, 1, 1] smem -4
  func.return
}

// -----

kernel.func @k() block [32, 1, 1] {
  %s = kernel.shared_alloc : memref<1024xf32, 3 : i32>
}

func.func @launch_too_much_smem() {
  // expected-error @+1 {{launch gives @k 229377 bytes of dynamic shared memory on top of its 4096 static bytes, 233473 in all, over the 232448-byte (227 KB) limit of one block}}
  kernel.launch @k() grid [1, 1, 1] block [32, 1, 1] smem 229377
  func.return
}

// -----

kernel.func @k() block [32, 1, 1] {
  %d = kernel.dynamic_shared offset 1024 : memref<256xf32, 3 : i32>
}

func.func @launch_too_little_smem() {
  // expected-error @+1 {{launch gives @k 1024 bytes of dynamic shared memory, but its kernel.dynamic_shared views need 2048}}
  kernel.launch @k() grid [1, 1, 1] block [32, 1, 1] smem 1024
  func.return
}

// -----

kernel.func @k(%x: memref<4xf32>, %y: memref<4xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  memref.store %v, %y[%c0] : memref<4xf32>
}

func.func @launch_aliasing(%x: memref<4xf32>) {
  // expected-error @+1 {{launch passes one buffer as arguments #0 and #1 of @k, which writes one of them; kernel arguments must not alias (they are __restrict__)}}
  kernel.launch @k(%x, %x) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<4xf32>, memref<4xf32>
  func.return
}

// --- parameters and swizzled shared buffers -------------------------------------------------

// -----

kernel.func @k_scalar(%x: memref<4xf32>, %n: index) block [32, 1, 1] {
}

func.func @launch_wrong_scalar(%x: memref<4xf32>) {
  %n = arith.constant 4 : i32
  // expected-error @+1 {{launch passes (memref<4xf32>, i32) but @k_scalar takes (memref<4xf32>, index)}}
  kernel.launch @k_scalar(%x, %n) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<4xf32>, i32
  func.return
}

// -----

kernel.func @k_tensor_map(%m: !kernel.tensor_map<memref<64x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
}

func.func @launch_wrong_tensor(%x: memref<64x32xbf16>) {
  // expected-error @+1 {{launch passes (memref<64x32xbf16>) but @k_tensor_map takes (!kernel.tensor_map<memref<64x64xbf16>, box [64, 64], swizzle 128>)}}
  kernel.launch @k_tensor_map(%x) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<64x32xbf16>
  func.return
}

// -----

kernel.func @swizzle_span() block [32, 1, 1] {
  // expected-error @+1 {{a swizzle spans 32, 64 or 128 bytes, got 256}}
  %s = kernel.shared_alloc {layout = #kernel.swizzle<256>} : memref<8x64xf32, 3 : i32>
}

// -----

kernel.func @swizzle_partial_span() block [32, 1, 1] {
  // expected-error @+1 {{a buffer swizzled in 128-byte spans is a whole number of them, but memref<3x10xf32, 3 : i32> is 120 bytes}}
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<3x10xf32, 3 : i32>
}

// -----

// The swizzle permutes elements of power-of-two sizes, which every element type has.
kernel.func @swizzle_odd_element() block [32, 1, 1] {
  // expected-error @+1 {{kernel buffers hold f16, bf16, f32, f64, i1, i8, i16, i32, i64, index, ui8, ui16, ui32 or ui64 elements, got i24}}
  %s = kernel.shared_alloc {layout = #kernel.swizzle<32>} : memref<32xi24, 3 : i32>
}

// -----

kernel.func @swizzle_is_a_layout() block [32, 1, 1] {
  // expected-error @+1 {{128 : i64 should be of base attribute kernel.swizzle}}
  %s = kernel.shared_alloc {layout = 128 : i64} : memref<32xf32, 3 : i32>
}
// -----

builtin.module attributes {kernel.target = "sm_90a"} {
  // expected-error @+1 {{a module's kernel.target attribute names its GPU, as in #kernel.target<"sm_90a">, got "sm_90a"}}
  kernel.func @k() block [32, 1, 1] {
  }
}

// -----

// The view that fits an sm_90a block (target.mlir) is over an sm_80 block's shared memory.
builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  kernel.func @k_big_view() block [32, 1, 1] {
    // expected-error @+1 {{a dynamic shared view ending at byte 204800 is over the 166912-byte (163 KB) limit of one block on sm_80}}
    %d = kernel.dynamic_shared offset 0 : memref<51200xf32, 3 : i32>
  }
}

// -----

builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  kernel.func @k() block [32, 1, 1] {
  }
  func.func @host() {
    // expected-error @+1 {{launch gives @k 204800 bytes of dynamic shared memory on top of its 0 static bytes, 204800 in all, over the 166912-byte (163 KB) limit of one block on sm_80}}
    kernel.launch @k() grid [1, 1, 1] block [32, 1, 1] smem 204800
    func.return
  }
}


// -----

// --- kernel.ldmatrix and kernel.mma_sync ----------------------------------------------------

kernel.func @ldmatrix_global(%x: memref<16x16xbf16>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a kernel.ldmatrix source is shared memory, which is memory space 3 (memref<..., 3 : i32>), but its type is memref<16x16xbf16>}}
  %a = kernel.ldmatrix %x[%c0, %c0] : memref<16x16xbf16>, vector<8xbf16>
}

// -----

kernel.func @ldmatrix_f64() block [32, 1, 1] {
  %s = kernel.shared_alloc : memref<16x16xf64, 3 : i32>
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a kernel.ldmatrix loads matrices of 16-bit elements (f16, bf16, i16) or of f32, got memref<16x16xf64, 3 : i32>}}
  %a = kernel.ldmatrix %s[%c0, %c0] : memref<16x16xf64, 3 : i32>, vector<4xf64>
}

// -----

// ldmatrix moves 32-bit words: a lane receives one f32 of each matrix, and trans would split
// them.

kernel.func @ldmatrix_f32_pairs() block [32, 1, 1] {
  %s = kernel.shared_alloc : memref<16x16xf32, 3 : i32>
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a kernel.ldmatrix gives each lane one element of each of 1, 2 or 4 matrices, vector<1xf32>, vector<2xf32> or vector<4xf32>, got vector<8xf32>}}
  %a = kernel.ldmatrix %s[%c0, %c0] : memref<16x16xf32, 3 : i32>, vector<8xf32>
}

// -----

kernel.func @ldmatrix_f32_trans() block [32, 1, 1] {
  %s = kernel.shared_alloc : memref<16x16xf32, 3 : i32>
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a kernel.ldmatrix trans transposes 16-bit elements, got memref<16x16xf32, 3 : i32>}}
  %a = kernel.ldmatrix %s[%c0, %c0] trans : memref<16x16xf32, 3 : i32>, vector<4xf32>
}

// -----

kernel.func @ldmatrix_three_matrices() block [32, 1, 1] {
  %s = kernel.shared_alloc : memref<16x16xbf16, 3 : i32>
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a kernel.ldmatrix gives each lane two elements of each of 1, 2 or 4 matrices, vector<2xbf16>, vector<4xbf16> or vector<8xbf16>, got vector<6xbf16>}}
  %a = kernel.ldmatrix %s[%c0, %c0] : memref<16x16xbf16, 3 : i32>, vector<6xbf16>
}

// -----

kernel.func @ldmatrix_other_element() block [32, 1, 1] {
  %s = kernel.shared_alloc : memref<16x16xbf16, 3 : i32>
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a kernel.ldmatrix gives each lane two elements of each of 1, 2 or 4 matrices, vector<2xbf16>, vector<4xbf16> or vector<8xbf16>, got vector<8xf16>}}
  %a = kernel.ldmatrix %s[%c0, %c0] : memref<16x16xbf16, 3 : i32>, vector<8xf16>
}

// -----

kernel.func @ldmatrix_short_rows() block [32, 1, 1] {
  %s = kernel.shared_alloc : memref<16x12xbf16, 3 : i32>
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a kernel.ldmatrix row is 8 consecutive elements along the last dimension, which must be a multiple of 8 so that no row crosses into the next, got memref<16x12xbf16, 3 : i32>}}
  %a = kernel.ldmatrix %s[%c0, %c0] : memref<16x12xbf16, 3 : i32>, vector<8xbf16>
}

// -----

kernel.func @ldmatrix_indices() block [32, 1, 1] {
  %s = kernel.shared_alloc : memref<16x16xbf16, 3 : i32>
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a rank-2 memref<16x16xbf16, 3 : i32> takes 2 indices, but 1 are given}}
  %a = kernel.ldmatrix %s[%c0] : memref<16x16xbf16, 3 : i32>, vector<8xbf16>
}

// -----

func.func @mma_on_the_host(%a: vector<8xbf16>, %b: vector<4xbf16>, %c: vector<4xf32>) {
  // expected-error @+1 {{'kernel.mma_sync' must be nested in a kernel.func}}
  %d = kernel.mma_sync m16n8k16 %a, %b, %c : vector<8xbf16>, vector<4xbf16>, vector<4xf32> -> vector<4xf32>
  func.return
}

// -----

kernel.func @mma_tf32_k16() block [32, 1, 1] {
  %z = arith.constant 0.0 : f32
  %a = vector.broadcast %z : f32 to vector<8xf32>
  %b = vector.broadcast %z : f32 to vector<4xf32>
  // expected-error @+1 {{a tf32 kernel.mma_sync is m16n8k8, got m16n8k16}}
  %d = kernel.mma_sync m16n8k16 tf32 %a, %b, %b : vector<8xf32>, vector<4xf32>, vector<4xf32> -> vector<4xf32>
}

// -----

kernel.func @mma_tf32_bf16() block [32, 1, 1] {
  %z = arith.constant 0.0 : bf16
  %a = vector.broadcast %z : bf16 to vector<4xbf16>
  %b = vector.broadcast %z : bf16 to vector<2xbf16>
  %y = arith.constant 0.0 : f32
  %c = vector.broadcast %y : f32 to vector<4xf32>
  // expected-error @+1 {{a tf32 kernel.mma_sync multiplies f32 matrices (rounded to tf32), got A of vector<4xbf16>}}
  %d = kernel.mma_sync m16n8k8 tf32 %a, %b, %c : vector<4xbf16>, vector<2xbf16>, vector<4xf32> -> vector<4xf32>
}

// -----

kernel.func @mma_f32_without_tf32() block [32, 1, 1] {
  %z = arith.constant 0.0 : f32
  %a = vector.broadcast %z : f32 to vector<4xf32>
  %b = vector.broadcast %z : f32 to vector<2xf32>
  // expected-error @+1 {{a kernel.mma_sync of f32 matrices rounds them to tf32, which the IR says with the `tf32` keyword (kernel.mma_sync m16n8k8 tf32 ...)}}
  %d = kernel.mma_sync m16n8k8 %a, %b, %a : vector<4xf32>, vector<2xf32>, vector<4xf32> -> vector<4xf32>
}

// -----

// tid > 32 splits warp 1 (lane 0 is thread 32); tid >= 32 would not.
kernel.func @mma_under_lane_if() block [64, 1, 1] {
  %z = arith.constant 0.0 : bf16
  %a = vector.broadcast %z : bf16 to vector<8xbf16>
  %b = vector.broadcast %z : bf16 to vector<4xbf16>
  %y = arith.constant 0.0 : f32
  %c = vector.broadcast %y : f32 to vector<4xf32>
  %c32 = arith.constant 32 : index
  %t = kernel.thread_id x
  %late = arith.cmpi ugt, %t, %c32 : index
  scf.if %late {
    // expected-error @+1 {{a kernel.mma_sync must be reached by every lane of the warp, but it is inside an scf.if whose condition depends on kernel.thread_id}}
    %d = kernel.mma_sync m16n8k16 %a, %b, %c : vector<8xbf16>, vector<4xbf16>, vector<4xf32> -> vector<4xf32>
  }
}

// -----

kernel.func @ldmatrix_under_lane_if() block [32, 1, 1] {
  %s = kernel.shared_alloc : memref<16x16xbf16, 3 : i32>
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %t = kernel.thread_id x
  %some = arith.cmpi ult, %t, %c8 : index
  scf.if %some {
    // expected-error @+1 {{a kernel.ldmatrix must be reached by every lane of the warp, but it is inside an scf.if whose condition depends on kernel.thread_id}}
    %f = kernel.ldmatrix %s[%c0, %c0] : memref<16x16xbf16, 3 : i32>, vector<8xbf16>
  }
}

// -----

// Each lane holds its own fragment of an mma_sync's result.
kernel.func @barrier_after_mma() block [32, 1, 1] {
  %z = arith.constant 0.0 : bf16
  %a = vector.broadcast %z : bf16 to vector<8xbf16>
  %b = vector.broadcast %z : bf16 to vector<4xbf16>
  %y = arith.constant 0.0 : f32
  %c = vector.broadcast %y : f32 to vector<4xf32>
  %d = kernel.mma_sync m16n8k16 %a, %b, %c : vector<8xbf16>, vector<4xbf16>, vector<4xf32> -> vector<4xf32>
  %d0 = vector.extract %d[0] : f32 from vector<4xf32>
  %positive = arith.cmpf ogt, %d0, %y : f32
  scf.if %positive {
    // expected-error @+1 {{inside an scf.if whose condition depends on kernel.mma_sync}}
    kernel.barrier
  }
}

// -----

kernel.func @mma_i16() block [32, 1, 1] {
  %z = arith.constant 0 : i16
  %a = vector.broadcast %z : i16 to vector<8xi16>
  %b = vector.broadcast %z : i16 to vector<4xi16>
  %y = arith.constant 0.0 : f32
  %c = vector.broadcast %y : f32 to vector<4xf32>
  // expected-error @+1 {{a kernel.mma_sync multiplies f16 or bf16 matrices (or f32 as tf32), got A of vector<8xi16>}}
  %d = kernel.mma_sync m16n8k16 %a, %b, %c : vector<8xi16>, vector<4xi16>, vector<4xf32> -> vector<4xf32>
}

// -----

kernel.func @mma_short_a() block [32, 1, 1] {
  %z = arith.constant 0.0 : bf16
  %a = vector.broadcast %z : bf16 to vector<4xbf16>
  %y = arith.constant 0.0 : f32
  %c = vector.broadcast %y : f32 to vector<4xf32>
  // expected-error @+1 {{a kernel.mma_sync m16n8k16 gives each lane 8 elements of the 16x16 A, vector<8xbf16>, got vector<4xbf16>}}
  %d = kernel.mma_sync m16n8k16 %a, %a, %c : vector<4xbf16>, vector<4xbf16>, vector<4xf32> -> vector<4xf32>
}

// -----

kernel.func @mma_mixed_elements() block [32, 1, 1] {
  %z = arith.constant 0.0 : bf16
  %a = vector.broadcast %z : bf16 to vector<8xbf16>
  %h = arith.constant 0.0 : f16
  %b = vector.broadcast %h : f16 to vector<4xf16>
  %y = arith.constant 0.0 : f32
  %c = vector.broadcast %y : f32 to vector<4xf32>
  // expected-error @+1 {{a kernel.mma_sync m16n8k16 gives each lane 4 elements of the 16x8 B, of A's element type: vector<4xbf16>, got vector<4xf16>}}
  %d = kernel.mma_sync m16n8k16 %a, %b, %c : vector<8xbf16>, vector<4xf16>, vector<4xf32> -> vector<4xf32>
}

// -----

kernel.func @mma_f16_accumulator() block [32, 1, 1] {
  %z = arith.constant 0.0 : f16
  %a = vector.broadcast %z : f16 to vector<4xf16>
  %b = vector.broadcast %z : f16 to vector<2xf16>
  // expected-error @+1 {{a kernel.mma_sync m16n8k8 accumulates in f32, each lane holding vector<4xf32> of the 16x8 C and D, got C vector<4xf16> and D vector<4xf16>}}
  %d = kernel.mma_sync m16n8k8 %a, %b, %a : vector<4xf16>, vector<2xf16>, vector<4xf16> -> vector<4xf16>
}

// -----

kernel.func @mma_result() block [32, 1, 1] {
  %z = arith.constant 0.0 : f16
  %a = vector.broadcast %z : f16 to vector<4xf16>
  %b = vector.broadcast %z : f16 to vector<2xf16>
  %y = arith.constant 0.0 : f32
  %c = vector.broadcast %y : f32 to vector<4xf32>
  // expected-error @+1 {{a kernel.mma_sync m16n8k8 accumulates in f32, each lane holding vector<4xf32> of the 16x8 C and D, got C vector<4xf32> and D vector<8xf32>}}
  %d = kernel.mma_sync m16n8k8 %a, %b, %c : vector<4xf16>, vector<2xf16>, vector<4xf32> -> vector<8xf32>
}

// -----

kernel.func @mma_shape() block [32, 1, 1] {
  %z = arith.constant 0.0 : f16
  %a = vector.broadcast %z : f16 to vector<4xf16>
  // expected-error @+1 {{Expected `m16n8k16`, or `m16n8k8`.}}
  %d = kernel.mma_sync m16n8k32 %a, %a, %a : vector<4xf16>, vector<4xf16>, vector<4xf16> -> vector<4xf16>
}

// -----

// --- Hopper: mbarriers, TMA, wgmma, setmaxnreg -----------------------------------------------

kernel.func @mbarrier_none() block [32, 1, 1] {
  // expected-error @+1 {{an mbarrier array holds at least one, got 0}}
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<0>
}

// -----

kernel.func @mbarrier_init_zero() block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<2>
  // expected-error @+1 {{an mbarrier's phase completes after at least one arrival, got 0}}
  kernel.mbarrier_init %b[%c0], arrivals 0 : !kernel.mbarrier<2>
}

// -----

kernel.func @mbarrier_out_of_range() block [32, 1, 1] {
  %c2 = arith.constant 2 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<2>
  // expected-error @+1 {{'kernel.mbarrier_arrive' addresses mbarrier 2 of !kernel.mbarrier<2>, which holds 2}}
  kernel.mbarrier_arrive %b[%c2] : !kernel.mbarrier<2>
}

// -----

kernel.func @mbarrier_parity() block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<2>
  // expected-error @+1 {{an mbarrier phase's parity is 0 or 1, got 2}}
  kernel.mbarrier_wait %b[%c0], %c2 : !kernel.mbarrier<2>
}

// -----

kernel.func @tma_coordinates(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_load addresses its rank-2 tensor memref<256x64xbf16> with 2 coordinates, got 1}}
  kernel.tma_load %m[%c0], %s[%c0, %c0], %b[%c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>, !kernel.mbarrier<1>
}

// -----

kernel.func @tma_element(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_load copies bf16 elements of memref<256x64xbf16> into a buffer of the same, got memref<64x64xf16, 3 : i32>}}
  kernel.tma_load %m[%c0, %c0], %s[%c0, %c0], %b[%c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xf16, 3 : i32>, !kernel.mbarrier<1>
}

// -----

kernel.func @tma_global(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, %x: memref<64x64xbf16>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  // expected-error @+1 {{a kernel.tma_load destination is shared memory, which is memory space 3 (memref<..., 3 : i32>), but its type is memref<64x64xbf16>}}
  kernel.tma_load %m[%c0, %c0], %x[%c0, %c0], %b[%c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16>, !kernel.mbarrier<1>
}

// -----

kernel.func @tma_swizzle(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.shared_alloc : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_load lands its box with the map's swizzle 128, but its destination has no swizzle}}
  kernel.tma_load %m[%c0, %c0], %s[%c0, %c0], %b[%c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>, !kernel.mbarrier<1>
}

// -----

kernel.func @tma_unaligned(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 0>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.shared_alloc : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_load destination starts on a 128-byte boundary: a swizzled buffer, or a kernel.dynamic_shared view at a multiple of 128}}
  kernel.tma_load %m[%c0, %c0], %s[%c0, %c0], %b[%c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 0>, memref<64x64xbf16, 3 : i32>, !kernel.mbarrier<1>
}

// -----

kernel.func @tma_land_misaligned(%m: !kernel.tensor_map<memref<256x64xbf16>, box [8, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_load lands at byte 512 of its destination, which must be a multiple of 1024}}
  kernel.tma_load %m[%c0, %c0], %s[%c4, %c0], %b[%c0] : !kernel.tensor_map<memref<256x64xbf16>, box [8, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>, !kernel.mbarrier<1>
}

// -----

kernel.func @tma_overrun(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_load's box of 4096 elements from element 512 overruns its destination memref<64x64xbf16, 3 : i32>}}
  kernel.tma_load %m[%c0, %c0], %s[%c8, %c0], %b[%c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>, !kernel.mbarrier<1>
}

// -----

kernel.func @multicast_without_cluster(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %mask = arith.constant 1 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{'kernel.tma_load' with multicast is for a kernel.func whose blocks run in clusters (`cluster N`)}}
  kernel.tma_load %m[%c0, %c0], %s[%c0, %c0], %b[%c0] multicast %mask : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>, !kernel.mbarrier<1>
}

// -----

kernel.func @multicast_to_no_block(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] cluster 2 {
  %c0 = arith.constant 0 : index
  %mask = arith.constant 0 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_load's multicast mask sets the bits of blocks of its cluster of 2, so it is 1 to 3, got 0}}
  kernel.tma_load %m[%c0, %c0], %s[%c0, %c0], %b[%c0] multicast %mask : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>, !kernel.mbarrier<1>
}

// -----

kernel.func @multicast_beyond_cluster(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] cluster 4 {
  %c0 = arith.constant 0 : index
  %mask = arith.constant 16 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_load's multicast mask sets the bits of blocks of its cluster of 4, so it is 1 to 15, got 16}}
  kernel.tma_load %m[%c0, %c0], %s[%c0, %c0], %b[%c0] multicast %mask : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>, !kernel.mbarrier<1>
}

// -----

kernel.func @multicast_negative_mask(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] cluster 2 {
  %c0 = arith.constant 0 : index
  %mask = arith.constant -1 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_load's multicast mask sets the bits of blocks of its cluster of 2, so it is 1 to 3, got -1}}
  kernel.tma_load %m[%c0, %c0], %s[%c0, %c0], %b[%c0] multicast %mask : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>, !kernel.mbarrier<1>
}

// -----

kernel.func @tma_store_coordinates(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_store addresses its rank-2 tensor memref<256x64xbf16> with 2 coordinates, got 1}}
  kernel.tma_store %m[%c0], %s[%c0, %c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>
}

// -----

kernel.func @tma_store_element(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_store copies bf16 elements of memref<256x64xbf16> from a buffer of the same, got memref<64x64xf16, 3 : i32>}}
  kernel.tma_store %m[%c0, %c0], %s[%c0, %c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xf16, 3 : i32>
}

// -----

kernel.func @tma_store_global(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, %x: memref<64x64xbf16>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a kernel.tma_store source is shared memory, which is memory space 3 (memref<..., 3 : i32>), but its type is memref<64x64xbf16>}}
  kernel.tma_store %m[%c0, %c0], %x[%c0, %c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16>
}

// -----

kernel.func @tma_store_swizzle(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_store reads its box with the map's swizzle 128, but its source has no swizzle}}
  kernel.tma_store %m[%c0, %c0], %s[%c0, %c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>
}

// -----

kernel.func @tma_store_unaligned(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 0>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_store source starts on a 128-byte boundary: a swizzled buffer, or a kernel.dynamic_shared view at a multiple of 128}}
  kernel.tma_store %m[%c0, %c0], %s[%c0, %c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 0>, memref<64x64xbf16, 3 : i32>
}

// -----

kernel.func @tma_store_misaligned(%m: !kernel.tensor_map<memref<256x64xbf16>, box [8, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_store reads from byte 512 of its source, which must be a multiple of 1024}}
  kernel.tma_store %m[%c0, %c0], %s[%c4, %c0] : !kernel.tensor_map<memref<256x64xbf16>, box [8, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>
}

// -----

kernel.func @tma_store_overrun(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  // expected-error @+1 {{a kernel.tma_store's box of 4096 elements from element 512 overruns its source memref<64x64xbf16, 3 : i32>}}
  kernel.tma_store %m[%c0, %c0], %s[%c8, %c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<64x64xbf16, 3 : i32>
}

// -----

kernel.func @tma_store_wait_too_many() block [32, 1, 1] {
  // expected-error @+1 {{a kernel.tma_store_wait leaves 0 to 63 groups pending, got 64}}
  kernel.tma_store_wait 64 read
}

// -----

kernel.func @tma_store_wait_negative() block [32, 1, 1] {
  // expected-error @+1 {{a kernel.tma_store_wait leaves 0 to 63 groups pending, got -1}}
  kernel.tma_store_wait -1
}

// -----

func.func @tma_store_commit_on_the_host() {
  // expected-error @+1 {{'kernel.tma_store_commit' must be nested in a kernel.func}}
  kernel.tma_store_commit
  func.return
}

// -----

builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  kernel.func @tma_store_on_ampere() block [32, 1, 1] {
    // expected-error @+1 {{'kernel.tma_store_commit' needs TMA (sm_90a), which the module's target sm_80 (A100) does not have}}
    kernel.tma_store_commit
  }
}

// -----

kernel.func @remote_arrive_without_cluster() block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %rank = arith.constant 0 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  // expected-error @+1 {{'kernel.mbarrier_arrive' with a rank is for a kernel.func whose blocks run in clusters (`cluster N`)}}
  kernel.mbarrier_arrive %b[%c0] rank %rank : !kernel.mbarrier<1>
}

// -----

kernel.func @remote_arrive_beyond_cluster() block [32, 1, 1] cluster 2 {
  %c0 = arith.constant 0 : index
  %rank = arith.constant 2 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  // expected-error @+1 {{a kernel.mbarrier_arrive's rank is that of a block of its cluster of 2, 0 to 1, got 2}}
  kernel.mbarrier_arrive %b[%c0] rank %rank : !kernel.mbarrier<1>
}

// -----

kernel.func @remote_arrive_negative_rank() block [32, 1, 1] cluster 2 {
  %c0 = arith.constant 0 : index
  %rank = arith.constant -1 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  // expected-error @+1 {{a kernel.mbarrier_arrive's rank is that of a block of its cluster of 2, 0 to 1, got -1}}
  kernel.mbarrier_arrive %b[%c0] rank %rank : !kernel.mbarrier<1>
}

// -----

kernel.func @wgmma_n() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<6xf32>
  // expected-error @+1 {{a kernel.wgmma is m64nNk16 with N from 8 to 256 in steps of 8, got m64n12k16}}
  %d = kernel.wgmma m64n12k16 %s[%c0, %c0], %s[%c0, %c0], %c : memref<64x64xbf16, 3 : i32>, memref<64x64xbf16, 3 : i32>, vector<6xf32> -> vector<6xf32>
}

// -----

kernel.func @wgmma_shape_name() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma on bf16 is m64n64k16, got m64n64k8}}
  %d = kernel.wgmma m64n64k8 %s[%c0, %c0], %s[%c0, %c0], %c : memref<64x64xbf16, 3 : i32>, memref<64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_shape_form() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma shape is m64nNk16 (f16, bf16) or m64nNk8 (tf32), got m32n64k16}}
  %d = kernel.wgmma m32n64k16 %s[%c0, %c0], %s[%c0, %c0], %c : memref<64x64xbf16, 3 : i32>, memref<64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_unswizzled() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc : memref<64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma A is swizzled in 128-byte spans (#kernel.swizzle<128>)}}
  %d = kernel.wgmma m64n64k16 %s[%c0, %c0], %s[%c0, %c0], %c : memref<64x64xbf16, 3 : i32>, memref<64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_row_bytes() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x128xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma A has rows of 128 bytes (the last dimension, 64 x bf16), got memref<64x128xbf16, 3 : i32>}}
  %d = kernel.wgmma m64n64k16 %s[%c0, %c0], %s[%c0, %c0], %c : memref<64x128xbf16, 3 : i32>, memref<64x128xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_a_registers_size(%x: bf16) block [128, 1, 1] {
  %p = vector.broadcast %x : bf16 to vector<4xbf16>
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma's A in registers is each thread's vector<8x..> of the 64x16 A, without indices, got vector<4xbf16>}}
  %d = kernel.wgmma m64n64k16 %p, %s[%c0, %c0], %c : vector<4xbf16>, memref<64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_a_registers_type(%x: f16) block [128, 1, 1] {
  %p = vector.broadcast %x : f16 to vector<8xf16>
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma multiplies tiles of one element type, got A vector<8xf16> and B memref<64x64xbf16, 3 : i32>}}
  %d = kernel.wgmma m64n64k16 %p, %s[%c0, %c0], %c : vector<8xf16>, memref<64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_row() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<128x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma B starts at a row that is a multiple of 8, got 4}}
  %d = kernel.wgmma m64n64k16 %s[%c0, %c0], %s[%c4, %c0], %c : memref<128x64xbf16, 3 : i32>, memref<128x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_k() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<128x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma A starts at a k that is a multiple of 16 within the row of 64, got 8}}
  %d = kernel.wgmma m64n64k16 %s[%c0, %c8], %s[%c0, %c0], %c : memref<128x64xbf16, 3 : i32>, memref<128x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_rows_past_the_end() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c96 = arith.constant 96 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<128x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma m64n64k16 reads 64 rows of A from row 96, past the end of memref<128x64xbf16, 3 : i32>}}
  %d = kernel.wgmma m64n64k16 %s[%c96, %c0], %s[%c0, %c0], %c : memref<128x64xbf16, 3 : i32>, memref<128x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_mn_major_rank() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %a = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %p = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma's MN-major B is panels of K rows of 64 N-elements, [..., panels, K, 64], got memref<64x64xbf16, 3 : i32>}}
  %d = kernel.wgmma m64n64k16 %a[%c0, %c0], %p[%c0, %c0] mn_major, %c : memref<64x64xbf16, 3 : i32>, memref<64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_mn_major_partial_panel() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %a = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %p = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<16xf32>
  // expected-error @+1 {{a kernel.wgmma with an MN-major B reads whole panels of 64 columns: N is a multiple of 64, got m64n32k16}}
  %d = kernel.wgmma m64n32k16 %a[%c0, %c0], %p[%c0, %c0, %c0] mn_major, %c : memref<64x64xbf16, 3 : i32>, memref<2x64x64xbf16, 3 : i32>, vector<16xf32> -> vector<16xf32>
}

// -----

kernel.func @wgmma_mn_major_panel_rows() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %a = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %p = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x60x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma's MN-major B panels have a multiple of 8 K rows, at most 2047, got memref<2x60x64xbf16, 3 : i32>}}
  %d = kernel.wgmma m64n64k16 %a[%c0, %c0], %p[%c0, %c0, %c0] mn_major, %c : memref<64x64xbf16, 3 : i32>, memref<2x60x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_mn_major_column() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %a = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %p = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma's MN-major B starts at the first element of a panel's row, got 8}}
  %d = kernel.wgmma m64n64k16 %a[%c0, %c0], %p[%c0, %c0, %c8] mn_major, %c : memref<64x64xbf16, 3 : i32>, memref<2x64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_mn_major_k() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c56 = arith.constant 56 : index
  %a = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %p = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma's MN-major B starts at a k that is a multiple of 16 within the panel's 64 rows, got 56}}
  %d = kernel.wgmma m64n64k16 %a[%c0, %c0], %p[%c0, %c56, %c0] mn_major, %c : memref<64x64xbf16, 3 : i32>, memref<2x64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_mn_major_k_past_the_panel() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %a = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %p = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma's MN-major B starts at a k that is a multiple of 16 within the panel's 64 rows, got 64}}
  %d = kernel.wgmma m64n64k16 %a[%c0, %c0], %p[%c0, %c64, %c0] mn_major, %c : memref<64x64xbf16, 3 : i32>, memref<2x64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_mn_major_panels_past_the_end() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %p = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<64xf32>
  // expected-error @+1 {{a kernel.wgmma m64n128k16 reads 2 panels of B from panel 1, past the end of memref<2x64x64xbf16, 3 : i32>}}
  %d = kernel.wgmma m64n128k16 %a[%c0, %c0], %p[%c1, %c0, %c0] mn_major, %c : memref<64x64xbf16, 3 : i32>, memref<2x64x64xbf16, 3 : i32>, vector<64xf32> -> vector<64xf32>
}

// -----

kernel.func @wgmma_accumulator() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<64xf32>
  // expected-error @+1 {{a kernel.wgmma m64n64k16 accumulates in f32, each thread holding vector<32xf32> of the 64x64 C and D, got C vector<64xf32> and D vector<64xf32>}}
  %d = kernel.wgmma m64n64k16 %s[%c0, %c0], %s[%c0, %c0], %c : memref<64x64xbf16, 3 : i32>, memref<64x64xbf16, 3 : i32>, vector<64xf32> -> vector<64xf32>
}

// -----

kernel.func @wgmma_f32_k() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x32xf32, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma A starts at a k that is a multiple of 8 within the row of 32, got 4}}
  %d = kernel.wgmma m64n64k8 %s[%c0, %c4], %s[%c0, %c0], %c : memref<64x32xf32, 3 : i32>, memref<64x32xf32, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_tf32_mn_major() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x32xf32, 3 : i32>
  %p = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x8x32xf32, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma on f32 (tf32) reads both tiles K-major from shared memory: PTX has no transposed tf32 wgmma, and no A in registers here}}
  %d = kernel.wgmma m64n64k8 %s[%c0, %c0], %p[%c0, %c0, %c0] mn_major, %c : memref<64x32xf32, 3 : i32>, memref<2x8x32xf32, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_f64() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x16xf64, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma multiplies f16, bf16 or f32 (as tf32) tiles, got A memref<64x16xf64, 3 : i32>}}
  %d = kernel.wgmma m64n64k4 %s[%c0, %c0], %s[%c0, %c0], %c : memref<64x16xf64, 3 : i32>, memref<64x16xf64, 3 : i32>, vector<32xf32> -> vector<32xf32>
}

// -----

kernel.func @wgmma_in_flight(%y: memref<32xf32>) block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma's result is in flight until a kernel.wgmma_wait returns it: it may only be a wgmma's accumulator or a wgmma_wait operand (or carried by a loop to one), but 'vector.extract' uses it}}
  %d = kernel.wgmma m64n64k16 %s[%c0, %c0], %s[%c0, %c0], %c : memref<64x64xbf16, 3 : i32>, memref<64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
  %e = vector.extract %d[0] : f32 from vector<32xf32>
  memref.store %e, %y[%c0] : memref<32xf32>
}

// -----

kernel.func @wgmma_in_flight_out_of_a_loop(%y: memref<32xf32>) block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %c) -> (vector<32xf32>) {
    kernel.wgmma_fence
    // expected-error @+1 {{a kernel.wgmma's result is in flight until a kernel.wgmma_wait returns it: it may only be a wgmma's accumulator or a wgmma_wait operand (or carried by a loop to one), but 'vector.extract' uses it}}
    %d = kernel.wgmma m64n64k16 %s[%c0, %c0], %s[%c0, %c0], %acc : memref<64x64xbf16, 3 : i32>, memref<64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
    kernel.wgmma_commit
    kernel.wgmma_wait 1
    scf.yield %d : vector<32xf32>
  }
  %e = vector.extract %r[0] : f32 from vector<32xf32>
  memref.store %e, %y[%c0] : memref<32xf32>
}

// -----

kernel.func @wgmma_wait_types() block [128, 1, 1] {
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  // expected-error @+1 {{a kernel.wgmma_wait returns its operands, of their types}}
  %d = "kernel.wgmma_wait"(%c) <{pending = 0 : i64}> : (vector<32xf32>) -> vector<16xf32>
}

// -----

kernel.func @setmaxnreg_count() block [128, 1, 1] {
  // expected-error @+1 {{a kernel.setmaxnreg sets 24 to 256 registers, a multiple of 8, got 250}}
  kernel.setmaxnreg inc 250
}

// -----

// Warps 0 to 2 of warpgroup 0: each warp alike, but not the whole warpgroup.
kernel.func @wgmma_fence_under_warp_if() block [256, 1, 1] {
  %c96 = arith.constant 96 : index
  %t = kernel.thread_id x
  %some = arith.cmpi ult, %t, %c96 : index
  scf.if %some {
    // expected-error @+1 {{a kernel.wgmma_fence must be reached by every thread of the warpgroup, but it is inside an scf.if whose condition depends on kernel.thread_id}}
    kernel.wgmma_fence
  }
}

// -----

kernel.func @named_barrier_of_part_of_a_warp() block [256, 1, 1] {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{a kernel.named_barrier counts whole warps: 100 threads is not a positive multiple of 32}}
  kernel.named_barrier sync %c1, threads 100
}

// -----

kernel.func @named_barrier_zero() block [256, 1, 1] {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a kernel.named_barrier is barrier 1 to 15 (0 is kernel.barrier's), got 0}}
  kernel.named_barrier arrive %c0, threads 256
}

// -----

kernel.func @named_barrier_under_lane_if() block [256, 1, 1] {
  %c1 = arith.constant 1 : index
  %t = kernel.thread_id x
  %odd = arith.cmpi ult, %t, %c1 : index
  scf.if %odd {
    // expected-error @+1 {{a kernel.named_barrier must be reached by every lane of the warp}}
    kernel.named_barrier sync %c1, threads 256
  }
}

// -----

kernel.func @setmaxnreg_under_warp_if() block [256, 1, 1] {
  %c32 = arith.constant 32 : index
  %t = kernel.thread_id x
  %warp = arith.divui %t, %c32 : index
  %c1 = arith.constant 1 : index
  %second = arith.cmpi eq, %warp, %c1 : index
  scf.if %second {
    // expected-error @+1 {{a kernel.setmaxnreg must be reached by every thread of the warpgroup}}
    kernel.setmaxnreg dec 24
  }
}

// -----

builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  kernel.func @wgmma_on_ampere() block [128, 1, 1] {
    // expected-error @+1 {{'kernel.wgmma_fence' needs warpgroup tensor cores (sm_90a), which the module's target sm_80 (A100) does not have}}
    kernel.wgmma_fence
  }
}

// -----

// --- index ranges: bounds that fit, accesses in range (issue 12 §1) ----------------------------

// An index constant is printed as a C `long`: 2**64 would be 0, and the loop would not run.
kernel.func @bound_over_index_width(%x: memref<4xf32>) block [32, 1, 1] {
  %t = kernel.thread_id x
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{index constant 18446744073709551616 does not fit the 64-bit index a kernel computes in (-9223372036854775808 to 9223372036854775807)}}
  %end = arith.constant 18446744073709551616 : index
  scf.for %i = %t to %end step %c1 {
  }
}

// -----

// A TMA store's box is read from a staging slot past the buffer's 2.
kernel.func @tma_store_slot_past_the_end(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %t = kernel.thread_id x
  %s = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
  // expected-error @+1 {{index %t of memref<2x64x64xbf16, 3 : i32> ranges over [0, 127], outside dimension 0 of size 2}}
  kernel.tma_store %m[%c0, %c0], %s[%t, %c0, %c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<2x64x64xbf16, 3 : i32>
  kernel.tma_store_commit
  kernel.tma_store_wait 0
}

// -----

// Threads 32 to 63 of the block read past the end.
kernel.func @thread_past_the_end(%x: memref<32xf32>, %y: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  // expected-error @+1 {{index %t of memref<32xf32> ranges over [0, 63], outside dimension 0 of size 32}}
  %v = memref.load %x[%t] : memref<32xf32>
  memref.store %v, %y[%t] : memref<64xf32>
}

// -----

// A grid-stride loop to 8 over a buffer of 4, with vector accesses (the kernel of a loop.for to
// 8 mapped to global vector 4).
kernel.func @vector_loop_past_the_end(%x: memref<4xf32>, %y: memref<8xf32>) block [32, 1, 1] {
  %t = kernel.thread_id x
  %b = kernel.block_id x
  %g = kernel.grid_dim x
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %first_thread = arith.muli %b, %c32 : index
  %thread = arith.addi %first_thread, %t : index
  %start = arith.muli %thread, %c4 : index
  %stride = arith.muli %g, %c128 : index
  scf.for %i = %start to %c8 step %stride {
    // expected-error @+1 {{the 4 elements from index %i of memref<4xf32> range over [0, 7], outside dimension 0 of size 4}}
    %v = kernel.vector_load %x[%i] : memref<4xf32>, vector<4xf32>
    kernel.vector_store %v, %y[%i] : memref<8xf32>, vector<4xf32>
  }
}

// -----

// The guard lets thread 8 through.
kernel.func @loose_guard(%x: memref<8xf32>) block [32, 1, 1] {
  %t = kernel.thread_id x
  %c9 = arith.constant 9 : index
  %inside = arith.cmpi ult, %t, %c9 : index
  scf.if %inside {
    // expected-error @+1 {{index %t of memref<8xf32> ranges over [0, 8], outside dimension 0 of size 8}}
    %v = memref.load %x[%t] : memref<8xf32>
  }
}

// -----

// An unsigned minimum keeps a loaded index within [0, 8] whatever was loaded: one past the end.
kernel.func @loose_clamp(%x: memref<8xf32>, %ids: memref<4xi32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %id = memref.load %ids[%c0] : memref<4xi32>
  %i = arith.index_cast %id : i32 to index
  %clamped = arith.minui %i, %c8 : index
  // expected-error @+1 {{index %clamped of memref<8xf32> ranges over [0, 8], outside dimension 0 of size 8}}
  %v = memref.load %x[%clamped] : memref<8xf32>
}

// -----

// Block ids range over the grids the module launches the kernel with.
kernel.func @row_per_block(%x: memref<4x32xf32>) block [32, 1, 1] {
  %row = kernel.block_id x
  %t = kernel.thread_id x
  // expected-error @+1 {{index %row of memref<4x32xf32> ranges over [0, 7], outside dimension 0 of size 4}}
  %v = memref.load %x[%row, %t] : memref<4x32xf32>
}
func.func @forward(%x: memref<4x32xf32>) {
  kernel.launch @row_per_block(%x) grid [8, 1, 1] block [32, 1, 1] smem 0 : memref<4x32xf32>
  func.return
}

// -----

kernel.func @atomic_outside(%x: memref<8xf32>) block [32, 1, 1] {
  %one = arith.constant 1.0 : f32
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{index %c8 of memref<8xf32> is 8, outside dimension 0 of size 8}}
  %old = kernel.atomic add %one, %x[%c8] : memref<8xf32>
}

// -----

// Guards the analysis follows, which a lowered kernel uses at its tails: an scf.if on a
// comparison (and its else branch), conditions joined by arith.andi, an arith.select of a safe
// index, an arith.minui clamp and an eq test's else branch.
kernel.func @guarded_tails(%x: memref<8x8xf32>, %y: memref<8xf32>) block [64, 2, 1] {
  %t = kernel.thread_id x
  %u = kernel.thread_id y
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %inside = arith.cmpi ult, %t, %c8 : index
  scf.if %inside {
    %v = memref.load %y[%t] : memref<8xf32>
  } else {
    %beyond = arith.subi %t, %c8 : index
    %below = arith.cmpi slt, %beyond, %c8 : index
    scf.if %below {
      %v = memref.load %y[%beyond] : memref<8xf32>
    }
  }
  %rows = arith.cmpi ult, %t, %c8 : index
  %twice = arith.muli %u, %c7 : index
  %columns = arith.cmpi ugt, %c8, %twice : index
  %both = arith.andi %rows, %columns : i1
  %row = arith.select %both, %t, %c0 : index
  %column = arith.select %both, %twice, %c0 : index
  %v = memref.load %x[%row, %column] : memref<8x8xf32>
  %clamped = arith.minui %t, %c7 : index
  %w = memref.load %y[%clamped] : memref<8xf32>
  %first = arith.cmpi eq, %u, %c0 : index
  scf.if %first {
  } else {
    %previous = arith.subi %u, %c1 : index
    %p = memref.load %y[%previous] : memref<8xf32>
  }
}

// -----

// --- use before definition ---------------------------------------------------------------------

kernel.func @use_before_definition(%x: memref<32xf32>) block [32, 1, 1] {
  %t = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %t, %c0 : index
  scf.if %first {
    // expected-error @+1 {{operand #0 (%v) is used before its definition}}
    memref.store %v, %x[%t] : memref<32xf32>
  }
  %v = memref.load %x[%t] : memref<32xf32>
}


// -----

// Lanes of a vector, static or dynamic, are within it (xDSL checks neither).
kernel.func @lane_outside(%x: memref<8xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %v = kernel.vector_load %x[%c0] : memref<8xf32>, vector<4xf32>
  // expected-error @+1 {{the position of vector<4xf32> is 4, outside dimension 0 of size 4}}
  %e = vector.extract %v[4] : f32 from vector<4xf32>
}

// -----

kernel.func @dynamic_lane_outside(%x: memref<8xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %t = kernel.thread_id x
  %v = kernel.vector_load %x[%c0] : memref<8xf32>, vector<4xf32>
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{index %t of vector<4xf32> ranges over [0, 31], outside dimension 0 of size 4}}
  %w = vector.insert %one, %v [%t] : f32 into vector<4xf32>
}

// -----

kernel.func @mbarrier_outside() block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %full = kernel.mbarrier_alloc : !kernel.mbarrier<2>
  scf.for %s = %c0 to %c3 step %c1 {
    // expected-error @+1 {{index %s of !kernel.mbarrier<2> ranges over [0, 2], outside dimension 0 of size 2}}
    kernel.mbarrier_init %full[%s], arrivals 1 : !kernel.mbarrier<2>
  }
}

// -----

// The stage a TMA box lands in is one of the destination's two.
kernel.func @tma_stage_outside(%m: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %b = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %s = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
  scf.for %stage = %c0 to %c3 step %c1 {
    // expected-error @+1 {{index %stage of memref<2x64x64xbf16, 3 : i32> ranges over [0, 2], outside dimension 0 of size 2}}
    kernel.tma_load %m[%c0, %c0], %s[%stage, %c0, %c0], %b[%c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<2x64x64xbf16, 3 : i32>, !kernel.mbarrier<1>
  }
}

// -----

// expected-error @+1 {{a cluster is 2 to 8 blocks on sm_90a (H200), got 16}}
kernel.func @cluster_too_big() block [32, 1, 1] cluster 16 {
}

// -----

builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  // expected-error @+1 {{'kernel.func' needs thread-block clusters (sm_90a), which the module's target sm_80 (A100) does not have}}
  kernel.func @cluster_before_hopper() block [32, 1, 1] cluster 2 {
  }
}

// -----

kernel.func @k() block [32, 1, 1] cluster 4 {
}
func.func @host() {
  // expected-error @+1 {{@k runs in clusters of 4 blocks along x, which launch grid [6, 1, 1] does not divide into}}
  kernel.launch @k() grid [6, 1, 1] block [32, 1, 1] smem 0
  func.return
}

// -----

kernel.func @k(%n: index) block [32, 1, 1] cluster 2 {
}
func.func @host(%n: index) {
  // expected-error @+1 {{@k runs in clusters of 2 blocks along x, but the blocks of launch sized [3, 64, 1] are 3 times a count}}
  kernel.launch @k(%n) grid [6, 1, 1] sized [3, 64, 1] block [32, 1, 1] smem 0 : index
  func.return
}

// -----

kernel.func @cluster_barrier_without_cluster() block [32, 1, 1] {
  // expected-error @+1 {{'kernel.cluster_barrier' is for a kernel.func whose blocks run in clusters (`cluster N`)}}
  kernel.cluster_barrier
}

// -----

kernel.func @map_global(%x: memref<32xf32>) block [32, 1, 1] cluster 2 {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{a kernel.map_shared_rank buffer is shared memory, which is memory space 3 (memref<..., 3 : i32>), but its type is memref<32xf32>}}
  %m = kernel.map_shared_rank %x, %c1 : memref<32xf32>
}
