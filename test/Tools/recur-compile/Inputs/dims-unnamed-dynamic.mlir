func.func @forward(%x: tensor<?x?x3xf32> {recur.input = "X", recur.dims = ["T", "", ""]},
                   %w: tensor<4x3xf32> {recur.weight = "W"},
                   %r: tensor<4x4xf32> {recur.weight = "R"})
    -> (tensor<?x?x4xf32> {recur.output = "Y"}) {
  %y, %h = recur.rnn_tanh %x, %w, %r : (tensor<?x?x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>)
  return %y : tensor<?x?x4xf32>
}
