func.func @forward(%ids: tensor<?x?xi64> {recur.input = "ids"},
                   %big: tensor<11x4xf32> {recur.weight = "big"})
    -> (tensor<3x2x4xf32> {recur.output = "a"}) {
  %a = recur.embedding %big[%ids] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %s = tensor.cast %a : tensor<?x?x4xf32> to tensor<3x2x4xf32>
  return %s : tensor<3x2x4xf32>
}
