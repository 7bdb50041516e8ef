module {
  func.func @forward(%arg0: tensor<?x?xi64> {recur.input = "tokens"}, %arg1: tensor<11x4xf32> {recur.weight = "embedding.weight"}, %arg2: tensor<20x4xf32> {recur.weight = "lstm.weight_ih_l0"}, %arg3: tensor<20x5xf32> {recur.weight = "lstm.weight_hh_l0"}, %arg4: tensor<20xf32> {recur.weight = "lstm.bias_ih_l0"}, %arg5: tensor<20xf32> {recur.weight = "lstm.bias_hh_l0"}, %arg6: tensor<11x5xf32> {recur.weight = "proj.weight"}, %arg7: tensor<11xf32> {recur.weight = "proj.bias"}) -> (tensor<?x?x11xf32> {recur.output = "logits"}) {
    %0 = recur.embedding %arg1[%arg0] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
    %y, %h_n, %c_n = recur.lstm %0, %arg2, %arg3, %arg4, %arg5 : (tensor<?x?x4xf32>, tensor<20x4xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>) -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>)
    %1 = recur.linear %y, %arg6 bias(%arg7) : (tensor<?x?x5xf32>, tensor<11x5xf32>, tensor<11xf32>) -> tensor<?x?x11xf32>
    return %1 : tensor<?x?x11xf32>
  }
}

