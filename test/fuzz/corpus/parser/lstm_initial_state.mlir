func.func @lstm_initial_state(%x: tensor<1x1x3xf32>, %w_ih: tensor<8x3xf32>, %w_hh: tensor<8x2xf32>,
    %b: tensor<8xf32>, %h0: tensor<1x2xf32>, %c0: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b, %b h0(%h0) c0(%c0)
      : (tensor<1x1x3xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x2xf32>, tensor<1x2xf32>)
      -> (tensor<1x1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>)
  %y2, %h2, %c2 = recur.lstm %x, %w_ih, %w_hh, %b, %b c0(%c)
      : (tensor<1x1x3xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x2xf32>)
      -> (tensor<1x1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>)
  return %h2 : tensor<1x2xf32>
}
