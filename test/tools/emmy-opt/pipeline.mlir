// Passes run in the order given, whether as flags or as a -p pipeline, and take options in
// every spelling: kebab or snake case, --pass=opt=value, MLIR's --pass="opt=value", pass{opt=value}.

// RUN: emmy-opt %s --print-ir-after-all --cse --canonicalize -o %t 2>&1 | filecheck %s --check-prefix=CSE-FIRST
// RUN: emmy-opt %s --print-ir-after-all -p 'cse,canonicalize' -o %t 2>&1 | filecheck %s --check-prefix=CSE-FIRST
// CSE-FIRST: IR Dump After cse
// CSE-FIRST: IR Dump After canonicalize

// RUN: emmy-opt %s --print-ir-after-all --canonicalize --cse -o %t 2>&1 | filecheck %s --check-prefix=CANONICALIZE-FIRST
// RUN: emmy-opt %s --print-ir-after-all -p 'canonicalize,cse' -o %t 2>&1 | filecheck %s --check-prefix=CANONICALIZE-FIRST
// CANONICALIZE-FIRST: IR Dump After canonicalize
// CANONICALIZE-FIRST: IR Dump After cse

// RUN: emmy-opt %s --lower-fused-to-loop | filecheck %s --check-prefix=DROP
// RUN: emmy-opt %s --lower-fused-to-loop=keep-unit-dims=false | filecheck %s --check-prefix=DROP
// RUN: emmy-opt %s --lower-fused-to-loop=keep-unit-dims=true | filecheck %s --check-prefix=KEEP
// RUN: emmy-opt %s --lower-fused-to-loop="keep-unit-dims=true" | filecheck %s --check-prefix=KEEP
// RUN: emmy-opt %s --lower-fused-to-loop=keep_unit_dims=true | filecheck %s --check-prefix=KEEP
// RUN: emmy-opt %s -p 'lower-fused-to-loop{keep-unit-dims=true}' | filecheck %s --check-prefix=KEEP
// RUN: emmy-opt %s -p 'lower-fused-to-loop{keep_unit_dims=true}' | filecheck %s --check-prefix=KEEP
// RUN: emmy-opt %s --passes='lower-fused-to-loop{keep-unit-dims=true},canonicalize' | filecheck %s --check-prefix=DROP

// DROP-LABEL: loop.kernel @k_relu(
// DROP-NOT:     in 0 to 1 {
// DROP:         loop.for %{{.*}} in 0 to 5 {

// KEEP-LABEL: loop.kernel @k_relu(
// KEEP:         loop.for %{{.*}} in 0 to 1 {
// KEEP-NEXT:      loop.for %{{.*}} in 0 to 5 {

func.func @forward(%x: tensor<1x5xf32>) -> tensor<1x5xf32> {
  %y = fused.kernel @k_relu(%x) : (tensor<1x5xf32>) -> tensor<1x5xf32> {
  ^bb0(%a: tensor<1x5xf32>):
    %r = prim.map(%a) : (tensor<1x5xf32>) -> tensor<1x5xf32> {
    ^bb0(%v: f32):
      %zero = arith.constant 0.0 : f32
      %m = arith.maximumf %v, %zero : f32
      prim.yield %m : f32
    }
    fused.yield %r : tensor<1x5xf32>
  }
  func.return %y : tensor<1x5xf32>
}
