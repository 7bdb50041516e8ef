func.func @forward(%x: tensor<?x?x4xf32> {recur.input = "x"},
                   %targets: tensor<?x?xi64> {recur.input = "targets"},
                   %w: tensor<9x4xf32> {recur.weight = "proj.weight"})
    -> (tensor<?x?x9xf32> {recur.output = "log_probs"}, tensor<f32> {recur.output = "mean"},
        tensor<f32> {recur.output = "sum"}, tensor<?x?xf32> {recur.output = "per_token"}) {
  %logits = recur.linear %x, %w : (tensor<?x?x4xf32>, tensor<9x4xf32>) -> tensor<?x?x9xf32>
  %lp = recur.log_softmax %logits : tensor<?x?x9xf32> -> tensor<?x?x9xf32>
  %mean = recur.cross_entropy %logits, %targets : (tensor<?x?x9xf32>, tensor<?x?xi64>) -> tensor<f32>
  %sum = recur.cross_entropy %logits, %targets reduction<sum> : (tensor<?x?x9xf32>, tensor<?x?xi64>) -> tensor<f32>
  %none = recur.cross_entropy %logits, %targets reduction<none> : (tensor<?x?x9xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
  return %lp, %mean, %sum, %none : tensor<?x?x9xf32>, tensor<f32>, tensor<f32>, tensor<?x?xf32>
}
