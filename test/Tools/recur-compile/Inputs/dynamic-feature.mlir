func.func @forward(%x: tensor<?x?x?xf32> {recur.input = "x"}) -> (tensor<?x?x?xf32> {recur.output = "y"}) {
  %y = recur.log_softmax %x : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}
