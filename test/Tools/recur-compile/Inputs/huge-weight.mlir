func.func @forward(%x: tensor<?x?x4xf32> {recur.input = "x"}, %w: tensor<9223372036854775807x4xf32> {recur.weight = "w"})
    -> (tensor<?x?x9223372036854775807xf32> {recur.output = "a"}) {
  %y = recur.linear %x, %w : (tensor<?x?x4xf32>, tensor<9223372036854775807x4xf32>) -> tensor<?x?x9223372036854775807xf32>
  return %y : tensor<?x?x9223372036854775807xf32>
}
