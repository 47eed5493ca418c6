// --verify-diagnostics succeeds when every error is expected by an expected-error annotation
// on its line (which gives a part of the message in double braces), and every annotation is met.

// RUN: emmy-opt %s --split-input-file --verify-diagnostics -o %t

// On the line itself, and @+N / @-N lines away.
func.func @same_line(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = prim.reduce add %x axes [3] keepdim init 0.0 : tensor<4x8xf32> -> tensor<4x1xf32> // expected-error {{reduce axis 3 is out of range}}
  func.return %r : tensor<4x1xf32>
}

// -----

func.func @next_line(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'prim.reduce' op reducing axes [0] of shape [4, 8] gives shape [1, 8]}}
  %r = prim.reduce add %x axes [0] keepdim init 0.0 : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}

// -----

func.func @lines_before(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = prim.broadcast %x : tensor<4xf32> -> tensor<8xf32>
  func.return %x : tensor<4xf32>
  // expected-error @-2 {{cannot broadcast shape [4] to [8]}}
}

// -----

// @above is the last line without an annotation, @below the next one.
func.func @above(%x: f32) -> f32 {
  %y = arith.addf %x %x : f32
  // expected-error @above {{Expected ','}}
  func.return %y : f32
}

// -----

// expected-error @below {{unknown op 'prim.nope'}}
%y = prim.nope

// -----

// Without errors there is nothing to expect.
func.func @valid() {
  func.return
}
