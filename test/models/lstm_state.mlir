// Initial states as inputs, and all three LSTM results as outputs: the
// runtime's multi-result ABI and the [B, H] batch-major dims. Used by the CPU
// numerics tests and the GPU suite (test/gpu/build-suite.sh).
func.func @forward(%x: tensor<?x?x3xf32> {recur.input = "x"},
                   %h0: tensor<?x5xf32> {recur.input = "h0"},
                   %c0: tensor<?x5xf32> {recur.input = "c0"},
                   %wih: tensor<20x3xf32> {recur.weight = "weight_ih_l0"},
                   %whh: tensor<20x5xf32> {recur.weight = "weight_hh_l0"},
                   %bih: tensor<20xf32> {recur.weight = "bias_ih_l0"},
                   %bhh: tensor<20xf32> {recur.weight = "bias_hh_l0"})
    -> (tensor<?x?x5xf32> {recur.output = "y"}, tensor<?x5xf32> {recur.output = "h_n"},
        tensor<?x5xf32> {recur.output = "c_n"}) {
  %y, %h, %c = recur.lstm %x, %wih, %whh, %bih, %bhh h0(%h0) c0(%c0)
      : (tensor<?x?x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>,
         tensor<?x5xf32>, tensor<?x5xf32>) -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>)
  return %y, %h, %c : tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>
}
