// The recur ops' verifiers already reject dynamic weights they use; a weight
// no recur op uses reaches recur-compile's own check.
func.func @forward(%x: tensor<3x4xf32> {recur.input = "x"}, %w: tensor<?x4xf32> {recur.weight = "w"}) -> (tensor<3x4xf32> {recur.output = "y"}) {
  return %x : tensor<3x4xf32>
}
