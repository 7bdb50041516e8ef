func.func @forward(%x: tensor<?x?x3xf32> {recur.input = "x"}, %h0: tensor<?x?xf32> {recur.input = "h0"},
                   %wih: tensor<20x3xf32> {recur.weight = "w_ih"}, %whh: tensor<20x5xf32> {recur.weight = "w_hh"},
                   %b: tensor<20xf32> {recur.weight = "b"}) -> (tensor<?x?x5xf32> {recur.output = "y"}) {
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b h0(%h0)
      : (tensor<?x?x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>, tensor<?x?xf32>)
      -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>)
  return %y : tensor<?x?x5xf32>
}
