// RUN: emmy-opt %s --choose-tile-schedule --lower-loop-to-tile | filecheck %s

// A module nested in the input (a `// -----` split marker forgotten) has a sym_name that is
// unset: naming the kernels' parts must not trip on it (the fuzz test found an internal error).

// CHECK: tile.kernel @k
// CHECK: builtin.module
loop.kernel @k(%x: memref<64xf32>, %y: memref<64xf32>) {
  loop.for %i in 0 to 64 {
    %v = loop.load %x[%i] : memref<64xf32>
    loop.store %v, %y[%i] : memref<64xf32>
  }
}
builtin.module {
}
