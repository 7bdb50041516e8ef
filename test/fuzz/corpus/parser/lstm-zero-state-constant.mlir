func.func @lstm_drops_zero_initial_state(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>,
    %b: tensor<16xf32>, %h0: tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x4xf32>) {
  %zero = arith.constant dense<0.0> : tensor<2x4xf32>
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b h0(%zero) c0(%zero)
      : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  %y2, %h2, %c2 = recur.lstm %x, %wih, %whh, %b, %b h0(%h0) c0(%zero)
      : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y, %y2 : tensor<3x2x4xf32>, tensor<3x2x4xf32>
}
