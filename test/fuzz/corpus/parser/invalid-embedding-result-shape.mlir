func.func @embedding_result_shape(%t: tensor<10x8xf32>, %i: tensor<4x2xi64>) {
  %0 = recur.embedding %t[%i] : (tensor<10x8xf32>, tensor<4x2xi64>) -> tensor<4x3x8xf32>
  return
}
