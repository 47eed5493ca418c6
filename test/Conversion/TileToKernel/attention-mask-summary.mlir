// RUN: emmy-opt %s --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// A boolean mask of a wgmma attention (keys a multiple of 16) is summarised before it
// (`attention_mask_summary`): @summarised_mask packs each slice of 16 rows of a block of 128
// (a block each: 2 row blocks x 8 slices) into a word of bits for each row, key block and
// lane of a quad (a 16-key vector load a thread, the words combined over the 8 lanes of a
// key block by xor shuffles) and marks the key blocks the slice keeps a key in;
// @summarised_mask_list combines a row block's marks and lists its key blocks after their
// count. The attention reads the list for the blocks an item takes (none: the consumers skip
// to zeros) and, at each block's scores, one word of bits for each of a lane's two rows.

// CHECK-LABEL: kernel.func @summarised_mask(
// CHECK-SAME:      %mask: memref<200x256xi1>, %bits: memref<200x2x4xi32>, %marks: memref<2x8x2xi32>) block [256, 1, 1] {
// CHECK:         %[[MARKS:.*]] = kernel.shared_alloc : memref<2xi32, 3 : i32>
// CHECK:         kernel.barrier
// CHECK:         kernel.vector_load %mask[%{{.*}}, %{{.*}}] : memref<200x256xi1>, vector<16xi1>
// CHECK:         kernel.shuffle xor %{{.*}}, %c1_i32 : i32
// CHECK:         kernel.shuffle xor %{{.*}}, %c2_i32 : i32
// CHECK:         kernel.shuffle xor %{{.*}}, %c4_i32 : i32
// CHECK:           memref.store %{{.*}}, %bits[%{{.*}}, %{{.*}}, %{{.*}}] : memref<200x2x4xi32>
// CHECK:           memref.store %c1_i32, %[[MARKS]][%{{.*}}] : memref<2xi32, 3 : i32>
// CHECK:         kernel.barrier
// CHECK:           memref.store %{{.*}}, %marks[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x8x2xi32>

// CHECK-LABEL: kernel.func @summarised_mask_list(
// CHECK-SAME:      %marks: memref<2x8x2xi32>, %taken: memref<2x3xi32>) block [32, 1, 1] {
// CHECK:         kernel.barrier
// CHECK:           scf.for
// CHECK:               memref.store %{{.*}}, %taken[%{{.*}}, %{{.*}}] : memref<2x3xi32>
// CHECK:           memref.store %{{.*}}, %taken[%{{.*}}, %c0] : memref<2x3xi32>

// CHECK-LABEL: kernel.func @summarised(
// CHECK-SAME:      %bits: memref<200x2x4xi32>, %taken: memref<2x3xi32>, %items: memref<9xi32>) block [384, 1, 1] {
// CHECK:         kernel.setmaxnreg dec 24
// CHECK:             %[[LISTED:.*]] = memref.load %taken[%{{.*}}, %c0] : memref<2x3xi32>
// CHECK:               memref.load %taken[%{{.*}}, %{{.*}}] : memref<2x3xi32>
// CHECK:               kernel.tma_load %k_map
// CHECK:         kernel.setmaxnreg inc 240
// CHECK:           scf.if %{{.*}} -> (f32, f32, f32, f32, vector<32xf32>) {
// CHECK:             memref.load %bits[%{{.*}}, %{{.*}}, %{{.*}}] : memref<200x2x4xi32>
// CHECK:             arith.shrui %{{.*}}, %c1_i32 : i32
// CHECK:             kernel.wgmma_wait 1
// CHECK:           } else {

// CHECK-LABEL: func.func @forward(
// CHECK:         %[[BITS:.*]] = memref.alloc() : memref<200x2x4xi32>
// CHECK-NEXT:    %[[TAKEN:.*]] = memref.alloc() : memref<2x3xi32>
// CHECK-NEXT:    %[[SLICE_MARKS:.*]] = memref.alloc() : memref<2x8x2xi32>
// CHECK-NEXT:    kernel.launch @summarised_mask(%m, %[[BITS]], %[[SLICE_MARKS]]) grid [16, 1, 1] block [256, 1, 1] smem 0
// CHECK-NEXT:    kernel.launch @summarised_mask_list(%[[SLICE_MARKS]], %[[TAKEN]]) grid [2, 1, 1] block [32, 1, 1] smem 0
// CHECK-NEXT:    %items = memref.get_global @summarised_items : memref<9xi32>
// CHECK-NEXT:    kernel.launch @summarised(%q, %k, %v, %m, %o, %q, %k, %v, %o, %[[BITS]], %[[TAKEN]], %items) grid [4, 1, 1] block [384, 1, 1]

builtin.module {
  tile.kernel @summarised(%q: memref<1x2x200x64xbf16>, %k: memref<1x1x256x64xbf16>, %v: memref<1x1x256x64xbf16>, %m: memref<200x256xi1>, %o: memref<1x2x200x64xbf16>) grid [4, 1, 1] block [384, 1, 1] {
    tile.attention %q, %k, %v mask %m scale 0.125 into %o : memref<1x2x200x64xbf16>, memref<1x1x256x64xbf16>, memref<1x1x256x64xbf16> mask memref<200x256xi1> into memref<1x2x200x64xbf16> atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2
  }
  func.func @forward(%q: memref<1x2x200x64xbf16>, %k: memref<1x1x256x64xbf16>, %v: memref<1x1x256x64xbf16>, %m: memref<200x256xi1>) -> memref<1x2x200x64xbf16> {
    %o = memref.alloc() : memref<1x2x200x64xbf16>
    tile.launch @summarised(%q, %k, %v, %m, %o) : memref<1x2x200x64xbf16>, memref<1x1x256x64xbf16>, memref<1x1x256x64xbf16>, memref<200x256xi1>, memref<1x2x200x64xbf16>
    func.return %o : memref<1x2x200x64xbf16>
  }
}
