// xLSTM's sLSTM (input 6, hidden 16) as recur.compile_rnn traces it
// (python/tests/test_fastrnns_cells.py): exponential input and forget gates
// with a stabiliser state m; the state is four tensors (h, c, n, m).
module {
  func.func @forward(%input: tensor<?x?x6xf32> {recur.input = "input"}, %s0_0: tensor<?x16xf32> {recur.input = "state_l0_0"}, %s0_1: tensor<?x16xf32> {recur.input = "state_l0_1"}, %s0_2: tensor<?x16xf32> {recur.input = "state_l0_2"}, %s0_3: tensor<?x16xf32> {recur.input = "state_l0_3"}, %weight0: tensor<64x6xf32> {recur.weight = "ih.weight"}, %weight1: tensor<64xf32> {recur.weight = "ih.bias"}, %weight2: tensor<64x16xf32> {recur.weight = "hh.weight"}) -> (tensor<?x?x16xf32> {recur.output = "output"}, tensor<?x16xf32> {recur.output = "state_n_l0_0"}, tensor<?x16xf32> {recur.output = "state_n_l0_1"}, tensor<?x16xf32> {recur.output = "state_n_l0_2"}, tensor<?x16xf32> {recur.output = "state_n_l0_3"}) {
    %y0, %n0_0, %n0_1, %n0_2, %n0_3 = recur.rnn %input init(%s0_0, %s0_1, %s0_2, %s0_3) captures(%weight0, %weight1, %weight2) : (tensor<?x?x6xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<64x6xf32>, tensor<64xf32>, tensor<64x16xf32>) -> (tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
      ^bb0(%xt: tensor<?x6xf32>, %state0: tensor<?x16xf32>, %state1: tensor<?x16xf32>, %state2: tensor<?x16xf32>, %state3: tensor<?x16xf32>, %w1: tensor<64x6xf32>, %w2: tensor<64xf32>, %w4: tensor<64x16xf32>):
        %c0 = arith.constant 0 : index
        %B = tensor.dim %xt, %c0 : tensor<?x6xf32>
        %v3 = recur.linear %xt, %w1 bias(%w2) : (tensor<?x6xf32>, tensor<64x6xf32>, tensor<64xf32>) -> tensor<?x64xf32>
        %v5 = recur.linear %state0, %w4 : (tensor<?x16xf32>, tensor<64x16xf32>) -> tensor<?x64xf32>
        %v6 = tensor.empty(%B) : tensor<?x64xf32>
        %v10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v3, %v5 : tensor<?x64xf32>, tensor<?x64xf32>) outs(%v6 : tensor<?x64xf32>) {
        ^bb0(%a7: f32, %a8: f32, %o11: f32):
          %s9 = arith.addf %a7, %a8 : f32
          linalg.yield %s9 : f32
        } -> tensor<?x64xf32>
        %v12 = tensor.extract_slice %v10[0, 0] [%B, 16] [1, 1] : tensor<?x64xf32> to tensor<?x16xf32>
        %v13 = tensor.extract_slice %v10[0, 16] [%B, 16] [1, 1] : tensor<?x64xf32> to tensor<?x16xf32>
        %v14 = tensor.extract_slice %v10[0, 32] [%B, 16] [1, 1] : tensor<?x64xf32> to tensor<?x16xf32>
        %v15 = tensor.extract_slice %v10[0, 48] [%B, 16] [1, 1] : tensor<?x64xf32> to tensor<?x16xf32>
        %v16 = tensor.empty(%B) : tensor<?x16xf32>
        %v20 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v14, %state3 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v16 : tensor<?x16xf32>) {
        ^bb0(%a17: f32, %a18: f32, %o21: f32):
          %s19 = arith.addf %a17, %a18 : f32
          linalg.yield %s19 : f32
        } -> tensor<?x16xf32>
        %v22 = tensor.empty(%B) : tensor<?x16xf32>
        %v26 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v20, %v13 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v22 : tensor<?x16xf32>) {
        ^bb0(%a23: f32, %a24: f32, %o27: f32):
          %s25 = arith.maximumf %a23, %a24 : f32
          linalg.yield %s25 : f32
        } -> tensor<?x16xf32>
        %v28 = tensor.empty(%B) : tensor<?x16xf32>
        %v32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v13, %v26 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v28 : tensor<?x16xf32>) {
        ^bb0(%a29: f32, %a30: f32, %o33: f32):
          %s31 = arith.subf %a29, %a30 : f32
          linalg.yield %s31 : f32
        } -> tensor<?x16xf32>
        %v34 = tensor.empty(%B) : tensor<?x16xf32>
        %v37 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v32 : tensor<?x16xf32>) outs(%v34 : tensor<?x16xf32>) {
        ^bb0(%a35: f32, %o38: f32):
          %s36 = math.exp %a35 : f32
          linalg.yield %s36 : f32
        } -> tensor<?x16xf32>
        %v39 = tensor.empty(%B) : tensor<?x16xf32>
        %v43 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v14, %state3 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v39 : tensor<?x16xf32>) {
        ^bb0(%a40: f32, %a41: f32, %o44: f32):
          %s42 = arith.addf %a40, %a41 : f32
          linalg.yield %s42 : f32
        } -> tensor<?x16xf32>
        %v45 = tensor.empty(%B) : tensor<?x16xf32>
        %v49 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v43, %v26 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v45 : tensor<?x16xf32>) {
        ^bb0(%a46: f32, %a47: f32, %o50: f32):
          %s48 = arith.subf %a46, %a47 : f32
          linalg.yield %s48 : f32
        } -> tensor<?x16xf32>
        %v51 = tensor.empty(%B) : tensor<?x16xf32>
        %v54 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v49 : tensor<?x16xf32>) outs(%v51 : tensor<?x16xf32>) {
        ^bb0(%a52: f32, %o55: f32):
          %s53 = math.exp %a52 : f32
          linalg.yield %s53 : f32
        } -> tensor<?x16xf32>
        %v56 = tensor.empty(%B) : tensor<?x16xf32>
        %v60 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v54, %state1 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v56 : tensor<?x16xf32>) {
        ^bb0(%a57: f32, %a58: f32, %o61: f32):
          %s59 = arith.mulf %a57, %a58 : f32
          linalg.yield %s59 : f32
        } -> tensor<?x16xf32>
        %v62 = tensor.empty(%B) : tensor<?x16xf32>
        %v65 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v12 : tensor<?x16xf32>) outs(%v62 : tensor<?x16xf32>) {
        ^bb0(%a63: f32, %o66: f32):
          %s64 = math.tanh %a63 : f32
          linalg.yield %s64 : f32
        } -> tensor<?x16xf32>
        %v67 = tensor.empty(%B) : tensor<?x16xf32>
        %v71 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v37, %v65 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v67 : tensor<?x16xf32>) {
        ^bb0(%a68: f32, %a69: f32, %o72: f32):
          %s70 = arith.mulf %a68, %a69 : f32
          linalg.yield %s70 : f32
        } -> tensor<?x16xf32>
        %v73 = tensor.empty(%B) : tensor<?x16xf32>
        %v77 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v60, %v71 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v73 : tensor<?x16xf32>) {
        ^bb0(%a74: f32, %a75: f32, %o78: f32):
          %s76 = arith.addf %a74, %a75 : f32
          linalg.yield %s76 : f32
        } -> tensor<?x16xf32>
        %v79 = tensor.empty(%B) : tensor<?x16xf32>
        %v83 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v54, %state2 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v79 : tensor<?x16xf32>) {
        ^bb0(%a80: f32, %a81: f32, %o84: f32):
          %s82 = arith.mulf %a80, %a81 : f32
          linalg.yield %s82 : f32
        } -> tensor<?x16xf32>
        %v85 = tensor.empty(%B) : tensor<?x16xf32>
        %v89 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v83, %v37 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v85 : tensor<?x16xf32>) {
        ^bb0(%a86: f32, %a87: f32, %o90: f32):
          %s88 = arith.addf %a86, %a87 : f32
          linalg.yield %s88 : f32
        } -> tensor<?x16xf32>
        %v91 = tensor.empty(%B) : tensor<?x16xf32>
        %v99 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v15 : tensor<?x16xf32>) outs(%v91 : tensor<?x16xf32>) {
        ^bb0(%a92: f32, %o100: f32):
          %s93 = arith.negf %a92 : f32
          %s94 = math.exp %s93 : f32
          %s95 = arith.constant 1.000000000e+00 : f32
          %s96 = arith.constant 1.000000000e+00 : f32
          %s97 = arith.addf %s96, %s94 : f32
          %s98 = arith.divf %s95, %s97 : f32
          linalg.yield %s98 : f32
        } -> tensor<?x16xf32>
        %v101 = tensor.empty(%B) : tensor<?x16xf32>
        %v105 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v77, %v89 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v101 : tensor<?x16xf32>) {
        ^bb0(%a102: f32, %a103: f32, %o106: f32):
          %s104 = arith.divf %a102, %a103 : f32
          linalg.yield %s104 : f32
        } -> tensor<?x16xf32>
        %v107 = tensor.empty(%B) : tensor<?x16xf32>
        %v111 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v99, %v105 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v107 : tensor<?x16xf32>) {
        ^bb0(%a108: f32, %a109: f32, %o112: f32):
          %s110 = arith.mulf %a108, %a109 : f32
          linalg.yield %s110 : f32
        } -> tensor<?x16xf32>
        recur.yield %v111, %v111, %v77, %v89, %v26 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
    }
    return %y0, %n0_0, %n0_1, %n0_2, %n0_3 : tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
  }
}
