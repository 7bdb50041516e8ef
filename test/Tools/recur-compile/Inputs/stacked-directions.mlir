// An ONNX RNN node's outputs as recur-import-onnx writes them: the layer's
// y [T, B, H] stacked over directions as Y [T, D, B, H], h_n as Y_h [D, B, H];
// recur.dims names where T and B are.
func.func @forward(%x: tensor<?x?x3xf32> {recur.input = "X", recur.dims = ["T", "B", ""]},
                   %w: tensor<4x3xf32> {recur.weight = "W"},
                   %r: tensor<4x4xf32> {recur.weight = "R"})
    -> (tensor<?x1x?x4xf32> {recur.output = "Y", recur.dims = ["T", "", "B", ""]},
        tensor<1x?x4xf32> {recur.output = "Y_h", recur.dims = ["", "B", ""]}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.dim %x, %c0 : tensor<?x?x3xf32>
  %b = tensor.dim %x, %c1 : tensor<?x?x3xf32>
  %y, %h = recur.rnn_tanh %x, %w, %r : (tensor<?x?x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>)
  %y4 = tensor.expand_shape %y [[0, 1], [2], [3]] output_shape [%t, 1, %b, 4] : tensor<?x?x4xf32> into tensor<?x1x?x4xf32>
  %h3 = tensor.expand_shape %h [[0, 1], [2]] output_shape [1, %b, 4] : tensor<?x4xf32> into tensor<1x?x4xf32>
  return %y4, %h3 : tensor<?x1x?x4xf32>, tensor<1x?x4xf32>
}
