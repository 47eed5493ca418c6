// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// argmax and argmin are one pass: a prim.multi_reduce of each value with its position (an
// iota) whose combiner keeps the larger (smaller) value and, of equal ones, the earlier
// position; a NaN beats every number and NaNs tie, as torch picks them. 16-bit floats compare
// as f32, which is exact.

// CHECK-LABEL: func.func @argmax_bf16(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xbf16>) -> tensor<4x1xi64> {
// CHECK-NEXT:    %[[W:.*]] = prim.map(%[[X]]) : (tensor<4x8xbf16>) -> tensor<4x8xf32> {
// CHECK:         }
// CHECK-NEXT:    %[[P:.*]] = prim.iota dim 1 : tensor<4x8xi64>
// CHECK-NEXT:    %{{.*}}, %[[I:.*]] = prim.multi_reduce (%[[W]], %[[P]]) axes [1] keepdim init (-inf, 9223372036854775807) : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4x1xf32>, tensor<4x1xi64>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[VP:.*]]: i64, %[[O:.*]]: f32, %[[OP:.*]]: i64):
// CHECK-NEXT:      %[[EARLIER:.*]] = arith.cmpi slt, %[[OP]], %[[VP]] : i64
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[O]], %[[V]] : f32
// CHECK-NEXT:      %[[EQ:.*]] = arith.cmpf oeq, %[[O]], %[[V]] : f32
// CHECK-NEXT:      %[[ONAN:.*]] = arith.cmpf uno, %[[O]], %[[O]] : f32
// CHECK-NEXT:      %[[VNAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK-NEXT:      %[[VNUM:.*]] = arith.cmpf ord, %[[V]], %[[V]] : f32
// CHECK-NEXT:      %[[NANWINS:.*]] = arith.andi %[[ONAN]], %[[VNUM]] : i1
// CHECK-NEXT:      %[[BETTER:.*]] = arith.ori %[[GT]], %[[NANWINS]] : i1
// CHECK-NEXT:      %[[BOTHNAN:.*]] = arith.andi %[[ONAN]], %[[VNAN]] : i1
// CHECK-NEXT:      %[[SAME:.*]] = arith.ori %[[EQ]], %[[BOTHNAN]] : i1
// CHECK-NEXT:      %[[TIE:.*]] = arith.andi %[[SAME]], %[[EARLIER]] : i1
// CHECK-NEXT:      %[[TAKE:.*]] = arith.ori %[[BETTER]], %[[TIE]] : i1
// CHECK-NEXT:      %[[KEPT:.*]] = arith.select %[[TAKE]], %[[O]], %[[V]] : f32
// CHECK-NEXT:      %[[KEPTP:.*]] = arith.select %[[TAKE]], %[[OP]], %[[VP]] : i64
// CHECK-NEXT:      prim.yield %[[KEPT]], %[[KEPTP]] : f32, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[I]] : tensor<4x1xi64>
func.func @argmax_bf16(%x: tensor<4x8xbf16>) -> tensor<4x1xi64> {
  %0 = torch.argmax %x dims [1] keepdim : tensor<4x8xbf16> -> tensor<4x1xi64>
  func.return %0 : tensor<4x1xi64>
}

// -----

// Integers compare signed, from the type's largest value for argmin.

// CHECK-LABEL: func.func @argmin_i32(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xi32>) -> tensor<8xi64> {
// CHECK-NEXT:    %[[P:.*]] = prim.iota dim 0 : tensor<4x8xi64>
// CHECK-NEXT:    %{{.*}}, %[[I:.*]] = prim.multi_reduce (%[[X]], %[[P]]) axes [0] init (2147483647, 9223372036854775807) : (tensor<4x8xi32>, tensor<4x8xi64>) -> (tensor<8xi32>, tensor<8xi64>) {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: i32, %[[VP:.*]]: i64, %[[O:.*]]: i32, %[[OP:.*]]: i64):
// CHECK-NEXT:      %[[EARLIER:.*]] = arith.cmpi slt, %[[OP]], %[[VP]] : i64
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[O]], %[[V]] : i32
// CHECK-NEXT:      %[[EQ:.*]] = arith.cmpi eq, %[[O]], %[[V]] : i32
// CHECK-NEXT:      %[[TIE:.*]] = arith.andi %[[EQ]], %[[EARLIER]] : i1
// CHECK-NEXT:      %[[TAKE:.*]] = arith.ori %[[LT]], %[[TIE]] : i1
// CHECK-NEXT:      %[[KEPT:.*]] = arith.select %[[TAKE]], %[[O]], %[[V]] : i32
// CHECK-NEXT:      %[[KEPTP:.*]] = arith.select %[[TAKE]], %[[OP]], %[[VP]] : i64
// CHECK-NEXT:      prim.yield %[[KEPT]], %[[KEPTP]] : i32, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[I]] : tensor<8xi64>
func.func @argmin_i32(%x: tensor<4x8xi32>) -> tensor<8xi64> {
  %0 = torch.argmin %x dims [0] : tensor<4x8xi32> -> tensor<8xi64>
  func.return %0 : tensor<8xi64>
}
