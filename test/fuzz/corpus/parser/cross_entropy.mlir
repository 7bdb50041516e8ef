func.func @cross_entropy(%logits: tensor<?x?x10001xf32>, %targets: tensor<?x?xi64>)
    -> (tensor<f32>, tensor<f32>, tensor<?x?xf32>) {
  %mean = recur.cross_entropy %logits, %targets : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<f32>
  %sum = recur.cross_entropy %logits, %targets reduction<sum> : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<f32>
  %none = recur.cross_entropy %logits, %targets reduction<none> : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
  return %mean, %sum, %none : tensor<f32>, tensor<f32>, tensor<?x?xf32>
}
