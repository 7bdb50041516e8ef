// A peephole LSTM (input 5, hidden 8) as recur.compile_rnn traces it
// (python/tests/test_compile_rnn.py): weights used as x @ W, transposed once
// outside the time loop; the gates read the cell state.
module {
  func.func @forward(%input: tensor<?x?x5xf32> {recur.input = "input"}, %s0_0: tensor<?x8xf32> {recur.input = "state_l0_0"}, %s0_1: tensor<?x8xf32> {recur.input = "state_l0_1"}, %weight0: tensor<5x32xf32> {recur.weight = "w_x"}, %weight1: tensor<8x32xf32> {recur.weight = "w_h"}, %weight2: tensor<32xf32> {recur.weight = "bias"}, %weight3: tensor<8xf32> {recur.weight = "p_i"}, %weight4: tensor<8xf32> {recur.weight = "p_f"}, %weight5: tensor<8xf32> {recur.weight = "p_o"}) -> (tensor<?x?x8xf32> {recur.output = "output"}, tensor<?x8xf32> {recur.output = "state_n_l0_0"}, tensor<?x8xf32> {recur.output = "state_n_l0_1"}) {
    %l0_t0 = recur.transpose %weight0 [1, 0] : tensor<5x32xf32> -> tensor<32x5xf32>
    %l0_t1 = recur.transpose %weight1 [1, 0] : tensor<8x32xf32> -> tensor<32x8xf32>
    %y0, %n0_0, %n0_1 = recur.rnn %input init(%s0_0, %s0_1) captures(%l0_t0, %l0_t1, %weight2, %weight3, %weight4, %weight5) : (tensor<?x?x5xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<32x5xf32>, tensor<32x8xf32>, tensor<32xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
      ^bb0(%xt: tensor<?x5xf32>, %state0: tensor<?x8xf32>, %state1: tensor<?x8xf32>, %w1: tensor<32x5xf32>, %w3: tensor<32x8xf32>, %w11: tensor<32xf32>, %w19: tensor<8xf32>, %w43: tensor<8xf32>, %w91: tensor<8xf32>):
        %c0 = arith.constant 0 : index
        %B = tensor.dim %xt, %c0 : tensor<?x5xf32>
        %v2 = recur.linear %xt, %w1 : (tensor<?x5xf32>, tensor<32x5xf32>) -> tensor<?x32xf32>
        %v4 = recur.linear %state0, %w3 : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
        %v5 = tensor.empty(%B) : tensor<?x32xf32>
        %v9 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v2, %v4 : tensor<?x32xf32>, tensor<?x32xf32>) outs(%v5 : tensor<?x32xf32>) {
        ^bb0(%a6: f32, %a7: f32, %o10: f32):
          %s8 = arith.addf %a6, %a7 : f32
          linalg.yield %s8 : f32
        } -> tensor<?x32xf32>
        %v12 = tensor.empty(%B) : tensor<?x32xf32>
        %v16 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v9, %w11 : tensor<?x32xf32>, tensor<32xf32>) outs(%v12 : tensor<?x32xf32>) {
        ^bb0(%a13: f32, %a14: f32, %o17: f32):
          %s15 = arith.addf %a13, %a14 : f32
          linalg.yield %s15 : f32
        } -> tensor<?x32xf32>
        %v18 = tensor.extract_slice %v16[0, 0] [%B, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
        %v20 = tensor.empty(%B) : tensor<?x8xf32>
        %v24 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w19, %state1 : tensor<8xf32>, tensor<?x8xf32>) outs(%v20 : tensor<?x8xf32>) {
        ^bb0(%a21: f32, %a22: f32, %o25: f32):
          %s23 = arith.mulf %a21, %a22 : f32
          linalg.yield %s23 : f32
        } -> tensor<?x8xf32>
        %v26 = tensor.empty(%B) : tensor<?x8xf32>
        %v30 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v18, %v24 : tensor<?x8xf32>, tensor<?x8xf32>) outs(%v26 : tensor<?x8xf32>) {
        ^bb0(%a27: f32, %a28: f32, %o31: f32):
          %s29 = arith.addf %a27, %a28 : f32
          linalg.yield %s29 : f32
        } -> tensor<?x8xf32>
        %v32 = tensor.empty(%B) : tensor<?x8xf32>
        %v40 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v30 : tensor<?x8xf32>) outs(%v32 : tensor<?x8xf32>) {
        ^bb0(%a33: f32, %o41: f32):
          %s34 = arith.negf %a33 : f32
          %s35 = math.exp %s34 : f32
          %s36 = arith.constant 1.000000000e+00 : f32
          %s37 = arith.constant 1.000000000e+00 : f32
          %s38 = arith.addf %s37, %s35 : f32
          %s39 = arith.divf %s36, %s38 : f32
          linalg.yield %s39 : f32
        } -> tensor<?x8xf32>
        %v42 = tensor.extract_slice %v16[0, 8] [%B, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
        %v44 = tensor.empty(%B) : tensor<?x8xf32>
        %v48 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w43, %state1 : tensor<8xf32>, tensor<?x8xf32>) outs(%v44 : tensor<?x8xf32>) {
        ^bb0(%a45: f32, %a46: f32, %o49: f32):
          %s47 = arith.mulf %a45, %a46 : f32
          linalg.yield %s47 : f32
        } -> tensor<?x8xf32>
        %v50 = tensor.empty(%B) : tensor<?x8xf32>
        %v54 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v42, %v48 : tensor<?x8xf32>, tensor<?x8xf32>) outs(%v50 : tensor<?x8xf32>) {
        ^bb0(%a51: f32, %a52: f32, %o55: f32):
          %s53 = arith.addf %a51, %a52 : f32
          linalg.yield %s53 : f32
        } -> tensor<?x8xf32>
        %v56 = tensor.empty(%B) : tensor<?x8xf32>
        %v64 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v54 : tensor<?x8xf32>) outs(%v56 : tensor<?x8xf32>) {
        ^bb0(%a57: f32, %o65: f32):
          %s58 = arith.negf %a57 : f32
          %s59 = math.exp %s58 : f32
          %s60 = arith.constant 1.000000000e+00 : f32
          %s61 = arith.constant 1.000000000e+00 : f32
          %s62 = arith.addf %s61, %s59 : f32
          %s63 = arith.divf %s60, %s62 : f32
          linalg.yield %s63 : f32
        } -> tensor<?x8xf32>
        %v66 = tensor.extract_slice %v16[0, 16] [%B, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
        %v67 = tensor.empty(%B) : tensor<?x8xf32>
        %v70 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v66 : tensor<?x8xf32>) outs(%v67 : tensor<?x8xf32>) {
        ^bb0(%a68: f32, %o71: f32):
          %s69 = math.tanh %a68 : f32
          linalg.yield %s69 : f32
        } -> tensor<?x8xf32>
        %v72 = tensor.empty(%B) : tensor<?x8xf32>
        %v76 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v64, %state1 : tensor<?x8xf32>, tensor<?x8xf32>) outs(%v72 : tensor<?x8xf32>) {
        ^bb0(%a73: f32, %a74: f32, %o77: f32):
          %s75 = arith.mulf %a73, %a74 : f32
          linalg.yield %s75 : f32
        } -> tensor<?x8xf32>
        %v78 = tensor.empty(%B) : tensor<?x8xf32>
        %v82 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v40, %v70 : tensor<?x8xf32>, tensor<?x8xf32>) outs(%v78 : tensor<?x8xf32>) {
        ^bb0(%a79: f32, %a80: f32, %o83: f32):
          %s81 = arith.mulf %a79, %a80 : f32
          linalg.yield %s81 : f32
        } -> tensor<?x8xf32>
        %v84 = tensor.empty(%B) : tensor<?x8xf32>
        %v88 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v76, %v82 : tensor<?x8xf32>, tensor<?x8xf32>) outs(%v84 : tensor<?x8xf32>) {
        ^bb0(%a85: f32, %a86: f32, %o89: f32):
          %s87 = arith.addf %a85, %a86 : f32
          linalg.yield %s87 : f32
        } -> tensor<?x8xf32>
        %v90 = tensor.extract_slice %v16[0, 24] [%B, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
        %v92 = tensor.empty(%B) : tensor<?x8xf32>
        %v96 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w91, %v88 : tensor<8xf32>, tensor<?x8xf32>) outs(%v92 : tensor<?x8xf32>) {
        ^bb0(%a93: f32, %a94: f32, %o97: f32):
          %s95 = arith.mulf %a93, %a94 : f32
          linalg.yield %s95 : f32
        } -> tensor<?x8xf32>
        %v98 = tensor.empty(%B) : tensor<?x8xf32>
        %v102 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v90, %v96 : tensor<?x8xf32>, tensor<?x8xf32>) outs(%v98 : tensor<?x8xf32>) {
        ^bb0(%a99: f32, %a100: f32, %o103: f32):
          %s101 = arith.addf %a99, %a100 : f32
          linalg.yield %s101 : f32
        } -> tensor<?x8xf32>
        %v104 = tensor.empty(%B) : tensor<?x8xf32>
        %v112 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v102 : tensor<?x8xf32>) outs(%v104 : tensor<?x8xf32>) {
        ^bb0(%a105: f32, %o113: f32):
          %s106 = arith.negf %a105 : f32
          %s107 = math.exp %s106 : f32
          %s108 = arith.constant 1.000000000e+00 : f32
          %s109 = arith.constant 1.000000000e+00 : f32
          %s110 = arith.addf %s109, %s107 : f32
          %s111 = arith.divf %s108, %s110 : f32
          linalg.yield %s111 : f32
        } -> tensor<?x8xf32>
        %v114 = tensor.empty(%B) : tensor<?x8xf32>
        %v117 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v88 : tensor<?x8xf32>) outs(%v114 : tensor<?x8xf32>) {
        ^bb0(%a115: f32, %o118: f32):
          %s116 = math.tanh %a115 : f32
          linalg.yield %s116 : f32
        } -> tensor<?x8xf32>
        %v119 = tensor.empty(%B) : tensor<?x8xf32>
        %v123 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v112, %v117 : tensor<?x8xf32>, tensor<?x8xf32>) outs(%v119 : tensor<?x8xf32>) {
        ^bb0(%a120: f32, %a121: f32, %o124: f32):
          %s122 = arith.mulf %a120, %a121 : f32
          linalg.yield %s122 : f32
        } -> tensor<?x8xf32>
        recur.yield %v123, %v123, %v88 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
    }
    return %y0, %n0_0, %n0_1 : tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
  }
}
