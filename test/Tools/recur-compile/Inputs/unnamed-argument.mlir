func.func @forward(%ids: tensor<3xi64> {recur.input = "ids"}, %table: tensor<5x2xf32>) -> (tensor<3x2xf32> {recur.output = "x"}) {
  %x = recur.embedding %table[%ids] : (tensor<5x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return %x : tensor<3x2xf32>
}
