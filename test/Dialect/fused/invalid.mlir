// RUN: emmy-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{a fused.kernel is launched from a host func.func, but its parent is 'builtin.module'}}
%y = fused.kernel @k_at_module_level() : () -> tensor<4xf32> {
  %f = prim.map() : () -> tensor<4xf32> {
    %c = arith.constant 0.0 : f32
    prim.yield %c : f32
  }
  fused.yield %f : tensor<4xf32>
}

// -----

func.func @dynamic_shape(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{operand #0 has type tensor<?xf32>, but its module declares no dynamic size (emmy.dynamic_size), so shapes must be static}}
  %r = fused.kernel @k(%x) : (tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: tensor<?xf32>):
    fused.yield %a : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}

// -----

func.func @nested_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fused.kernel @k_outer(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{a fused.kernel is launched from a host func.func, but its parent is 'fused.kernel'}}
    %z = fused.kernel @k_inner(%a) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      fused.yield %b : tensor<4xf32>
    }
    fused.yield %z : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @no_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{a fused.kernel has at least one result; it has none}}
  fused.kernel @k(%x) : (tensor<4xf32>) -> () {
  ^bb0(%a: tensor<4xf32>):
    fused.yield
  }
  func.return
}

// -----

func.func @body_arg_count(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a fused.kernel body takes one argument per operand (2), but it takes 1}}
  %r = fused.kernel @k(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    fused.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @body_arg_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{kernel body argument #0 has type tensor<4xf16> but operand #0 has type tensor<4xf32>}}
  %r = fused.kernel @k(%x) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf16>):
    fused.yield %a : tensor<4xf16>
  }
  func.return %r : tensor<4xf16>
}

// -----

func.func private @helper(tensor<4xf32>) -> tensor<4xf32>

func.func @call_in_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a fused.kernel body holds only prim ops, found 'func.call'}}
  %r = fused.kernel @k(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = func.call @helper(%a) : (tensor<4xf32>) -> tensor<4xf32>
    fused.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// A scalar has no place in a kernel body: the lowering computes tensors element by element.

func.func @scalar_in_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a fused.kernel body holds only prim ops, found 'arith.constant'}}
  %r = fused.kernel @k(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = arith.constant 2.0 : f32
    fused.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @load_in_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fused.kernel @k(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %buffer = memref.alloc() : memref<4xf32>
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'loop.load' must be nested in a loop.kernel}}
    %v = loop.load %buffer[%c0] : memref<4xf32>
    fused.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @captures_from_host(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{Operation using value defined out of its IsolatedFromAbove parent}}
  %r = fused.kernel @k() : () -> tensor<4xf32> {
    fused.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @empty_body(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a fused.kernel body must end in a fused.yield, but it is empty}}
  %r = fused.kernel @k(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @yield_count(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{fused.yield yields one value per kernel result (2), but it yields 1}}
  %r:2 = fused.kernel @k(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    fused.yield %a : tensor<4xf32>
  }
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @yield_type(%x: tensor<4xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{fused.yield value #0 has type tensor<4xf32> but kernel result #0 has type tensor<1x4xf32>}}
  %r = fused.kernel @k(%x) : (tensor<4xf32>) -> tensor<1x4xf32> {
  ^bb0(%a: tensor<4xf32>):
    fused.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<1x4xf32>
}

// -----

func.func @yield_outside_kernel(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fused.yield' expects parent op 'fused.kernel'}}
  fused.yield %x : tensor<4xf32>
}

// -----

func.func @generic_operand_not_tensor(%x: f32) -> tensor<4xf32> {
  // expected-error @+1 {{f32 should be of base attribute tensor}}
  %r = "fused.kernel"(%x) <{sym_name = "k"}> ({
  ^bb0(%a: f32):
    %f = prim.map() : () -> tensor<4xf32> {
      %c = arith.constant 1.0 : f32
      prim.yield %c : f32
    }
    "fused.yield"(%f) : (tensor<4xf32>) -> ()
  }) : (f32) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// Malformed custom syntax is a parse error at the offending token.

func.func @operand_not_tensor(%x: f32) -> tensor<4xf32> {
  // expected-error @+1 {{fused.kernel operand must be a ranked tensor, got f32}}
  %r = fused.kernel @k(%x) : (f32) -> tensor<4xf32> {
  ^bb0(%a: f32):
    %f = prim.map() : () -> tensor<4xf32> {
      %c = arith.constant 0.0 : f32
      prim.yield %c : f32
    }
    fused.yield %f : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @result_not_tensor(%x: tensor<4xf32>) {
  // expected-error @+1 {{fused.kernel result must be a ranked tensor, got f32}}
  %r = fused.kernel @k(%x) : (tensor<4xf32>) -> (tensor<4xf32>, f32) {
  ^bb0(%a: tensor<4xf32>):
    fused.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

func.func @operand_type_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected 2 operand types but had 1}}
  %r = fused.kernel @k(%x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    fused.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

func.func @missing_name(%x: tensor<4xf32>) {
  // expected-error @+1 {{expect symbol name}}
  %r = fused.kernel (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    fused.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

func.func @yield_not_tensor(%v: f32) -> tensor<4xf32> {
  %r = fused.kernel @k() : () -> tensor<4xf32> {
    // expected-error @+1 {{fused.yield value must be a ranked tensor, got f32}}
    fused.yield %v : f32
  }
  func.return %r : tensor<4xf32>
}

// -----

// A value is used after its definition (issue 12 §1): the kernel's result before the kernel.
func.func @use_before_definition(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 (%y) is used before its definition}}
  %z = prim.map(%y) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    prim.yield %a : f32
  }
  %y = fused.kernel @k_copy(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    fused.yield %a : tensor<4xf32>
  }
  func.return %z : tensor<4xf32>
}
