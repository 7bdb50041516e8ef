func.func @forward(%x: tensor<?x?x9xf32> {recur.input = "x"},
                   %targets: tensor<?x?xi64> {recur.input = "targets"})
    -> (tensor<f32> {recur.output = "loss"}) {
  %t = tensor.cast %targets : tensor<?x?xi64> to tensor<?x?xi64>
  %loss = recur.cross_entropy %x, %t : (tensor<?x?x9xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}
