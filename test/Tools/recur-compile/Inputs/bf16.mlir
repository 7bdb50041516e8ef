func.func @forward(%x: tensor<3x4xbf16> {recur.input = "x"}, %w: tensor<5x4xbf16> {recur.weight = "w"}) -> (tensor<3x5xbf16> {recur.output = "y"}) {
  %y = recur.linear %x, %w : (tensor<3x4xbf16>, tensor<5x4xbf16>) -> tensor<3x5xbf16>
  return %y : tensor<3x5xbf16>
}
