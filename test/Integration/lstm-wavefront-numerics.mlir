// RUN: recur-opt %s --convert-recur-to-linalg --convert-elementwise-to-linalg \
// RUN:   --canonicalize --recur-bufferize --recur-lower-loops-to-llvm="openmp=false" \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN: | FileCheck %s

// Numerics of recur.lstm_wavefront against the stack it replaces: two layers
// with different hidden sizes (4, then 3), initial states, T = 3, B = 2.
// Every schedule (separate; fused; fused with interleaved weights) must give
// the reference's y, h_n and c_n to within 1e-5: each line prints 1.

func.func @max_abs_diff(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %max = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                          affine_map<(i, j) -> ()>],
                         iterator_types = ["reduction", "reduction"]}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %m: f32):
    %d = arith.subf %x, %y : f32
    %abs = math.absf %d : f32
    %next = arith.maximumf %m, %abs : f32
    linalg.yield %next : f32
  } -> tensor<f32>
  %result = tensor.extract %max[] : tensor<f32>
  return %result : f32
}

func.func @check(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) {
  %diff = func.call @max_abs_diff(%a, %b) : (tensor<?x?xf32>, tensor<?x?xf32>) -> f32
  %tolerance = arith.constant 1.0e-5 : f32
  %ok = arith.cmpf olt, %diff, %tolerance : f32
  %printed = arith.extui %ok : i1 to i64
  llvm.call @printI64(%printed) : (i64) -> ()
  llvm.call @printNewline() : () -> ()
  return
}

// From mlir_c_runner_utils; LLVM functions, so that no C wrapper is expected.
llvm.func @printI64(i64)
llvm.func @printNewline()

func.func @check_sequence(%a: tensor<3x2x3xf32>, %b: tensor<3x2x3xf32>) {
  %a2 = tensor.collapse_shape %a [[0, 1], [2]] : tensor<3x2x3xf32> into tensor<6x3xf32>
  %b2 = tensor.collapse_shape %b [[0, 1], [2]] : tensor<3x2x3xf32> into tensor<6x3xf32>
  %a3 = tensor.cast %a2 : tensor<6x3xf32> to tensor<?x?xf32>
  %b3 = tensor.cast %b2 : tensor<6x3xf32> to tensor<?x?xf32>
  func.call @check(%a3, %b3) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()
  return
}

func.func @check_states(%a0: tensor<2x4xf32>, %b0: tensor<2x4xf32>, %a1: tensor<2x3xf32>, %b1: tensor<2x3xf32>) {
  %x0 = tensor.cast %a0 : tensor<2x4xf32> to tensor<?x?xf32>
  %y0 = tensor.cast %b0 : tensor<2x4xf32> to tensor<?x?xf32>
  %x1 = tensor.cast %a1 : tensor<2x3xf32> to tensor<?x?xf32>
  %y1 = tensor.cast %b1 : tensor<2x3xf32> to tensor<?x?xf32>
  func.call @check(%x0, %y0) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()
  func.call @check(%x1, %y1) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()
  return
}

func.func @main() {
  %g0 = arith.constant dense<[[[-0.057, 0.072, 0.509, -0.041, 0.009, 0.105, -0.378, 0.014, 0.156, 0.352, -0.487, -0.236, -0.491, 0.372, 0.232, -0.55], [0.579, 0.558, 0.185, 0.139, -0.411, -0.582, 0.034, -0.529, -0.372, -0.31, -0.564, -0.043, -0.071, 0.411, 0.023, 0.168]], [[-0.0, 0.195, -0.051, -0.266, 0.597, 0.595, 0.408, 0.249, -0.222, -0.324, -0.253, -0.516, 0.32, -0.12, 0.416, -0.136], [0.55, 0.417, -0.599, -0.348, 0.492, -0.036, 0.576, -0.123, -0.512, 0.155, 0.334, -0.276, -0.495, -0.201, 0.557, 0.31]], [[-0.458, -0.304, -0.479, -0.528, 0.356, -0.387, 0.071, -0.063, -0.371, 0.278, -0.443, 0.172, -0.46, -0.095, -0.345, -0.276], [0.565, 0.364, -0.235, 0.462, -0.347, -0.127, 0.425, 0.17, -0.48, 0.587, -0.344, -0.29, 0.327, -0.205, -0.244, -0.512]]]> : tensor<3x2x16xf32>
  %w0 = arith.constant dense<[[-0.492, 0.099, -0.308, 0.122], [-0.154, -0.056, 0.551, -0.02], [0.089, 0.44, -0.381, -0.415], [0.49, 0.381, -0.301, -0.372], [0.287, 0.528, -0.364, 0.54], [0.459, 0.124, -0.094, -0.475], [-0.554, 0.555, -0.314, 0.245], [-0.292, 0.388, 0.116, -0.248], [-0.389, 0.264, -0.517, -0.326], [0.071, 0.423, 0.137, -0.264], [0.501, -0.355, -0.58, -0.277], [-0.065, -0.527, -0.388, -0.157], [0.087, -0.442, -0.165, 0.469], [0.577, 0.188, 0.229, 0.101], [-0.432, -0.558, -0.579, 0.492], [0.241, 0.555, -0.574, 0.163]]> : tensor<16x4xf32>
  %u1 = arith.constant dense<[[-0.021, 0.277, -0.217, 0.599], [-0.51, 0.055, 0.284, 0.48], [0.285, 0.244, 0.352, 0.498], [-0.178, 0.222, 0.481, 0.445], [-0.099, 0.349, 0.436, 0.087], [0.15, -0.141, 0.099, 0.131], [-0.504, 0.167, 0.592, 0.456], [0.274, -0.134, 0.282, 0.097], [-0.071, 0.406, -0.499, 0.3], [-0.564, 0.122, -0.023, -0.324], [0.238, -0.003, 0.137, 0.505], [-0.293, -0.586, -0.239, 0.214]]> : tensor<12x4xf32>
  %b1 = arith.constant dense<[-0.357, -0.396, 0.487, 0.192, -0.07, 0.47, -0.208, 0.199, -0.362, -0.083, 0.367, 0.497]> : tensor<12xf32>
  %w1 = arith.constant dense<[[0.456, -0.139, 0.1], [-0.22, -0.437, -0.004], [0.405, 0.418, 0.253], [0.54, -0.268, -0.397], [-0.059, -0.27, -0.343], [-0.103, 0.151, -0.007], [-0.222, 0.407, 0.578], [-0.057, -0.51, -0.562], [0.447, -0.55, 0.25], [0.085, -0.229, 0.35], [-0.577, -0.437, -0.054], [-0.57, 0.396, -0.315]]> : tensor<12x3xf32>
  %h00 = arith.constant dense<[[-0.431, -0.544, 0.155, -0.064], [0.156, 0.186, 0.369, 0.55]]> : tensor<2x4xf32>
  %c00 = arith.constant dense<[[0.221, -0.361, -0.03, -0.386], [-0.587, -0.033, 0.257, -0.385]]> : tensor<2x4xf32>
  %h01 = arith.constant dense<[[-0.273, -0.185, 0.237], [0.025, 0.137, 0.307]]> : tensor<2x3xf32>
  %c01 = arith.constant dense<[[-0.128, 0.35, 0.487], [-0.495, 0.519, 0.267]]> : tensor<2x3xf32>

  // The reference: the stack as recur-wavefront finds it.
  %y0, %hn0, %cn0 = recur.lstm_recurrence %g0, %w0 h0(%h00) c0(%c00)
      : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  %g1 = recur.linear %y0, %u1 bias(%b1) : (tensor<3x2x4xf32>, tensor<12x4xf32>, tensor<12xf32>) -> tensor<3x2x12xf32>
  %y1, %hn1, %cn1 = recur.lstm_recurrence %g1, %w1 h0(%h01) c0(%c01)
      : (tensor<3x2x12xf32>, tensor<12x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<3x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)

  // CHECK-COUNT-5: 1
  %ys, %ss:4 = recur.lstm_wavefront %g0 w_hh(%w0, %w1) w_ih(%u1) bias(%b1)
      h0(%h00, %h01) c0(%c00, %c01) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>) -> (tensor<3x2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>)
  func.call @check_sequence(%y1, %ys) : (tensor<3x2x3xf32>, tensor<3x2x3xf32>) -> ()
  func.call @check_states(%hn0, %ss#0, %hn1, %ss#1) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
  func.call @check_states(%cn0, %ss#2, %cn1, %ss#3) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()

  // CHECK-COUNT-5: 1
  %yf, %sf:4 = recur.lstm_wavefront %g0 w_hh(%w0, %w1) w_ih(%u1) bias(%b1)
      h0(%h00, %h01) c0(%c00, %c01) cell<fused> : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>) -> (tensor<3x2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>)
  func.call @check_sequence(%y1, %yf) : (tensor<3x2x3xf32>, tensor<3x2x3xf32>) -> ()
  func.call @check_states(%hn0, %sf#0, %hn1, %sf#1) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
  func.call @check_states(%cn0, %sf#2, %cn1, %sf#3) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()

  // Interleaved with tile 2 (layer 0) and 1 (layer 1; 3 is odd).
  // CHECK-COUNT-5: 1
  %iw0 = recur.interleave_gates %w0 tile(2) : tensor<16x4xf32>
  %iu1 = recur.interleave_gates %u1 tile(1) : tensor<12x4xf32>
  %ib1 = recur.interleave_gates %b1 tile(1) : tensor<12xf32>
  %iw1 = recur.interleave_gates %w1 tile(1) : tensor<12x3xf32>
  %yi, %si:4 = recur.lstm_wavefront %g0 w_hh(%iw0, %iw1) w_ih(%iu1) bias(%ib1)
      h0(%h00, %h01) c0(%c00, %c01) interleaved([2, 1]) cell<fused> : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<12x3xf32>, tensor<12x4xf32>, tensor<12xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>) -> (tensor<3x2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>)
  func.call @check_sequence(%y1, %yi) : (tensor<3x2x3xf32>, tensor<3x2x3xf32>) -> ()
  func.call @check_states(%hn0, %si#0, %hn1, %si#1) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
  func.call @check_states(%cn0, %si#2, %cn1, %si#3) : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
  // CHECK-NOT: 0
  return
}
