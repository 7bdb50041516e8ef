func.func @model_names(%tokens: tensor<2x3xi64> {recur.input = "tokens"},
    %table: tensor<5x4xf32> {recur.weight = "embedding.weight"}) -> (tensor<2x3x4xf32> {recur.output = "x"}) {
  %0 = recur.embedding %table[%tokens] : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
