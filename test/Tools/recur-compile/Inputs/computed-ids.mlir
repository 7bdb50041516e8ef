func.func @forward(%ids: tensor<?x?xi64> {recur.input = "ids"},
                   %big: tensor<11x4xf32> {recur.weight = "big"})
    -> (tensor<?x?x4xf32> {recur.output = "a"}) {
  %d = arith.addi %ids, %ids : tensor<?x?xi64>
  %a = recur.embedding %big[%d] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  return %a : tensor<?x?x4xf32>
}
