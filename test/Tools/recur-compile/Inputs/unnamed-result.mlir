func.func @forward(%x: tensor<3x4xf32> {recur.input = "x"}) -> tensor<3x4xf32> {
  %y = recur.log_softmax %x : tensor<3x4xf32> -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
