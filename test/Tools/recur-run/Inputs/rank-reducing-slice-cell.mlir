// A hand-written cell with a rank-reducing slice of a captured weight.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @forward(%x: tensor<?x?x4xf32> {recur.input = "input"}, %h0: tensor<?x8xf32> {recur.input = "h0"},
                   %wi: tensor<8x4xf32> {recur.weight = "wi"}, %p: tensor<2x8xf32> {recur.weight = "p"})
    -> (tensor<?x?x8xf32> {recur.output = "output"}) {
  %y, %h = recur.rnn %x init(%h0) captures(%wi, %p)
      : (tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<8x4xf32>, tensor<2x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x8xf32>, %a: tensor<8x4xf32>, %pp: tensor<2x8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x4xf32>
    %q = recur.linear %xt, %a : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
    %row = tensor.extract_slice %pp[1, 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<8xf32>
    %e = tensor.empty(%n) : tensor<?x8xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%q, %hp, %row : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) outs(%e : tensor<?x8xf32>) {
    ^bb0(%u: f32, %v: f32, %w: f32, %o: f32):
      %t = arith.addf %u, %v : f32
      %t2 = arith.addf %t, %w : f32
      %t3 = math.tanh %t2 : f32
      linalg.yield %t3 : f32
    } -> tensor<?x8xf32>
    recur.yield %s, %s : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y : tensor<?x?x8xf32>
}
