// RUN: emmy-opt %s | emmy-opt | filecheck %s
// RUN: emmy-opt %s --print-op-generic | emmy-opt | filecheck %s

// The GPU a module is for is its `kernel.target` attribute, and the verifiers read their limits
// from it: a 200 KB dynamic shared view fits an sm_90a block (227 KB), not an sm_80 one (163 KB,
// see invalid.mlir).

// CHECK:       builtin.module attributes {kernel.target = #kernel.target<"sm_90a">} {
// CHECK-NEXT:    kernel.func @k_big_view() block [32, 1, 1] {
// CHECK-NEXT:      %{{.*}} = kernel.dynamic_shared offset 0 : memref<51200xf32, 3 : i32>
// CHECK-NEXT:    }
// CHECK:         func.func @host() {
// CHECK-NEXT:      kernel.launch @k_big_view() grid [1, 1, 1] block [32, 1, 1] smem 204800
builtin.module attributes {kernel.target = #kernel.target<"sm_90a">} {
  kernel.func @k_big_view() block [32, 1, 1] {
    %d = kernel.dynamic_shared offset 0 : memref<51200xf32, 3 : i32>
  }
  func.func @host() {
    kernel.launch @k_big_view() grid [1, 1, 1] block [32, 1, 1] smem 204800
    func.return
  }
}
