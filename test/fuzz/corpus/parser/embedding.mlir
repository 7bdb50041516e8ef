func.func @embedding(%table: tensor<10001x128xf32>, %ids: tensor<?x?xi64>, %flat: tensor<7xi64>)
    -> (tensor<?x?x128xf32>, tensor<7x128xf32>) {
  %0 = recur.embedding %table[%ids] : (tensor<10001x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
  %1 = recur.embedding %table[%flat] : (tensor<10001x128xf32>, tensor<7xi64>) -> tensor<7x128xf32>
  return %0, %1 : tensor<?x?x128xf32>, tensor<7x128xf32>
}
