func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = prim.reduce add %x axes [3] keepdim init 0.0 : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
