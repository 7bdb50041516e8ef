func.func @forward(%ids: tensor<?x?xi64> {recur.input = "ids"},
                   %big: tensor<11x4xf32> {recur.weight = "big"},
                   %small: tensor<5x4xf32> {recur.weight = "small"})
    -> (tensor<?x?x4xf32> {recur.output = "a"}, tensor<?x?x4xf32> {recur.output = "b"}) {
  %a = recur.embedding %big[%ids] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %c = tensor.cast %ids : tensor<?x?xi64> to tensor<?x?xi64>
  %b = recur.embedding %small[%c] : (tensor<5x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  return %a, %b : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}
