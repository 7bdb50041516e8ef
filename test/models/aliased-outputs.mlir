// Results that share a buffer: a value returned twice, two identical ops that
// CSE merges, an input and a weight returned as they are. Each output must
// still own its memory (no double free, nothing freed from the runtime).
func.func @forward(%x: tensor<?x?x4xf32> {recur.input = "x"},
                   %w: tensor<9x4xf32> {recur.weight = "proj.weight"})
    -> (tensor<?x?x9xf32> {recur.output = "twice_a"}, tensor<?x?x9xf32> {recur.output = "twice_b"},
        tensor<?x?x9xf32> {recur.output = "merged_a"}, tensor<?x?x9xf32> {recur.output = "merged_b"},
        tensor<?x?x4xf32> {recur.output = "x_again"}, tensor<9x4xf32> {recur.output = "w_again"}) {
  %y = recur.linear %x, %w : (tensor<?x?x4xf32>, tensor<9x4xf32>) -> tensor<?x?x9xf32>
  %m1 = recur.linear %x, %w : (tensor<?x?x4xf32>, tensor<9x4xf32>) -> tensor<?x?x9xf32>
  %m2 = recur.linear %x, %w : (tensor<?x?x4xf32>, tensor<9x4xf32>) -> tensor<?x?x9xf32>
  return %y, %y, %m1, %m2, %x, %w
      : tensor<?x?x9xf32>, tensor<?x?x9xf32>, tensor<?x?x9xf32>, tensor<?x?x9xf32>, tensor<?x?x4xf32>, tensor<9x4xf32>
}
