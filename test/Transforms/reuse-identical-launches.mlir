// RUN: emmy-opt %s --split-input-file --reuse-identical-launches | filecheck %s

// The second @produce reads the same %x, unchanged since the first: it is dropped, and
// @consume reads the first's output; its allocation goes.

// CHECK-LABEL: func.func @forward(
// CHECK-NEXT:    %[[FIRST:.*]] = memref.alloc() : memref<64xf32>
// CHECK-NEXT:    kernel.launch @produce(%x, %[[FIRST]])
// CHECK-NEXT:    kernel.launch @consume(%[[FIRST]])
// CHECK-NEXT:    kernel.launch @consume(%[[FIRST]])
// CHECK-NEXT:    func.return

kernel.func @produce(%in: memref<64xf32>, %out: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
  memref.store %v, %out[%t] : memref<64xf32>
}
kernel.func @consume(%in: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
}
func.func @forward(%x: memref<64xf32>) {
  %a = memref.alloc() : memref<64xf32>
  kernel.launch @produce(%x, %a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  kernel.launch @consume(%a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  kernel.launch @produce(%x, %b) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  kernel.launch @consume(%b) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  func.return
}

// -----

// Kept: @clobber writes %x between the two.

// CHECK-LABEL: func.func @forward(
// CHECK-COUNT-2: kernel.launch @produce(%x,

kernel.func @produce(%in: memref<64xf32>, %out: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
  memref.store %v, %out[%t] : memref<64xf32>
}
kernel.func @consume(%in: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
}
kernel.func @clobber(%in: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %in[%t] : memref<64xf32>
}
func.func @forward(%x: memref<64xf32>) {
  %a = memref.alloc() : memref<64xf32>
  kernel.launch @produce(%x, %a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  kernel.launch @clobber(%x) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  kernel.launch @produce(%x, %b) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  kernel.launch @consume(%a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  kernel.launch @consume(%b) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  func.return
}
// -----

// Kept: @accumulate reads the buffer it writes.

// CHECK-LABEL: func.func @forward(
// CHECK-COUNT-2: kernel.launch @accumulate(%x,

kernel.func @produce(%in: memref<64xf32>, %out: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
  memref.store %v, %out[%t] : memref<64xf32>
}
kernel.func @consume(%in: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
}
kernel.func @accumulate(%in: memref<64xf32>, %out: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
  %w = memref.load %out[%t] : memref<64xf32>
  %s = arith.addf %v, %w : f32
  memref.store %s, %out[%t] : memref<64xf32>
}
func.func @forward(%x: memref<64xf32>) {
  %a = memref.alloc() : memref<64xf32>
  kernel.launch @accumulate(%x, %a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  kernel.launch @accumulate(%x, %b) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  kernel.launch @consume(%a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  kernel.launch @consume(%b) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  func.return
}
// -----

// Kept: another grid.

// CHECK-LABEL: func.func @forward(
// CHECK:         kernel.launch @produce(%x, %{{.*}}) grid [1, 1, 1]
// CHECK:         kernel.launch @produce(%x, %{{.*}}) grid [2, 1, 1]

kernel.func @produce(%in: memref<64xf32>, %out: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
  memref.store %v, %out[%t] : memref<64xf32>
}
kernel.func @consume(%in: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
}
func.func @forward(%x: memref<64xf32>) {
  %a = memref.alloc() : memref<64xf32>
  kernel.launch @produce(%x, %a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  kernel.launch @produce(%x, %b) grid [2, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  kernel.launch @consume(%a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  kernel.launch @consume(%b) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  func.return
}
// -----

// Kept: the function returns the later output (two results must not be one buffer).

// CHECK-LABEL: func.func @forward(
// CHECK-COUNT-2: kernel.launch @produce(%x,

kernel.func @produce(%in: memref<64xf32>, %out: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
  memref.store %v, %out[%t] : memref<64xf32>
}
kernel.func @consume(%in: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
}
func.func @forward(%x: memref<64xf32>) -> memref<64xf32> {
  %a = memref.alloc() : memref<64xf32>
  kernel.launch @produce(%x, %a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  kernel.launch @consume(%a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  kernel.launch @produce(%x, %b) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  func.return %b : memref<64xf32>
}

// -----

// Kept: the earlier output is freed before the later one's last read.

// CHECK-LABEL: func.func @forward(
// CHECK-COUNT-2: kernel.launch @produce(%x,

kernel.func @produce(%in: memref<64xf32>, %out: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
  memref.store %v, %out[%t] : memref<64xf32>
}
kernel.func @consume(%in: memref<64xf32>) block [64, 1, 1] {
  %t = kernel.thread_id x
  %v = memref.load %in[%t] : memref<64xf32>
}
func.func @forward(%x: memref<64xf32>) {
  %a = memref.alloc() : memref<64xf32>
  kernel.launch @produce(%x, %a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  kernel.launch @consume(%a) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  memref.dealloc %a : memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  kernel.launch @produce(%x, %b) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>, memref<64xf32>
  kernel.launch @consume(%b) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  func.return
}
