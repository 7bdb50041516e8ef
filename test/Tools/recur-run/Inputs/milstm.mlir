// fastrnns' MI-LSTM (input 6, hidden 16) as recur.compile_rnn traces it
// (python/tests/test_fastrnns_cells.py): the gates multiply the input and
// recurrent products (alpha * Wx * Uz + beta_i * Wx + beta_h * Uz + bias).
module {
  func.func @forward(%input: tensor<?x?x6xf32> {recur.input = "input"}, %s0_0: tensor<?x16xf32> {recur.input = "state_l0_0"}, %s0_1: tensor<?x16xf32> {recur.input = "state_l0_1"}, %weight0: tensor<64x6xf32> {recur.weight = "w_ih"}, %weight1: tensor<64x16xf32> {recur.weight = "w_hh"}, %weight2: tensor<64xf32> {recur.weight = "alpha"}, %weight3: tensor<64xf32> {recur.weight = "beta_i"}, %weight4: tensor<64xf32> {recur.weight = "beta_h"}, %weight5: tensor<64xf32> {recur.weight = "bias"}) -> (tensor<?x?x16xf32> {recur.output = "output"}, tensor<?x16xf32> {recur.output = "state_n_l0_0"}, tensor<?x16xf32> {recur.output = "state_n_l0_1"}) {
    %y0, %n0_0, %n0_1 = recur.rnn %input init(%s0_0, %s0_1) captures(%weight0, %weight1, %weight2, %weight3, %weight4, %weight5) : (tensor<?x?x6xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<64x6xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
      ^bb0(%xt: tensor<?x6xf32>, %state0: tensor<?x16xf32>, %state1: tensor<?x16xf32>, %w1: tensor<64x6xf32>, %w3: tensor<64x16xf32>, %w5: tensor<64xf32>, %w18: tensor<64xf32>, %w31: tensor<64xf32>, %w44: tensor<64xf32>):
        %c0 = arith.constant 0 : index
        %B = tensor.dim %xt, %c0 : tensor<?x6xf32>
        %v2 = recur.linear %xt, %w1 : (tensor<?x6xf32>, tensor<64x6xf32>) -> tensor<?x64xf32>
        %v4 = recur.linear %state0, %w3 : (tensor<?x16xf32>, tensor<64x16xf32>) -> tensor<?x64xf32>
        %v6 = tensor.empty(%B) : tensor<?x64xf32>
        %v10 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w5, %v2 : tensor<64xf32>, tensor<?x64xf32>) outs(%v6 : tensor<?x64xf32>) {
        ^bb0(%a7: f32, %a8: f32, %o11: f32):
          %s9 = arith.mulf %a7, %a8 : f32
          linalg.yield %s9 : f32
        } -> tensor<?x64xf32>
        %v12 = tensor.empty(%B) : tensor<?x64xf32>
        %v16 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v10, %v4 : tensor<?x64xf32>, tensor<?x64xf32>) outs(%v12 : tensor<?x64xf32>) {
        ^bb0(%a13: f32, %a14: f32, %o17: f32):
          %s15 = arith.mulf %a13, %a14 : f32
          linalg.yield %s15 : f32
        } -> tensor<?x64xf32>
        %v19 = tensor.empty(%B) : tensor<?x64xf32>
        %v23 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w18, %v2 : tensor<64xf32>, tensor<?x64xf32>) outs(%v19 : tensor<?x64xf32>) {
        ^bb0(%a20: f32, %a21: f32, %o24: f32):
          %s22 = arith.mulf %a20, %a21 : f32
          linalg.yield %s22 : f32
        } -> tensor<?x64xf32>
        %v25 = tensor.empty(%B) : tensor<?x64xf32>
        %v29 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v16, %v23 : tensor<?x64xf32>, tensor<?x64xf32>) outs(%v25 : tensor<?x64xf32>) {
        ^bb0(%a26: f32, %a27: f32, %o30: f32):
          %s28 = arith.addf %a26, %a27 : f32
          linalg.yield %s28 : f32
        } -> tensor<?x64xf32>
        %v32 = tensor.empty(%B) : tensor<?x64xf32>
        %v36 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w31, %v4 : tensor<64xf32>, tensor<?x64xf32>) outs(%v32 : tensor<?x64xf32>) {
        ^bb0(%a33: f32, %a34: f32, %o37: f32):
          %s35 = arith.mulf %a33, %a34 : f32
          linalg.yield %s35 : f32
        } -> tensor<?x64xf32>
        %v38 = tensor.empty(%B) : tensor<?x64xf32>
        %v42 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v29, %v36 : tensor<?x64xf32>, tensor<?x64xf32>) outs(%v38 : tensor<?x64xf32>) {
        ^bb0(%a39: f32, %a40: f32, %o43: f32):
          %s41 = arith.addf %a39, %a40 : f32
          linalg.yield %s41 : f32
        } -> tensor<?x64xf32>
        %v45 = tensor.empty(%B) : tensor<?x64xf32>
        %v49 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v42, %w44 : tensor<?x64xf32>, tensor<64xf32>) outs(%v45 : tensor<?x64xf32>) {
        ^bb0(%a46: f32, %a47: f32, %o50: f32):
          %s48 = arith.addf %a46, %a47 : f32
          linalg.yield %s48 : f32
        } -> tensor<?x64xf32>
        %v51 = tensor.extract_slice %v49[0, 0] [%B, 16] [1, 1] : tensor<?x64xf32> to tensor<?x16xf32>
        %v52 = tensor.extract_slice %v49[0, 16] [%B, 16] [1, 1] : tensor<?x64xf32> to tensor<?x16xf32>
        %v53 = tensor.extract_slice %v49[0, 32] [%B, 16] [1, 1] : tensor<?x64xf32> to tensor<?x16xf32>
        %v54 = tensor.extract_slice %v49[0, 48] [%B, 16] [1, 1] : tensor<?x64xf32> to tensor<?x16xf32>
        %v55 = tensor.empty(%B) : tensor<?x16xf32>
        %v63 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v51 : tensor<?x16xf32>) outs(%v55 : tensor<?x16xf32>) {
        ^bb0(%a56: f32, %o64: f32):
          %s57 = arith.negf %a56 : f32
          %s58 = math.exp %s57 : f32
          %s59 = arith.constant 1.000000000e+00 : f32
          %s60 = arith.constant 1.000000000e+00 : f32
          %s61 = arith.addf %s60, %s58 : f32
          %s62 = arith.divf %s59, %s61 : f32
          linalg.yield %s62 : f32
        } -> tensor<?x16xf32>
        %v65 = tensor.empty(%B) : tensor<?x16xf32>
        %v73 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v52 : tensor<?x16xf32>) outs(%v65 : tensor<?x16xf32>) {
        ^bb0(%a66: f32, %o74: f32):
          %s67 = arith.negf %a66 : f32
          %s68 = math.exp %s67 : f32
          %s69 = arith.constant 1.000000000e+00 : f32
          %s70 = arith.constant 1.000000000e+00 : f32
          %s71 = arith.addf %s70, %s68 : f32
          %s72 = arith.divf %s69, %s71 : f32
          linalg.yield %s72 : f32
        } -> tensor<?x16xf32>
        %v75 = tensor.empty(%B) : tensor<?x16xf32>
        %v78 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v53 : tensor<?x16xf32>) outs(%v75 : tensor<?x16xf32>) {
        ^bb0(%a76: f32, %o79: f32):
          %s77 = math.tanh %a76 : f32
          linalg.yield %s77 : f32
        } -> tensor<?x16xf32>
        %v80 = tensor.empty(%B) : tensor<?x16xf32>
        %v88 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v54 : tensor<?x16xf32>) outs(%v80 : tensor<?x16xf32>) {
        ^bb0(%a81: f32, %o89: f32):
          %s82 = arith.negf %a81 : f32
          %s83 = math.exp %s82 : f32
          %s84 = arith.constant 1.000000000e+00 : f32
          %s85 = arith.constant 1.000000000e+00 : f32
          %s86 = arith.addf %s85, %s83 : f32
          %s87 = arith.divf %s84, %s86 : f32
          linalg.yield %s87 : f32
        } -> tensor<?x16xf32>
        %v90 = tensor.empty(%B) : tensor<?x16xf32>
        %v94 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v73, %state1 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v90 : tensor<?x16xf32>) {
        ^bb0(%a91: f32, %a92: f32, %o95: f32):
          %s93 = arith.mulf %a91, %a92 : f32
          linalg.yield %s93 : f32
        } -> tensor<?x16xf32>
        %v96 = tensor.empty(%B) : tensor<?x16xf32>
        %v100 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v63, %v78 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v96 : tensor<?x16xf32>) {
        ^bb0(%a97: f32, %a98: f32, %o101: f32):
          %s99 = arith.mulf %a97, %a98 : f32
          linalg.yield %s99 : f32
        } -> tensor<?x16xf32>
        %v102 = tensor.empty(%B) : tensor<?x16xf32>
        %v106 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v94, %v100 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v102 : tensor<?x16xf32>) {
        ^bb0(%a103: f32, %a104: f32, %o107: f32):
          %s105 = arith.addf %a103, %a104 : f32
          linalg.yield %s105 : f32
        } -> tensor<?x16xf32>
        %v108 = tensor.empty(%B) : tensor<?x16xf32>
        %v111 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v106 : tensor<?x16xf32>) outs(%v108 : tensor<?x16xf32>) {
        ^bb0(%a109: f32, %o112: f32):
          %s110 = math.tanh %a109 : f32
          linalg.yield %s110 : f32
        } -> tensor<?x16xf32>
        %v113 = tensor.empty(%B) : tensor<?x16xf32>
        %v117 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v88, %v111 : tensor<?x16xf32>, tensor<?x16xf32>) outs(%v113 : tensor<?x16xf32>) {
        ^bb0(%a114: f32, %a115: f32, %o118: f32):
          %s116 = arith.mulf %a114, %a115 : f32
          linalg.yield %s116 : f32
        } -> tensor<?x16xf32>
        recur.yield %v117, %v117, %v106 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
    }
    return %y0, %n0_0, %n0_1 : tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
  }
}
