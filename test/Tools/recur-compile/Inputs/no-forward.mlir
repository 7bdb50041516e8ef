func.func @main(%x: tensor<3x4xf32> {recur.input = "x"}) -> (tensor<3x4xf32> {recur.output = "y"}) {
  return %x : tensor<3x4xf32>
}
