func.func @forward(%big: tensor<11x4xf32> {recur.weight = "big"})
    -> (tensor<1x2x4xf32> {recur.output = "a"}) {
  %ids = arith.constant dense<[[3, 11]]> : tensor<1x2xi64>
  %a = recur.embedding %big[%ids] : (tensor<11x4xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
  return %a : tensor<1x2x4xf32>
}
