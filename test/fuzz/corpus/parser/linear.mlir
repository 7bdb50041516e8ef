func.func @linear(%x: tensor<?x?x256xf32>, %w: tensor<10001x256xf32>, %b: tensor<10001xf32>, %v: tensor<256xf16>,
    %wh: tensor<3x256xf16>) -> (tensor<?x?x10001xf32>, tensor<3xf16>) {
  %0 = recur.linear %x, %w bias(%b) : (tensor<?x?x256xf32>, tensor<10001x256xf32>, tensor<10001xf32>) -> tensor<?x?x10001xf32>
  %1 = recur.linear %v, %wh : (tensor<256xf16>, tensor<3x256xf16>) -> tensor<3xf16>
  return %0, %1 : tensor<?x?x10001xf32>, tensor<3xf16>
}
