// RUN: emmy-opt %s --split-input-file --interchange-invariant-reductions | filecheck %s

// A prefill's keys scattered into a cache of 2 heads by gathering: for each cache row, the
// position that names it (a max over the positions), the same for both heads. The loops swap:
// the row loop goes outside and searches once per row; the head's offset moves inside.

// CHECK-LABEL: loop.kernel @k_cache_rows(
// CHECK:         loop.for %[[R:.*]] in 0 to 12 {
// CHECK-NEXT:      %[[RR:.*]] = arith.index_cast %[[R]] : index to i64
// CHECK-NEXT:      %[[M:.*]] = loop.for %{{.*}} in 0 to 5 reduce max
// CHECK:           %[[S:.*]] = arith.maxsi %[[M]], %{{.*}} : i64
// CHECK-NEXT:      %[[AT:.*]] = arith.index_cast %[[S]] : i64 to index
// CHECK-NEXT:      loop.for %[[H:.*]] in 0 to 2 {
// CHECK-NEXT:        %[[O:.*]] = arith.muli %[[H]], %{{.*}} : index
// CHECK-NEXT:        loop.for %[[D:.*]] in 0 to 4 {
// CHECK-NEXT:          %[[C:.*]] = arith.addi %[[O]], %[[D]] : index
// CHECK-NEXT:          %{{.*}} = loop.load %k[%[[AT]], %[[C]]] : memref<5x8xf32>
// CHECK:               loop.store %{{.*}}, %cache[%[[H]], %[[R]], %[[D]]] : memref<2x12x4xf32>

loop.kernel @k_cache_rows(%positions: memref<5xi64>, %k: memref<5x8xf32>, %cache: memref<2x12x4xf32>) {
  %c4 = arith.constant 4 : index
  %none = arith.constant -1 : i64
  loop.for %h in 0 to 2 {
    %offset = arith.muli %h, %c4 : index
    loop.for %r in 0 to 12 {
      %row = arith.index_cast %r : index to i64
      %found = loop.for %p in 0 to 5 reduce max init -1 : i64 {
        %at = loop.load %positions[%p] : memref<5xi64>
        %hit = arith.cmpi eq, %at, %row : i64
        %pp = arith.index_cast %p : index to i64
        %which = arith.select %hit, %pp, %none : i64
        loop.yield %which : i64
      }
      %zero = arith.constant 0 : i64
      %safe = arith.maxsi %found, %zero : i64
      %source = arith.index_cast %safe : i64 to index
      loop.for %d in 0 to 4 {
        %column = arith.addi %offset, %d : index
        %new = loop.load %k[%source, %column] : memref<5x8xf32>
        %old = loop.load %cache[%h, %r, %d] : memref<2x12x4xf32>
        %taken = arith.cmpi sge, %found, %zero : i64
        %value = arith.select %taken, %new, %old : f32
        loop.store %value, %cache[%h, %r, %d] : memref<2x12x4xf32>
      }
    }
  }
}

// -----

// No reduction to hoist (the row's work is index arithmetic): the loops keep their order.

// CHECK-LABEL: loop.kernel @k_no_reduction(
// CHECK:         loop.for %{{.*}} in 0 to 2 {
// CHECK:           loop.for %{{.*}} in 0 to 12 {

loop.kernel @k_no_reduction(%x: memref<2x12xf32>, %y: memref<2x12xf32>) {
  loop.for %h in 0 to 2 {
    loop.for %r in 0 to 12 {
      %v = loop.load %x[%h, %r] : memref<2x12xf32>
      loop.store %v, %y[%h, %r] : memref<2x12xf32>
    }
  }
}

// -----

// The reduction reads the buffer the rest of the row writes: each head's rows must see the
// writes of the heads before, in order, so the loops keep their order.

// CHECK-LABEL: loop.kernel @k_reads_what_it_writes(
// CHECK:         loop.for %{{.*}} in 0 to 2 {
// CHECK:           loop.for %{{.*}} in 0 to 12 {
// CHECK:             loop.for %{{.*}} in 0 to 4 reduce add

loop.kernel @k_reads_what_it_writes(%x: memref<2x12x4xf32>) {
  %c0 = arith.constant 0 : index
  loop.for %h in 0 to 2 {
    loop.for %r in 0 to 12 {
      %s = loop.for %p in 0 to 4 reduce add init 0.0 : f32 {
        %v = loop.load %x[%c0, %r, %p] : memref<2x12x4xf32>
        loop.yield %v : f32
      }
      loop.for %d in 0 to 4 {
        loop.store %s, %x[%h, %r, %d] : memref<2x12x4xf32>
      }
    }
  }
}

// -----

// The reduction reads the outer loop's variable: it is not the same for every head.

// CHECK-LABEL: loop.kernel @k_reduction_per_head(
// CHECK:         loop.for %{{.*}} in 0 to 2 {
// CHECK:           loop.for %{{.*}} in 0 to 12 {

loop.kernel @k_reduction_per_head(%x: memref<2x12x4xf32>, %y: memref<2x12xf32>) {
  loop.for %h in 0 to 2 {
    loop.for %r in 0 to 12 {
      %s = loop.for %p in 0 to 4 reduce add init 0.0 : f32 {
        %v = loop.load %x[%h, %r, %p] : memref<2x12x4xf32>
        loop.yield %v : f32
      }
      loop.store %s, %y[%h, %r] : memref<2x12xf32>
    }
  }
}
