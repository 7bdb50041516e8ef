// python/tests/test_compile_rnn.py's ElmanCell (input 5, hidden 7): a learned
// per-unit leak, (1 - leak) computed from a parameter in the cell, as
// recur.compile_rnn traces it, taking each row's length (a packed batch).
module {
  func.func @forward(%input: tensor<?x?x5xf32> {recur.input = "input"}, %lengths: tensor<?xi64> {recur.input = "lengths"}, %s0_0: tensor<?x7xf32> {recur.input = "state_l0_0"}, %weight0: tensor<7xf32> {recur.weight = "leak"}, %weight1: tensor<7x5xf32> {recur.weight = "ih.weight"}, %weight2: tensor<7xf32> {recur.weight = "ih.bias"}, %weight3: tensor<7x7xf32> {recur.weight = "hh.weight"}) -> (tensor<?x?x7xf32> {recur.output = "output"}, tensor<?x7xf32> {recur.output = "state_n_l0_0"}) {
    %y0, %n0_0 = recur.rnn %input init(%s0_0) captures(%weight0, %weight1, %weight2, %weight3) lengths(%lengths) : (tensor<?x?x5xf32>, tensor<?x7xf32>, tensor<7xf32>, tensor<7x5xf32>, tensor<7xf32>, tensor<7x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
      ^bb0(%xt: tensor<?x5xf32>, %state0: tensor<?x7xf32>, %w1: tensor<7xf32>, %w14: tensor<7x5xf32>, %w15: tensor<7xf32>, %w17: tensor<7x7xf32>):
        %c0 = arith.constant 0 : index
        %B = tensor.dim %xt, %c0 : tensor<?x5xf32>
        %v2 = tensor.empty(%B) : tensor<?x7xf32>
        %v6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w1, %state0 : tensor<7xf32>, tensor<?x7xf32>) outs(%v2 : tensor<?x7xf32>) {
        ^bb0(%a3: f32, %a4: f32, %o7: f32):
          %s5 = arith.mulf %a3, %a4 : f32
          linalg.yield %s5 : f32
        } -> tensor<?x7xf32>
        %v8 = tensor.empty() : tensor<7xf32>
        %v12 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%w1 : tensor<7xf32>) outs(%v8 : tensor<7xf32>) {
        ^bb0(%a9: f32, %o13: f32):
          %s10 = arith.constant 1.000000000e+00 : f32
          %s11 = arith.subf %s10, %a9 : f32
          linalg.yield %s11 : f32
        } -> tensor<7xf32>
        %v16 = recur.linear %xt, %w14 bias(%w15) : (tensor<?x5xf32>, tensor<7x5xf32>, tensor<7xf32>) -> tensor<?x7xf32>
        %v18 = recur.linear %state0, %w17 : (tensor<?x7xf32>, tensor<7x7xf32>) -> tensor<?x7xf32>
        %v19 = tensor.empty(%B) : tensor<?x7xf32>
        %v23 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v16, %v18 : tensor<?x7xf32>, tensor<?x7xf32>) outs(%v19 : tensor<?x7xf32>) {
        ^bb0(%a20: f32, %a21: f32, %o24: f32):
          %s22 = arith.addf %a20, %a21 : f32
          linalg.yield %s22 : f32
        } -> tensor<?x7xf32>
        %v25 = tensor.empty(%B) : tensor<?x7xf32>
        %v28 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v23 : tensor<?x7xf32>) outs(%v25 : tensor<?x7xf32>) {
        ^bb0(%a26: f32, %o29: f32):
          %s27 = math.tanh %a26 : f32
          linalg.yield %s27 : f32
        } -> tensor<?x7xf32>
        %v30 = tensor.empty(%B) : tensor<?x7xf32>
        %v34 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v12, %v28 : tensor<7xf32>, tensor<?x7xf32>) outs(%v30 : tensor<?x7xf32>) {
        ^bb0(%a31: f32, %a32: f32, %o35: f32):
          %s33 = arith.mulf %a31, %a32 : f32
          linalg.yield %s33 : f32
        } -> tensor<?x7xf32>
        %v36 = tensor.empty(%B) : tensor<?x7xf32>
        %v40 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v6, %v34 : tensor<?x7xf32>, tensor<?x7xf32>) outs(%v36 : tensor<?x7xf32>) {
        ^bb0(%a37: f32, %a38: f32, %o41: f32):
          %s39 = arith.addf %a37, %a38 : f32
          linalg.yield %s39 : f32
        } -> tensor<?x7xf32>
        recur.yield %v40, %v40 : tensor<?x7xf32>, tensor<?x7xf32>
    }
    return %y0, %n0_0 : tensor<?x?x7xf32>, tensor<?x7xf32>
  }
}
