// RUN: emmy-opt %s -t cuda | filecheck %s

// scf.for carries values in variables declared before the loop and assigned at the end of each
// iteration (through temporaries when the values swap); scf.if results are variables assigned
// in each branch. Values nothing needs are not printed, whole loops' results included.

// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(32) fibonacci(int* __restrict__ out) {
// CHECK-NEXT:    long tid = threadIdx.x;
// CHECK-NEXT:    int a = 0;
// CHECK-NEXT:    int b = 1;
// CHECK-NEXT:    for (long k = 0; k < tid; k += 1) {
// CHECK-NEXT:      int sum = (int)((unsigned int)a + (unsigned int)b);
// CHECK-NEXT:      a = b;
// CHECK-NEXT:      b = sum;
// CHECK-NEXT:    }
// CHECK-NEXT:    int p = 1;
// CHECK-NEXT:    int q = 2;
// CHECK-NEXT:    for (int n = 0; n < 10; n += 3) {
// CHECK-NEXT:      int p_next = q;
// CHECK-NEXT:      int q_next = p;
// CHECK-NEXT:      p = p_next;
// CHECK-NEXT:      q = q_next;
// CHECK-NEXT:    }
// CHECK-NEXT:    long parity = (long)((unsigned long)tid % 2);
// CHECK-NEXT:    bool odd = parity == 1;
// CHECK-NEXT:    int picked;
// CHECK-NEXT:    if (odd) {
// CHECK-NEXT:      int twice = (int)((unsigned int)a * 2);
// CHECK-NEXT:      picked = twice;
// CHECK-NEXT:    } else {
// CHECK-NEXT:      picked = q;
// CHECK-NEXT:    }
// CHECK-NEXT:    if (odd) {
// CHECK-NEXT:      out[tid] = picked;
// CHECK-NEXT:    }
// CHECK-NEXT:    for (long r = 0; r < 4; r += 1) {
// CHECK-NEXT:      for (long c = 0; c < 8; c += 2) {
// CHECK-NEXT:        long rc = r + c;
// CHECK-NEXT:        long at = rc + 32;
// CHECK-NEXT:        out[at] = p;
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    for (long j = 0; j < 4; j += 1) {
// CHECK-NEXT:    }
// CHECK-NEXT:  }

kernel.func @fibonacci(%out: memref<64xi32>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %two = arith.constant 2 : i32
  %three = arith.constant 3 : i32
  %ten = arith.constant 10 : i32
  %a, %b = scf.for %k = %c0 to %tid step %c1 iter_args(%x = %zero, %y = %one) -> (i32, i32) {
    %sum = arith.addi %x, %y : i32
    scf.yield %y, %sum : i32, i32
  }
  %p, %q = scf.for %n = %zero to %ten step %three iter_args(%u = %one, %v = %two) -> (i32, i32) : i32 {
    scf.yield %v, %u : i32, i32
  }
  %parity = arith.remui %tid, %c2 : index
  %odd = arith.cmpi eq, %parity, %c1 : index
  %picked = scf.if %odd -> (i32) {
    %twice = arith.muli %a, %two : i32
    scf.yield %twice : i32
  } else {
    scf.yield %q : i32
  }
  scf.if %odd {
    memref.store %picked, %out[%tid] : memref<64xi32>
  }
  scf.for %r = %c0 to %c4 step %c1 {
    scf.for %c = %c0 to %c8 step %c2 {
      %rc = arith.addi %r, %c : index
      %at = arith.addi %rc, %c32 : index
      memref.store %p, %out[%at] : memref<64xi32>
    }
  }
  %unused = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (i32) {
    %next = arith.addi %acc, %one : i32
    scf.yield %next : i32
  }
}
