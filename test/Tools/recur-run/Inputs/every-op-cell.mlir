// python/tests/test_compile_rnn.py's Everything cell (input 5, hidden 7): one
// of each op recur.compile_rnn traces that the LSTM cells do not use (clamp,
// logsigmoid, maximum and minimum, pow, var, a log-sum, sqrt, rsqrt, a layer
// norm without affine, cat and split), as recur.compile_rnn traces it, taking
// each row's length (a packed batch).
module {
  func.func @forward(%input: tensor<?x?x5xf32> {recur.input = "input"}, %lengths: tensor<?xi64> {recur.input = "lengths"}, %s0_0: tensor<?x7xf32> {recur.input = "state_l0_0"}, %weight0: tensor<14x12xf32> {recur.weight = "w"}, %weight1: tensor<14xf32> {recur.weight = "b"}, %weight2: tensor<1x7xf32> {recur.weight = "scale"}) -> (tensor<?x?x7xf32> {recur.output = "output"}, tensor<?x7xf32> {recur.output = "state_n_l0_0"}) {
    %y0, %n0_0 = recur.rnn %input init(%s0_0) captures(%weight0, %weight1, %weight2) lengths(%lengths) : (tensor<?x?x5xf32>, tensor<?x7xf32>, tensor<14x12xf32>, tensor<14xf32>, tensor<1x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
      ^bb0(%xt: tensor<?x5xf32>, %state0: tensor<?x7xf32>, %w4: tensor<14x12xf32>, %w5: tensor<14xf32>, %w135: tensor<1x7xf32>):
        %c0 = arith.constant 0 : index
        %B = tensor.dim %xt, %c0 : tensor<?x5xf32>
        %v1 = tensor.empty(%B) : tensor<?x12xf32>
        %v2 = tensor.insert_slice %xt into %v1[0, 0] [%B, 5] [1, 1] : tensor<?x5xf32> into tensor<?x12xf32>
        %v3 = tensor.insert_slice %state0 into %v2[0, 5] [%B, 7] [1, 1] : tensor<?x7xf32> into tensor<?x12xf32>
        %v6 = recur.linear %v3, %w4 bias(%w5) : (tensor<?x12xf32>, tensor<14x12xf32>, tensor<14xf32>) -> tensor<?x14xf32>
        %v7 = tensor.extract_slice %v6[0, 0] [%B, 7] [1, 1] : tensor<?x14xf32> to tensor<?x7xf32>
        %v8 = tensor.extract_slice %v6[0, 7] [%B, 7] [1, 1] : tensor<?x14xf32> to tensor<?x7xf32>
        %v9 = tensor.empty(%B) : tensor<?x7xf32>
        %v15 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v7 : tensor<?x7xf32>) outs(%v9 : tensor<?x7xf32>) {
        ^bb0(%a10: f32, %o16: f32):
          %s11 = arith.constant -2.000000000e+00 : f32
          %s12 = arith.maximumf %a10, %s11 : f32
          %s13 = arith.constant 2.000000000e+00 : f32
          %s14 = arith.minimumf %s12, %s13 : f32
          linalg.yield %s14 : f32
        } -> tensor<?x7xf32>
        %v17 = tensor.empty(%B) : tensor<?x7xf32>
        %v21 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v15 : tensor<?x7xf32>) outs(%v17 : tensor<?x7xf32>) {
        ^bb0(%a18: f32, %o22: f32):
          %s19 = arith.constant 2.000000000e+00 : f32
          %s20 = arith.divf %a18, %s19 : f32
          linalg.yield %s20 : f32
        } -> tensor<?x7xf32>
        %v23 = tensor.empty(%B) : tensor<?x7xf32>
        %v32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v8 : tensor<?x7xf32>) outs(%v23 : tensor<?x7xf32>) {
        ^bb0(%a24: f32, %o33: f32):
          %s25 = arith.constant 0.000000000e+00 : f32
          %s26 = arith.minimumf %a24, %s25 : f32
          %s27 = math.absf %a24 : f32
          %s28 = arith.negf %s27 : f32
          %s29 = math.exp %s28 : f32
          %s30 = math.log1p %s29 : f32
          %s31 = arith.subf %s26, %s30 : f32
          linalg.yield %s31 : f32
        } -> tensor<?x7xf32>
        %v34 = tensor.empty(%B) : tensor<?x7xf32>
        %v38 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v32 : tensor<?x7xf32>) outs(%v34 : tensor<?x7xf32>) {
        ^bb0(%a35: f32, %o39: f32):
          %s36 = arith.constant 1.000000000e-01 : f32
          %s37 = arith.mulf %a35, %s36 : f32
          linalg.yield %s37 : f32
        } -> tensor<?x7xf32>
        %v40 = tensor.empty(%B) : tensor<?x7xf32>
        %v44 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v21, %v38 : tensor<?x7xf32>, tensor<?x7xf32>) outs(%v40 : tensor<?x7xf32>) {
        ^bb0(%a41: f32, %a42: f32, %o45: f32):
          %s43 = arith.subf %a41, %a42 : f32
          linalg.yield %s43 : f32
        } -> tensor<?x7xf32>
        %v46 = tensor.empty(%B) : tensor<?x7xf32>
        %v50 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v8 : tensor<?x7xf32>) outs(%v46 : tensor<?x7xf32>) {
        ^bb0(%a47: f32, %o51: f32):
          %s48 = arith.constant 0.000000000e+00 : f32
          %s49 = arith.maximumf %a47, %s48 : f32
          linalg.yield %s49 : f32
        } -> tensor<?x7xf32>
        %v52 = tensor.empty(%B) : tensor<?x7xf32>
        %v55 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v44 : tensor<?x7xf32>) outs(%v52 : tensor<?x7xf32>) {
        ^bb0(%a53: f32, %o56: f32):
          %s54 = arith.negf %a53 : f32
          linalg.yield %s54 : f32
        } -> tensor<?x7xf32>
        %v57 = tensor.empty(%B) : tensor<?x7xf32>
        %v61 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v44, %v55 : tensor<?x7xf32>, tensor<?x7xf32>) outs(%v57 : tensor<?x7xf32>) {
        ^bb0(%a58: f32, %a59: f32, %o62: f32):
          %s60 = arith.minimumf %a58, %a59 : f32
          linalg.yield %s60 : f32
        } -> tensor<?x7xf32>
        %v63 = tensor.empty(%B) : tensor<?x7xf32>
        %v67 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v50, %v61 : tensor<?x7xf32>, tensor<?x7xf32>) outs(%v63 : tensor<?x7xf32>) {
        ^bb0(%a64: f32, %a65: f32, %o68: f32):
          %s66 = arith.maximumf %a64, %a65 : f32
          linalg.yield %s66 : f32
        } -> tensor<?x7xf32>
        %v69 = tensor.empty(%B) : tensor<?x7xf32>
        %v72 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v67 : tensor<?x7xf32>) outs(%v69 : tensor<?x7xf32>) {
        ^bb0(%a70: f32, %o73: f32):
          %s71 = arith.mulf %a70, %a70 : f32
          linalg.yield %s71 : f32
        } -> tensor<?x7xf32>
        %v74 = arith.constant 0.0 : f32
        %v75 = tensor.empty(%B) : tensor<?xf32>
        %v76 = linalg.fill ins(%v74 : f32) outs(%v75 : tensor<?xf32>) -> tensor<?xf32>
        %v77 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v44 : tensor<?x7xf32>) outs(%v76 : tensor<?xf32>) {
        ^bb0(%a78: f32, %o79: f32):
          %s80 = arith.addf %a78, %o79 : f32
          linalg.yield %s80 : f32
        } -> tensor<?xf32>
        %v81 = tensor.expand_shape %v77 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v82 = tensor.empty(%B) : tensor<?x1xf32>
        %v86 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v81 : tensor<?x1xf32>) outs(%v82 : tensor<?x1xf32>) {
        ^bb0(%a83: f32, %o87: f32):
          %s84 = arith.constant 1.428571429e-01 : f32
          %s85 = arith.mulf %a83, %s84 : f32
          linalg.yield %s85 : f32
        } -> tensor<?x1xf32>
        %v88 = tensor.collapse_shape %v86 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v89 = tensor.empty(%B) : tensor<?x7xf32>
        %v95 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v44, %v88 : tensor<?x7xf32>, tensor<?xf32>) outs(%v89 : tensor<?x7xf32>) {
        ^bb0(%a90: f32, %a91: f32, %o96: f32):
          %s92 = arith.subf %a90, %a91 : f32
          %s93 = arith.subf %a90, %a91 : f32
          %s94 = arith.mulf %s92, %s93 : f32
          linalg.yield %s94 : f32
        } -> tensor<?x7xf32>
        %v97 = arith.constant 0.0 : f32
        %v98 = tensor.empty(%B) : tensor<?xf32>
        %v99 = linalg.fill ins(%v97 : f32) outs(%v98 : tensor<?xf32>) -> tensor<?xf32>
        %v100 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v95 : tensor<?x7xf32>) outs(%v99 : tensor<?xf32>) {
        ^bb0(%a101: f32, %o102: f32):
          %s103 = arith.addf %a101, %o102 : f32
          linalg.yield %s103 : f32
        } -> tensor<?xf32>
        %v104 = tensor.expand_shape %v100 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v105 = tensor.empty(%B) : tensor<?x1xf32>
        %v109 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v104 : tensor<?x1xf32>) outs(%v105 : tensor<?x1xf32>) {
        ^bb0(%a106: f32, %o110: f32):
          %s107 = arith.constant 1.666666667e-01 : f32
          %s108 = arith.mulf %a106, %s107 : f32
          linalg.yield %s108 : f32
        } -> tensor<?x1xf32>
        %v111 = tensor.empty(%B) : tensor<?x7xf32>
        %v114 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v44 : tensor<?x7xf32>) outs(%v111 : tensor<?x7xf32>) {
        ^bb0(%a112: f32, %o115: f32):
          %s113 = math.exp %a112 : f32
          linalg.yield %s113 : f32
        } -> tensor<?x7xf32>
        %v116 = tensor.empty(%B) : tensor<?x7xf32>
        %v120 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v114 : tensor<?x7xf32>) outs(%v116 : tensor<?x7xf32>) {
        ^bb0(%a117: f32, %o121: f32):
          %s118 = arith.constant 1.000000000e+00 : f32
          %s119 = arith.addf %a117, %s118 : f32
          linalg.yield %s119 : f32
        } -> tensor<?x7xf32>
        %v122 = tensor.empty(%B) : tensor<?x7xf32>
        %v125 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v120 : tensor<?x7xf32>) outs(%v122 : tensor<?x7xf32>) {
        ^bb0(%a123: f32, %o126: f32):
          %s124 = math.log %a123 : f32
          linalg.yield %s124 : f32
        } -> tensor<?x7xf32>
        %v127 = arith.constant 0.0 : f32
        %v128 = tensor.empty(%B) : tensor<?xf32>
        %v129 = linalg.fill ins(%v127 : f32) outs(%v128 : tensor<?xf32>) -> tensor<?xf32>
        %v130 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v125 : tensor<?x7xf32>) outs(%v129 : tensor<?xf32>) {
        ^bb0(%a131: f32, %o132: f32):
          %s133 = arith.addf %a131, %o132 : f32
          linalg.yield %s133 : f32
        } -> tensor<?xf32>
        %v134 = tensor.expand_shape %v130 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v136 = tensor.collapse_shape %w135 [[0, 1]] : tensor<1x7xf32> into tensor<7xf32>
        %v137 = tensor.empty(%B) : tensor<?x7xf32>
        %v141 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v44, %v136 : tensor<?x7xf32>, tensor<7xf32>) outs(%v137 : tensor<?x7xf32>) {
        ^bb0(%a138: f32, %a139: f32, %o142: f32):
          %s140 = arith.mulf %a138, %a139 : f32
          linalg.yield %s140 : f32
        } -> tensor<?x7xf32>
        %v143 = tensor.empty(%B) : tensor<?x1xf32>
        %v147 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v109 : tensor<?x1xf32>) outs(%v143 : tensor<?x1xf32>) {
        ^bb0(%a144: f32, %o148: f32):
          %s145 = arith.constant 1.000000000e+00 : f32
          %s146 = arith.addf %s145, %a144 : f32
          linalg.yield %s146 : f32
        } -> tensor<?x1xf32>
        %v149 = tensor.collapse_shape %v147 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v150 = tensor.empty(%B) : tensor<?x7xf32>
        %v154 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v72, %v149 : tensor<?x7xf32>, tensor<?xf32>) outs(%v150 : tensor<?x7xf32>) {
        ^bb0(%a151: f32, %a152: f32, %o155: f32):
          %s153 = arith.divf %a151, %a152 : f32
          linalg.yield %s153 : f32
        } -> tensor<?x7xf32>
        %v156 = tensor.empty(%B) : tensor<?x7xf32>
        %v160 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v141, %v154 : tensor<?x7xf32>, tensor<?x7xf32>) outs(%v156 : tensor<?x7xf32>) {
        ^bb0(%a157: f32, %a158: f32, %o161: f32):
          %s159 = arith.addf %a157, %a158 : f32
          linalg.yield %s159 : f32
        } -> tensor<?x7xf32>
        %v162 = tensor.empty(%B) : tensor<?x1xf32>
        %v165 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v134 : tensor<?x1xf32>) outs(%v162 : tensor<?x1xf32>) {
        ^bb0(%a163: f32, %o166: f32):
          %s164 = math.sqrt %a163 : f32
          linalg.yield %s164 : f32
        } -> tensor<?x1xf32>
        %v167 = tensor.empty(%B) : tensor<?x1xf32>
        %v171 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v165 : tensor<?x1xf32>) outs(%v167 : tensor<?x1xf32>) {
        ^bb0(%a168: f32, %o172: f32):
          %s169 = arith.constant 1.000000000e-02 : f32
          %s170 = arith.mulf %a168, %s169 : f32
          linalg.yield %s170 : f32
        } -> tensor<?x1xf32>
        %v173 = tensor.collapse_shape %v171 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v174 = tensor.empty(%B) : tensor<?x7xf32>
        %v178 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v160, %v173 : tensor<?x7xf32>, tensor<?xf32>) outs(%v174 : tensor<?x7xf32>) {
        ^bb0(%a175: f32, %a176: f32, %o179: f32):
          %s177 = arith.subf %a175, %a176 : f32
          linalg.yield %s177 : f32
        } -> tensor<?x7xf32>
        %v180 = arith.constant 0.0 : f32
        %v181 = tensor.empty(%B) : tensor<?xf32>
        %v182 = linalg.fill ins(%v180 : f32) outs(%v181 : tensor<?xf32>) -> tensor<?xf32>
        %v183 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v178 : tensor<?x7xf32>) outs(%v182 : tensor<?xf32>) {
        ^bb0(%a184: f32, %o185: f32):
          %s186 = arith.addf %a184, %o185 : f32
          linalg.yield %s186 : f32
        } -> tensor<?xf32>
        %v187 = tensor.expand_shape %v183 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v188 = tensor.empty(%B) : tensor<?x1xf32>
        %v192 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v187 : tensor<?x1xf32>) outs(%v188 : tensor<?x1xf32>) {
        ^bb0(%a189: f32, %o193: f32):
          %s190 = arith.constant 1.428571429e-01 : f32
          %s191 = arith.mulf %a189, %s190 : f32
          linalg.yield %s191 : f32
        } -> tensor<?x1xf32>
        %v194 = arith.constant 0.0 : f32
        %v195 = tensor.empty(%B) : tensor<?xf32>
        %v196 = linalg.fill ins(%v194 : f32) outs(%v195 : tensor<?xf32>) -> tensor<?xf32>
        %v197 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v178 : tensor<?x7xf32>) outs(%v196 : tensor<?xf32>) {
        ^bb0(%a198: f32, %o199: f32):
          %s200 = arith.addf %a198, %o199 : f32
          linalg.yield %s200 : f32
        } -> tensor<?xf32>
        %v201 = tensor.expand_shape %v197 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v202 = tensor.empty(%B) : tensor<?x1xf32>
        %v206 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v201 : tensor<?x1xf32>) outs(%v202 : tensor<?x1xf32>) {
        ^bb0(%a203: f32, %o207: f32):
          %s204 = arith.constant 1.428571429e-01 : f32
          %s205 = arith.mulf %a203, %s204 : f32
          linalg.yield %s205 : f32
        } -> tensor<?x1xf32>
        %v208 = tensor.collapse_shape %v206 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v209 = tensor.empty(%B) : tensor<?x7xf32>
        %v215 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v178, %v208 : tensor<?x7xf32>, tensor<?xf32>) outs(%v209 : tensor<?x7xf32>) {
        ^bb0(%a210: f32, %a211: f32, %o216: f32):
          %s212 = arith.subf %a210, %a211 : f32
          %s213 = arith.subf %a210, %a211 : f32
          %s214 = arith.mulf %s212, %s213 : f32
          linalg.yield %s214 : f32
        } -> tensor<?x7xf32>
        %v217 = arith.constant 0.0 : f32
        %v218 = tensor.empty(%B) : tensor<?xf32>
        %v219 = linalg.fill ins(%v217 : f32) outs(%v218 : tensor<?xf32>) -> tensor<?xf32>
        %v220 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v215 : tensor<?x7xf32>) outs(%v219 : tensor<?xf32>) {
        ^bb0(%a221: f32, %o222: f32):
          %s223 = arith.addf %a221, %o222 : f32
          linalg.yield %s223 : f32
        } -> tensor<?xf32>
        %v224 = tensor.expand_shape %v220 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v225 = tensor.empty(%B) : tensor<?x1xf32>
        %v229 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v224 : tensor<?x1xf32>) outs(%v225 : tensor<?x1xf32>) {
        ^bb0(%a226: f32, %o230: f32):
          %s227 = arith.constant 1.428571429e-01 : f32
          %s228 = arith.mulf %a226, %s227 : f32
          linalg.yield %s228 : f32
        } -> tensor<?x1xf32>
        %v231 = tensor.collapse_shape %v192 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v232 = tensor.collapse_shape %v229 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v233 = tensor.empty(%B) : tensor<?x7xf32>
        %v242 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v178, %v231, %v232 : tensor<?x7xf32>, tensor<?xf32>, tensor<?xf32>) outs(%v233 : tensor<?x7xf32>) {
        ^bb0(%a234: f32, %a235: f32, %a236: f32, %o243: f32):
          %s237 = arith.subf %a234, %a235 : f32
          %s238 = arith.constant 1.000000000e-05 : f32
          %s239 = arith.addf %a236, %s238 : f32
          %s240 = math.rsqrt %s239 : f32
          %s241 = arith.mulf %s237, %s240 : f32
          linalg.yield %s241 : f32
        } -> tensor<?x7xf32>
        %v244 = tensor.empty(%B) : tensor<?x7xf32>
        %v247 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v242 : tensor<?x7xf32>) outs(%v244 : tensor<?x7xf32>) {
        ^bb0(%a245: f32, %o248: f32):
          %s246 = math.tanh %a245 : f32
          linalg.yield %s246 : f32
        } -> tensor<?x7xf32>
        %v249 = tensor.empty(%B) : tensor<?x7xf32>
        %v253 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v72 : tensor<?x7xf32>) outs(%v249 : tensor<?x7xf32>) {
        ^bb0(%a250: f32, %o254: f32):
          %s251 = arith.constant 1.000000000e+00 : f32
          %s252 = arith.addf %s251, %a250 : f32
          linalg.yield %s252 : f32
        } -> tensor<?x7xf32>
        %v255 = tensor.empty(%B) : tensor<?x7xf32>
        %v258 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v253 : tensor<?x7xf32>) outs(%v255 : tensor<?x7xf32>) {
        ^bb0(%a256: f32, %o259: f32):
          %s257 = math.rsqrt %a256 : f32
          linalg.yield %s257 : f32
        } -> tensor<?x7xf32>
        %v260 = tensor.empty(%B) : tensor<?x7xf32>
        %v264 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v247, %v258 : tensor<?x7xf32>, tensor<?x7xf32>) outs(%v260 : tensor<?x7xf32>) {
        ^bb0(%a261: f32, %a262: f32, %o265: f32):
          %s263 = arith.mulf %a261, %a262 : f32
          linalg.yield %s263 : f32
        } -> tensor<?x7xf32>
        %v266 = tensor.empty(%B) : tensor<?x7xf32>
        %v269 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%state0 : tensor<?x7xf32>) outs(%v266 : tensor<?x7xf32>) {
        ^bb0(%a267: f32, %o270: f32):
          %s268 = arith.negf %a267 : f32
          linalg.yield %s268 : f32
        } -> tensor<?x7xf32>
        %v271 = tensor.empty(%B) : tensor<?x7xf32>
        %v275 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v269 : tensor<?x7xf32>) outs(%v271 : tensor<?x7xf32>) {
        ^bb0(%a272: f32, %o276: f32):
          %s273 = arith.constant 5.000000000e-01 : f32
          %s274 = arith.mulf %a272, %s273 : f32
          linalg.yield %s274 : f32
        } -> tensor<?x7xf32>
        %v277 = tensor.empty(%B) : tensor<?x7xf32>
        %v281 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v264, %v275 : tensor<?x7xf32>, tensor<?x7xf32>) outs(%v277 : tensor<?x7xf32>) {
        ^bb0(%a278: f32, %a279: f32, %o282: f32):
          %s280 = arith.subf %a278, %a279 : f32
          linalg.yield %s280 : f32
        } -> tensor<?x7xf32>
        recur.yield %v281, %v281 : tensor<?x7xf32>, tensor<?x7xf32>
    }
    return %y0, %n0_0 : tensor<?x?x7xf32>, tensor<?x7xf32>
  }
}
