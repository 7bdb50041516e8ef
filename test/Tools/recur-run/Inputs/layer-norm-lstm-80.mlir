// fastrnns' LayerNormLSTMCell (input 80, hidden 80) as recur.compile_rnn
// traces it (python/tests/test_compile_rnn.py): rows of 320 gates, more
// than a GPU block's 256 threads, for the row groups' sums across warps.
module {
  func.func @forward(%input: tensor<?x?x80xf32> {recur.input = "input"}, %s0_0: tensor<?x80xf32> {recur.input = "state_l0_0"}, %s0_1: tensor<?x80xf32> {recur.input = "state_l0_1"}, %weight0: tensor<320x80xf32> {recur.weight = "weight_ih"}, %weight1: tensor<320xf32> {recur.weight = "layernorm_i.weight"}, %weight2: tensor<320xf32> {recur.weight = "layernorm_i.bias"}, %weight3: tensor<320x80xf32> {recur.weight = "weight_hh"}, %weight4: tensor<320xf32> {recur.weight = "layernorm_h.weight"}, %weight5: tensor<320xf32> {recur.weight = "layernorm_h.bias"}, %weight6: tensor<80xf32> {recur.weight = "layernorm_c.weight"}, %weight7: tensor<80xf32> {recur.weight = "layernorm_c.bias"}) -> (tensor<?x?x80xf32> {recur.output = "output"}, tensor<?x80xf32> {recur.output = "state_n_l0_0"}, tensor<?x80xf32> {recur.output = "state_n_l0_1"}) {
    %y0, %n0_0, %n0_1 = recur.rnn %input init(%s0_0, %s0_1) captures(%weight0, %weight1, %weight2, %weight3, %weight4, %weight5, %weight6, %weight7) : (tensor<?x?x80xf32>, tensor<?x80xf32>, tensor<?x80xf32>, tensor<320x80xf32>, tensor<320xf32>, tensor<320xf32>, tensor<320x80xf32>, tensor<320xf32>, tensor<320xf32>, tensor<80xf32>, tensor<80xf32>) -> (tensor<?x?x80xf32>, tensor<?x80xf32>, tensor<?x80xf32>) {
      ^bb0(%xt: tensor<?x80xf32>, %state0: tensor<?x80xf32>, %state1: tensor<?x80xf32>, %w1: tensor<320x80xf32>, %w54: tensor<320xf32>, %w55: tensor<320xf32>, %w73: tensor<320x80xf32>, %w126: tensor<320xf32>, %w127: tensor<320xf32>, %w259: tensor<80xf32>, %w260: tensor<80xf32>):
        %c0 = arith.constant 0 : index
        %B = tensor.dim %xt, %c0 : tensor<?x80xf32>
        %v2 = recur.linear %xt, %w1 : (tensor<?x80xf32>, tensor<320x80xf32>) -> tensor<?x320xf32>
        %v3 = arith.constant 0.0 : f32
        %v4 = tensor.empty(%B) : tensor<?xf32>
        %v5 = linalg.fill ins(%v3 : f32) outs(%v4 : tensor<?xf32>) -> tensor<?xf32>
        %v6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v2 : tensor<?x320xf32>) outs(%v5 : tensor<?xf32>) {
        ^bb0(%a7: f32, %o8: f32):
          %s9 = arith.addf %a7, %o8 : f32
          linalg.yield %s9 : f32
        } -> tensor<?xf32>
        %v10 = tensor.expand_shape %v6 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v11 = tensor.empty(%B) : tensor<?x1xf32>
        %v15 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v10 : tensor<?x1xf32>) outs(%v11 : tensor<?x1xf32>) {
        ^bb0(%a12: f32, %o16: f32):
          %s13 = arith.constant 3.125000000e-03 : f32
          %s14 = arith.mulf %a12, %s13 : f32
          linalg.yield %s14 : f32
        } -> tensor<?x1xf32>
        %v17 = arith.constant 0.0 : f32
        %v18 = tensor.empty(%B) : tensor<?xf32>
        %v19 = linalg.fill ins(%v17 : f32) outs(%v18 : tensor<?xf32>) -> tensor<?xf32>
        %v20 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v2 : tensor<?x320xf32>) outs(%v19 : tensor<?xf32>) {
        ^bb0(%a21: f32, %o22: f32):
          %s23 = arith.addf %a21, %o22 : f32
          linalg.yield %s23 : f32
        } -> tensor<?xf32>
        %v24 = tensor.expand_shape %v20 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v25 = tensor.empty(%B) : tensor<?x1xf32>
        %v29 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v24 : tensor<?x1xf32>) outs(%v25 : tensor<?x1xf32>) {
        ^bb0(%a26: f32, %o30: f32):
          %s27 = arith.constant 3.125000000e-03 : f32
          %s28 = arith.mulf %a26, %s27 : f32
          linalg.yield %s28 : f32
        } -> tensor<?x1xf32>
        %v31 = tensor.collapse_shape %v29 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v32 = tensor.empty(%B) : tensor<?x320xf32>
        %v38 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v2, %v31 : tensor<?x320xf32>, tensor<?xf32>) outs(%v32 : tensor<?x320xf32>) {
        ^bb0(%a33: f32, %a34: f32, %o39: f32):
          %s35 = arith.subf %a33, %a34 : f32
          %s36 = arith.subf %a33, %a34 : f32
          %s37 = arith.mulf %s35, %s36 : f32
          linalg.yield %s37 : f32
        } -> tensor<?x320xf32>
        %v40 = arith.constant 0.0 : f32
        %v41 = tensor.empty(%B) : tensor<?xf32>
        %v42 = linalg.fill ins(%v40 : f32) outs(%v41 : tensor<?xf32>) -> tensor<?xf32>
        %v43 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v38 : tensor<?x320xf32>) outs(%v42 : tensor<?xf32>) {
        ^bb0(%a44: f32, %o45: f32):
          %s46 = arith.addf %a44, %o45 : f32
          linalg.yield %s46 : f32
        } -> tensor<?xf32>
        %v47 = tensor.expand_shape %v43 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v48 = tensor.empty(%B) : tensor<?x1xf32>
        %v52 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v47 : tensor<?x1xf32>) outs(%v48 : tensor<?x1xf32>) {
        ^bb0(%a49: f32, %o53: f32):
          %s50 = arith.constant 3.125000000e-03 : f32
          %s51 = arith.mulf %a49, %s50 : f32
          linalg.yield %s51 : f32
        } -> tensor<?x1xf32>
        %v56 = tensor.collapse_shape %v15 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v57 = tensor.collapse_shape %v52 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v58 = tensor.empty(%B) : tensor<?x320xf32>
        %v71 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v2, %v56, %v57, %w54, %w55 : tensor<?x320xf32>, tensor<?xf32>, tensor<?xf32>, tensor<320xf32>, tensor<320xf32>) outs(%v58 : tensor<?x320xf32>) {
        ^bb0(%a59: f32, %a60: f32, %a61: f32, %a62: f32, %a63: f32, %o72: f32):
          %s64 = arith.subf %a59, %a60 : f32
          %s65 = arith.constant 1.000000000e-05 : f32
          %s66 = arith.addf %a61, %s65 : f32
          %s67 = math.rsqrt %s66 : f32
          %s68 = arith.mulf %s64, %s67 : f32
          %s69 = arith.mulf %s68, %a62 : f32
          %s70 = arith.addf %s69, %a63 : f32
          linalg.yield %s70 : f32
        } -> tensor<?x320xf32>
        %v74 = recur.linear %state0, %w73 : (tensor<?x80xf32>, tensor<320x80xf32>) -> tensor<?x320xf32>
        %v75 = arith.constant 0.0 : f32
        %v76 = tensor.empty(%B) : tensor<?xf32>
        %v77 = linalg.fill ins(%v75 : f32) outs(%v76 : tensor<?xf32>) -> tensor<?xf32>
        %v78 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v74 : tensor<?x320xf32>) outs(%v77 : tensor<?xf32>) {
        ^bb0(%a79: f32, %o80: f32):
          %s81 = arith.addf %a79, %o80 : f32
          linalg.yield %s81 : f32
        } -> tensor<?xf32>
        %v82 = tensor.expand_shape %v78 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v83 = tensor.empty(%B) : tensor<?x1xf32>
        %v87 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v82 : tensor<?x1xf32>) outs(%v83 : tensor<?x1xf32>) {
        ^bb0(%a84: f32, %o88: f32):
          %s85 = arith.constant 3.125000000e-03 : f32
          %s86 = arith.mulf %a84, %s85 : f32
          linalg.yield %s86 : f32
        } -> tensor<?x1xf32>
        %v89 = arith.constant 0.0 : f32
        %v90 = tensor.empty(%B) : tensor<?xf32>
        %v91 = linalg.fill ins(%v89 : f32) outs(%v90 : tensor<?xf32>) -> tensor<?xf32>
        %v92 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v74 : tensor<?x320xf32>) outs(%v91 : tensor<?xf32>) {
        ^bb0(%a93: f32, %o94: f32):
          %s95 = arith.addf %a93, %o94 : f32
          linalg.yield %s95 : f32
        } -> tensor<?xf32>
        %v96 = tensor.expand_shape %v92 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v97 = tensor.empty(%B) : tensor<?x1xf32>
        %v101 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v96 : tensor<?x1xf32>) outs(%v97 : tensor<?x1xf32>) {
        ^bb0(%a98: f32, %o102: f32):
          %s99 = arith.constant 3.125000000e-03 : f32
          %s100 = arith.mulf %a98, %s99 : f32
          linalg.yield %s100 : f32
        } -> tensor<?x1xf32>
        %v103 = tensor.collapse_shape %v101 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v104 = tensor.empty(%B) : tensor<?x320xf32>
        %v110 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v74, %v103 : tensor<?x320xf32>, tensor<?xf32>) outs(%v104 : tensor<?x320xf32>) {
        ^bb0(%a105: f32, %a106: f32, %o111: f32):
          %s107 = arith.subf %a105, %a106 : f32
          %s108 = arith.subf %a105, %a106 : f32
          %s109 = arith.mulf %s107, %s108 : f32
          linalg.yield %s109 : f32
        } -> tensor<?x320xf32>
        %v112 = arith.constant 0.0 : f32
        %v113 = tensor.empty(%B) : tensor<?xf32>
        %v114 = linalg.fill ins(%v112 : f32) outs(%v113 : tensor<?xf32>) -> tensor<?xf32>
        %v115 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v110 : tensor<?x320xf32>) outs(%v114 : tensor<?xf32>) {
        ^bb0(%a116: f32, %o117: f32):
          %s118 = arith.addf %a116, %o117 : f32
          linalg.yield %s118 : f32
        } -> tensor<?xf32>
        %v119 = tensor.expand_shape %v115 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v120 = tensor.empty(%B) : tensor<?x1xf32>
        %v124 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v119 : tensor<?x1xf32>) outs(%v120 : tensor<?x1xf32>) {
        ^bb0(%a121: f32, %o125: f32):
          %s122 = arith.constant 3.125000000e-03 : f32
          %s123 = arith.mulf %a121, %s122 : f32
          linalg.yield %s123 : f32
        } -> tensor<?x1xf32>
        %v128 = tensor.collapse_shape %v87 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v129 = tensor.collapse_shape %v124 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v130 = tensor.empty(%B) : tensor<?x320xf32>
        %v143 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v74, %v128, %v129, %w126, %w127 : tensor<?x320xf32>, tensor<?xf32>, tensor<?xf32>, tensor<320xf32>, tensor<320xf32>) outs(%v130 : tensor<?x320xf32>) {
        ^bb0(%a131: f32, %a132: f32, %a133: f32, %a134: f32, %a135: f32, %o144: f32):
          %s136 = arith.subf %a131, %a132 : f32
          %s137 = arith.constant 1.000000000e-05 : f32
          %s138 = arith.addf %a133, %s137 : f32
          %s139 = math.rsqrt %s138 : f32
          %s140 = arith.mulf %s136, %s139 : f32
          %s141 = arith.mulf %s140, %a134 : f32
          %s142 = arith.addf %s141, %a135 : f32
          linalg.yield %s142 : f32
        } -> tensor<?x320xf32>
        %v145 = tensor.empty(%B) : tensor<?x320xf32>
        %v149 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v71, %v143 : tensor<?x320xf32>, tensor<?x320xf32>) outs(%v145 : tensor<?x320xf32>) {
        ^bb0(%a146: f32, %a147: f32, %o150: f32):
          %s148 = arith.addf %a146, %a147 : f32
          linalg.yield %s148 : f32
        } -> tensor<?x320xf32>
        %v151 = tensor.extract_slice %v149[0, 0] [%B, 80] [1, 1] : tensor<?x320xf32> to tensor<?x80xf32>
        %v152 = tensor.extract_slice %v149[0, 80] [%B, 80] [1, 1] : tensor<?x320xf32> to tensor<?x80xf32>
        %v153 = tensor.extract_slice %v149[0, 160] [%B, 80] [1, 1] : tensor<?x320xf32> to tensor<?x80xf32>
        %v154 = tensor.extract_slice %v149[0, 240] [%B, 80] [1, 1] : tensor<?x320xf32> to tensor<?x80xf32>
        %v155 = tensor.empty(%B) : tensor<?x80xf32>
        %v163 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v151 : tensor<?x80xf32>) outs(%v155 : tensor<?x80xf32>) {
        ^bb0(%a156: f32, %o164: f32):
          %s157 = arith.negf %a156 : f32
          %s158 = math.exp %s157 : f32
          %s159 = arith.constant 1.000000000e+00 : f32
          %s160 = arith.constant 1.000000000e+00 : f32
          %s161 = arith.addf %s160, %s158 : f32
          %s162 = arith.divf %s159, %s161 : f32
          linalg.yield %s162 : f32
        } -> tensor<?x80xf32>
        %v165 = tensor.empty(%B) : tensor<?x80xf32>
        %v173 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v152 : tensor<?x80xf32>) outs(%v165 : tensor<?x80xf32>) {
        ^bb0(%a166: f32, %o174: f32):
          %s167 = arith.negf %a166 : f32
          %s168 = math.exp %s167 : f32
          %s169 = arith.constant 1.000000000e+00 : f32
          %s170 = arith.constant 1.000000000e+00 : f32
          %s171 = arith.addf %s170, %s168 : f32
          %s172 = arith.divf %s169, %s171 : f32
          linalg.yield %s172 : f32
        } -> tensor<?x80xf32>
        %v175 = tensor.empty(%B) : tensor<?x80xf32>
        %v178 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v153 : tensor<?x80xf32>) outs(%v175 : tensor<?x80xf32>) {
        ^bb0(%a176: f32, %o179: f32):
          %s177 = math.tanh %a176 : f32
          linalg.yield %s177 : f32
        } -> tensor<?x80xf32>
        %v180 = tensor.empty(%B) : tensor<?x80xf32>
        %v188 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v154 : tensor<?x80xf32>) outs(%v180 : tensor<?x80xf32>) {
        ^bb0(%a181: f32, %o189: f32):
          %s182 = arith.negf %a181 : f32
          %s183 = math.exp %s182 : f32
          %s184 = arith.constant 1.000000000e+00 : f32
          %s185 = arith.constant 1.000000000e+00 : f32
          %s186 = arith.addf %s185, %s183 : f32
          %s187 = arith.divf %s184, %s186 : f32
          linalg.yield %s187 : f32
        } -> tensor<?x80xf32>
        %v190 = tensor.empty(%B) : tensor<?x80xf32>
        %v194 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v173, %state1 : tensor<?x80xf32>, tensor<?x80xf32>) outs(%v190 : tensor<?x80xf32>) {
        ^bb0(%a191: f32, %a192: f32, %o195: f32):
          %s193 = arith.mulf %a191, %a192 : f32
          linalg.yield %s193 : f32
        } -> tensor<?x80xf32>
        %v196 = tensor.empty(%B) : tensor<?x80xf32>
        %v200 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v163, %v178 : tensor<?x80xf32>, tensor<?x80xf32>) outs(%v196 : tensor<?x80xf32>) {
        ^bb0(%a197: f32, %a198: f32, %o201: f32):
          %s199 = arith.mulf %a197, %a198 : f32
          linalg.yield %s199 : f32
        } -> tensor<?x80xf32>
        %v202 = tensor.empty(%B) : tensor<?x80xf32>
        %v206 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v194, %v200 : tensor<?x80xf32>, tensor<?x80xf32>) outs(%v202 : tensor<?x80xf32>) {
        ^bb0(%a203: f32, %a204: f32, %o207: f32):
          %s205 = arith.addf %a203, %a204 : f32
          linalg.yield %s205 : f32
        } -> tensor<?x80xf32>
        %v208 = arith.constant 0.0 : f32
        %v209 = tensor.empty(%B) : tensor<?xf32>
        %v210 = linalg.fill ins(%v208 : f32) outs(%v209 : tensor<?xf32>) -> tensor<?xf32>
        %v211 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v206 : tensor<?x80xf32>) outs(%v210 : tensor<?xf32>) {
        ^bb0(%a212: f32, %o213: f32):
          %s214 = arith.addf %a212, %o213 : f32
          linalg.yield %s214 : f32
        } -> tensor<?xf32>
        %v215 = tensor.expand_shape %v211 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v216 = tensor.empty(%B) : tensor<?x1xf32>
        %v220 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v215 : tensor<?x1xf32>) outs(%v216 : tensor<?x1xf32>) {
        ^bb0(%a217: f32, %o221: f32):
          %s218 = arith.constant 1.250000000e-02 : f32
          %s219 = arith.mulf %a217, %s218 : f32
          linalg.yield %s219 : f32
        } -> tensor<?x1xf32>
        %v222 = arith.constant 0.0 : f32
        %v223 = tensor.empty(%B) : tensor<?xf32>
        %v224 = linalg.fill ins(%v222 : f32) outs(%v223 : tensor<?xf32>) -> tensor<?xf32>
        %v225 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v206 : tensor<?x80xf32>) outs(%v224 : tensor<?xf32>) {
        ^bb0(%a226: f32, %o227: f32):
          %s228 = arith.addf %a226, %o227 : f32
          linalg.yield %s228 : f32
        } -> tensor<?xf32>
        %v229 = tensor.expand_shape %v225 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v230 = tensor.empty(%B) : tensor<?x1xf32>
        %v234 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v229 : tensor<?x1xf32>) outs(%v230 : tensor<?x1xf32>) {
        ^bb0(%a231: f32, %o235: f32):
          %s232 = arith.constant 1.250000000e-02 : f32
          %s233 = arith.mulf %a231, %s232 : f32
          linalg.yield %s233 : f32
        } -> tensor<?x1xf32>
        %v236 = tensor.collapse_shape %v234 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v237 = tensor.empty(%B) : tensor<?x80xf32>
        %v243 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v206, %v236 : tensor<?x80xf32>, tensor<?xf32>) outs(%v237 : tensor<?x80xf32>) {
        ^bb0(%a238: f32, %a239: f32, %o244: f32):
          %s240 = arith.subf %a238, %a239 : f32
          %s241 = arith.subf %a238, %a239 : f32
          %s242 = arith.mulf %s240, %s241 : f32
          linalg.yield %s242 : f32
        } -> tensor<?x80xf32>
        %v245 = arith.constant 0.0 : f32
        %v246 = tensor.empty(%B) : tensor<?xf32>
        %v247 = linalg.fill ins(%v245 : f32) outs(%v246 : tensor<?xf32>) -> tensor<?xf32>
        %v248 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%v243 : tensor<?x80xf32>) outs(%v247 : tensor<?xf32>) {
        ^bb0(%a249: f32, %o250: f32):
          %s251 = arith.addf %a249, %o250 : f32
          linalg.yield %s251 : f32
        } -> tensor<?xf32>
        %v252 = tensor.expand_shape %v248 [[0, 1]] output_shape [%B, 1] : tensor<?xf32> into tensor<?x1xf32>
        %v253 = tensor.empty(%B) : tensor<?x1xf32>
        %v257 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v252 : tensor<?x1xf32>) outs(%v253 : tensor<?x1xf32>) {
        ^bb0(%a254: f32, %o258: f32):
          %s255 = arith.constant 1.250000000e-02 : f32
          %s256 = arith.mulf %a254, %s255 : f32
          linalg.yield %s256 : f32
        } -> tensor<?x1xf32>
        %v261 = tensor.collapse_shape %v220 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v262 = tensor.collapse_shape %v257 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
        %v263 = tensor.empty(%B) : tensor<?x80xf32>
        %v276 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v206, %v261, %v262, %w259, %w260 : tensor<?x80xf32>, tensor<?xf32>, tensor<?xf32>, tensor<80xf32>, tensor<80xf32>) outs(%v263 : tensor<?x80xf32>) {
        ^bb0(%a264: f32, %a265: f32, %a266: f32, %a267: f32, %a268: f32, %o277: f32):
          %s269 = arith.subf %a264, %a265 : f32
          %s270 = arith.constant 1.000000000e-05 : f32
          %s271 = arith.addf %a266, %s270 : f32
          %s272 = math.rsqrt %s271 : f32
          %s273 = arith.mulf %s269, %s272 : f32
          %s274 = arith.mulf %s273, %a267 : f32
          %s275 = arith.addf %s274, %a268 : f32
          linalg.yield %s275 : f32
        } -> tensor<?x80xf32>
        %v278 = tensor.empty(%B) : tensor<?x80xf32>
        %v281 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v276 : tensor<?x80xf32>) outs(%v278 : tensor<?x80xf32>) {
        ^bb0(%a279: f32, %o282: f32):
          %s280 = math.tanh %a279 : f32
          linalg.yield %s280 : f32
        } -> tensor<?x80xf32>
        %v283 = tensor.empty(%B) : tensor<?x80xf32>
        %v287 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v188, %v281 : tensor<?x80xf32>, tensor<?x80xf32>) outs(%v283 : tensor<?x80xf32>) {
        ^bb0(%a284: f32, %a285: f32, %o288: f32):
          %s286 = arith.mulf %a284, %a285 : f32
          linalg.yield %s286 : f32
        } -> tensor<?x80xf32>
        recur.yield %v287, %v287, %v276 : tensor<?x80xf32>, tensor<?x80xf32>, tensor<?x80xf32>
    }
    return %y0, %n0_0, %n0_1 : tensor<?x?x80xf32>, tensor<?x80xf32>, tensor<?x80xf32>
  }
}
