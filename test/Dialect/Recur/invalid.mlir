// RUN: recur-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the recur dialect: every message names the
// operand or result and gives the expected and the actual shape or type.

func.func @embedding_table_rank(%t: tensor<10xf32>, %i: tensor<4x2xi64>) {
  // expected-error @below {{'recur.embedding' op operand 'table' must be a ranked tensor of rank 2 [V, E], got 'tensor<10xf32>'}}
  %0 = recur.embedding %t[%i] : (tensor<10xf32>, tensor<4x2xi64>) -> tensor<4x2x10xf32>
  return
}

// -----

func.func @embedding_table_dynamic(%t: tensor<?x8xf32>, %i: tensor<4x2xi64>) {
  // expected-error @below {{'recur.embedding' op operand 'table' must have a static shape [V, E], got 'tensor<?x8xf32>'}}
  %0 = recur.embedding %t[%i] : (tensor<?x8xf32>, tensor<4x2xi64>) -> tensor<4x2x8xf32>
  return
}

// -----

func.func @embedding_table_int(%t: tensor<10x8xi32>, %i: tensor<4x2xi64>) {
  // expected-error @below {{'recur.embedding' op operand 'table' must have a floating-point element type, got 'i32'}}
  %0 = recur.embedding %t[%i] : (tensor<10x8xi32>, tensor<4x2xi64>) -> tensor<4x2x8xf32>
  return
}

// -----

func.func @embedding_ids_i32(%t: tensor<10x8xf32>, %i: tensor<4x2xi32>) {
  // expected-error @below {{'recur.embedding' op operand 'ids' expected element type 'i64', got 'i32'}}
  %0 = recur.embedding %t[%i] : (tensor<10x8xf32>, tensor<4x2xi32>) -> tensor<4x2x8xf32>
  return
}

// -----

func.func @embedding_ids_unranked(%t: tensor<10x8xf32>, %i: tensor<*xi64>) {
  // expected-error @below {{'recur.embedding' op operand 'ids' must be a ranked tensor, got 'tensor<*xi64>'}}
  %0 = recur.embedding %t[%i] : (tensor<10x8xf32>, tensor<*xi64>) -> tensor<4x2x8xf32>
  return
}

// -----

func.func @embedding_result_shape(%t: tensor<10x8xf32>, %i: tensor<4x2xi64>) {
  // expected-error @below {{'recur.embedding' op result 'result' expected shape [d0, d1, E] = [4, 2, 8], got [4, 3, 8]}}
  %0 = recur.embedding %t[%i] : (tensor<10x8xf32>, tensor<4x2xi64>) -> tensor<4x3x8xf32>
  return
}

// -----

func.func @embedding_result_rank(%t: tensor<10x8xf32>, %i: tensor<4x2xi64>) {
  // expected-error @below {{'recur.embedding' op result 'result' must be a ranked tensor of rank 3 [d0, d1, E], got 'tensor<4x8xf32>'}}
  %0 = recur.embedding %t[%i] : (tensor<10x8xf32>, tensor<4x2xi64>) -> tensor<4x8xf32>
  return
}

// -----

func.func @embedding_result_element(%t: tensor<10x8xf32>, %i: tensor<4x2xi64>) {
  // expected-error @below {{'recur.embedding' op result 'result' expected element type 'f32' (that of operand 'table'), got 'f16'}}
  %0 = recur.embedding %t[%i] : (tensor<10x8xf32>, tensor<4x2xi64>) -> tensor<4x2x8xf16>
  return
}

// -----

func.func @lstm_input_rank(%x: tensor<2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'input' must be a ranked tensor of rank 3 [T, B, I], got 'tensor<2x4xf32>'}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b : (tensor<2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_input_int(%x: tensor<3x2x4xi32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'input' must have a floating-point element type, got 'i32'}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b : (tensor<3x2x4xi32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_w_ih_not_four_gates(%x: tensor<3x2x4xf32>, %wih: tensor<10x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'w_ih' dimension 0 (4*H) must be a multiple of 4, got 10}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b : (tensor<3x2x4xf32>, tensor<10x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_w_ih_input_size(%x: tensor<3x2x4xf32>, %wih: tensor<16x5xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'w_ih' expected shape [4*H, I] = [16, 4], got [16, 5]}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b : (tensor<3x2x4xf32>, tensor<16x5xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_w_ih_dynamic(%x: tensor<3x2x4xf32>, %wih: tensor<?x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'w_ih' must have a static shape [4*H, I], got 'tensor<?x4xf32>'}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b : (tensor<3x2x4xf32>, tensor<?x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_w_hh_hidden_size(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x3xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'w_hh' expected shape [4*H, H] = [16, 4], got [16, 3]}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_w_hh_element(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf16>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'w_hh' expected element type 'f32' (that of operand 'input'), got 'f16'}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf16>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_b_ih_size(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>, %bad: tensor<12xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'b_ih' expected shape [4*H] = [16], got [12]}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %bad, %b : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<12xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_b_hh_rank(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>, %bad: tensor<1x16xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'b_hh' must be a ranked tensor of rank 1 [4*H], got 'tensor<1x16xf32>'}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %bad : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<1x16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_h0_batch(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>, %h0: tensor<5x4xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'h0' expected shape [B, H] = [2, 4], got [5, 4]}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b h0(%h0) : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<5x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_c0_hidden(%x: tensor<3x?x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>, %c0: tensor<2x8xf32>) {
  // expected-error @below {{'recur.lstm' op operand 'c0' expected shape [B, H] = [2, 4], got [2, 8]}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b c0(%c0) : (tensor<3x?x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<2x8xf32>) -> (tensor<3x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  return
}

// -----

func.func @lstm_y_shape(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op result 'y' expected shape [T, B, H] = [3, 2, 4], got [2, 2, 4]}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<2x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_h_n_shape(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op result 'h_n' expected shape [B, H] = [2, 4], got [2, 5]}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x5xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_c_n_element(%x: tensor<3x2x4xf32>, %wih: tensor<16x4xf32>, %whh: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op result 'c_n' expected element type 'f32' (that of operand 'input'), got 'bf16'}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xbf16>)
  return
}

// -----

func.func @linear_input_rank(%x: tensor<f32>, %w: tensor<3x4xf32>) {
  // expected-error @below {{'recur.linear' op operand 'input' must be a ranked tensor of rank >= 1, got 'tensor<f32>'}}
  %0 = recur.linear %x, %w : (tensor<f32>, tensor<3x4xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @linear_weight_in_features(%x: tensor<2x5xf32>, %w: tensor<3x4xf32>) {
  // expected-error @below {{'recur.linear' op operand 'weight' expected shape [N, K] = [3, 5], got [3, 4]}}
  %0 = recur.linear %x, %w : (tensor<2x5xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @linear_weight_dynamic(%x: tensor<2x4xf32>, %w: tensor<?x4xf32>) {
  // expected-error @below {{'recur.linear' op operand 'weight' must have a static shape [N, K], got 'tensor<?x4xf32>'}}
  %0 = recur.linear %x, %w : (tensor<2x4xf32>, tensor<?x4xf32>) -> tensor<2x?xf32>
  return
}

// -----

func.func @linear_bias_size(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) {
  // expected-error @below {{'recur.linear' op operand 'bias' expected shape [N] = [3], got [4]}}
  %0 = recur.linear %x, %w bias(%b) : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @linear_bias_element(%x: tensor<2x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3xf64>) {
  // expected-error @below {{'recur.linear' op operand 'bias' expected element type 'f32' (that of operand 'input'), got 'f64'}}
  %0 = recur.linear %x, %w bias(%b) : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @linear_result_shape(%x: tensor<?x7x4xf32>, %w: tensor<3x4xf32>) {
  // expected-error @below {{'recur.linear' op result 'result' expected shape [d0, d1, N] = [?, 7, 3], got [?, 7, 4]}}
  %0 = recur.linear %x, %w : (tensor<?x7x4xf32>, tensor<3x4xf32>) -> tensor<?x7x4xf32>
  return
}

// -----

func.func @log_softmax_rank(%x: tensor<f32>) {
  // expected-error @below {{'recur.log_softmax' op operand 'input' must be a ranked tensor of rank >= 1, got 'tensor<f32>'}}
  %0 = recur.log_softmax %x : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @log_softmax_int(%x: tensor<4xi32>) {
  // expected-error @below {{'recur.log_softmax' op operand 'input' must have a floating-point element type, got 'i32'}}
  %0 = recur.log_softmax %x : tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

func.func @log_softmax_result(%x: tensor<?x4xf32>) {
  // expected-error @below {{'recur.log_softmax' op result 'result' expected type 'tensor<?x4xf32>' (that of operand 'input'), got 'tensor<2x4xf32>'}}
  %0 = recur.log_softmax %x : tensor<?x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @cross_entropy_logits_rank(%l: tensor<f32>, %t: tensor<i64>) {
  // expected-error @below {{'recur.cross_entropy' op operand 'logits' must be a ranked tensor of rank >= 1, got 'tensor<f32>'}}
  %0 = recur.cross_entropy %l, %t : (tensor<f32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_targets_shape(%l: tensor<3x2x10xf32>, %t: tensor<3x4xi64>) {
  // expected-error @below {{'recur.cross_entropy' op operand 'targets' expected shape [d0, d1] = [3, 2], got [3, 4]}}
  %0 = recur.cross_entropy %l, %t : (tensor<3x2x10xf32>, tensor<3x4xi64>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_targets_i32(%l: tensor<3x2x10xf32>, %t: tensor<3x2xi32>) {
  // expected-error @below {{'recur.cross_entropy' op operand 'targets' expected element type 'i64', got 'i32'}}
  %0 = recur.cross_entropy %l, %t : (tensor<3x2x10xf32>, tensor<3x2xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_mean_rank(%l: tensor<3x2x10xf32>, %t: tensor<3x2xi64>) {
  // expected-error @below {{'recur.cross_entropy' op result 'loss' must be a ranked tensor of rank 0 [], got 'tensor<3x2xf32>'}}
  %0 = recur.cross_entropy %l, %t : (tensor<3x2x10xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return
}

// -----

func.func @cross_entropy_none_shape(%l: tensor<3x2x10xf32>, %t: tensor<3x2xi64>) {
  // expected-error @below {{'recur.cross_entropy' op result 'loss' expected shape [d0, d1] = [3, 2], got [3, 3]}}
  %0 = recur.cross_entropy %l, %t reduction<none> : (tensor<3x2x10xf32>, tensor<3x2xi64>) -> tensor<3x3xf32>
  return
}

// -----

func.func @cross_entropy_loss_element(%l: tensor<3x2x10xbf16>, %t: tensor<3x2xi64>) {
  // expected-error @below {{'recur.cross_entropy' op result 'loss' expected element type 'bf16' (that of operand 'logits'), got 'f32'}}
  %0 = recur.cross_entropy %l, %t reduction<sum> : (tensor<3x2x10xbf16>, tensor<3x2xi64>) -> tensor<f32>
  return
}

// -----

// expected-error @below {{'recur.weight' of argument 0 must be a non-empty string, got 3 : i64}}
func.func @weight_name_not_string(%w: tensor<4xf32> {recur.weight = 3}) {
  return
}

// -----

// expected-error @below {{'recur.input' of argument 0 must be a non-empty string, got ""}}
func.func @input_name_empty(%x: tensor<4xi64> {recur.input = ""}) {
  return
}

// -----

// expected-error @below {{name 'w' of argument 1 is already used by argument 0}}
func.func @weight_name_duplicate(%a: tensor<4xf32> {recur.weight = "w"}, %b: tensor<4xf32> {recur.weight = "w"}) {
  return
}

// -----

// expected-error @below {{name 'x' of argument 1 is already used by argument 0}}
func.func @input_weight_name_clash(%a: tensor<4xi64> {recur.input = "x"}, %b: tensor<4xf32> {recur.weight = "x"}) {
  return
}

// -----

// expected-error @below {{'recur.output' names a result, but is on argument 0; use 'recur.input' or 'recur.weight'}}
func.func @output_on_argument(%a: tensor<4xf32> {recur.output = "y"}) {
  return
}

// -----

// expected-error @below {{unknown argument attribute 'recur.weights'; expected 'recur.input' or 'recur.weight'}}
func.func @unknown_argument_attr(%a: tensor<4xf32> {recur.weights = "w"}) {
  return
}

// -----

// expected-error @below {{unknown result attribute 'recur.input'; expected 'recur.output'}}
func.func @unknown_result_attr(%a: tensor<4xf32>) -> (tensor<4xf32> {recur.input = "y"}) {
  return %a : tensor<4xf32>
}

// -----

// expected-error @below {{name 'y' of result 1 is already used by result 0}}
func.func @output_name_duplicate(%a: tensor<4xf32>) -> (tensor<4xf32> {recur.output = "y"}, tensor<4xf32> {recur.output = "y"}) {
  return %a, %a : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @recurrence_gates_width(%g: tensor<3x2x12xf32>, %whh: tensor<16x4xf32>) {
  // expected-error @below {{'recur.lstm_recurrence' op operand 'input_gates' expected shape [T, B, 4*H] = [3, 2, 16], got [3, 2, 12]}}
  %y, %h, %c = recur.lstm_recurrence %g, %whh : (tensor<3x2x12xf32>, tensor<16x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @recurrence_w_hh_dynamic(%g: tensor<3x2x16xf32>, %whh: tensor<?x4xf32>) {
  // expected-error @below {{'recur.lstm_recurrence' op operand 'w_hh' must have a static shape [4*H, H], got 'tensor<?x4xf32>'}}
  %y, %h, %c = recur.lstm_recurrence %g, %whh : (tensor<3x2x16xf32>, tensor<?x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @recurrence_h0_batch(%g: tensor<3x2x16xf32>, %whh: tensor<16x4xf32>, %h0: tensor<5x4xf32>) {
  // expected-error @below {{'recur.lstm_recurrence' op operand 'h0' expected shape [B, H] = [2, 4], got [5, 4]}}
  %y, %h, %c = recur.lstm_recurrence %g, %whh h0(%h0) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<5x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @recurrence_gates_element(%g: tensor<3x2x16xf16>, %whh: tensor<16x4xf32>) {
  // expected-error @below {{'recur.lstm_recurrence' op operand 'input_gates' expected element type 'f32' (that of operand 'w_hh'), got 'f16'}}
  %y, %h, %c = recur.lstm_recurrence %g, %whh : (tensor<3x2x16xf16>, tensor<16x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @recurrence_result_shape(%g: tensor<3x2x16xf32>, %whh: tensor<16x4xf32>) {
  // expected-error @below {{'recur.lstm_recurrence' op result 'y' expected shape [T, B, H] = [3, 2, 4], got [3, 2, 5]}}
  %y, %h, %c = recur.lstm_recurrence %g, %whh : (tensor<3x2x16xf32>, tensor<16x4xf32>) -> (tensor<3x2x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @recurrence_unknown_schedule(%g: tensor<3x2x16xf32>, %whh: tensor<16x4xf32>) {
  // expected-error @below {{expected ::mlir::recur::CellSchedule to be one of: separate, fused}}
  // expected-error @below {{failed to parse Recur_CellScheduleAttr parameter 'value'}}
  %y, %h, %c = recur.lstm_recurrence %g, %whh cell<wavy> : (tensor<3x2x16xf32>, tensor<16x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @recurrence_tile_does_not_divide(%g: tensor<3x2x24xf32>, %whh: tensor<24x6xf32>) {
  // expected-error @below {{'recur.lstm_recurrence' op gate tile 4 does not divide the hidden size H = 6}}
  %y, %h, %c = recur.lstm_recurrence %g, %whh interleaved(4) cell<fused> : (tensor<3x2x24xf32>, tensor<24x6xf32>) -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @recurrence_interleaved_separate(%g: tensor<3x2x24xf32>, %whh: tensor<24x6xf32>) {
  // expected-error @below {{'recur.lstm_recurrence' op an interleaved w_hh needs cell<fused>; the separate schedule reads PyTorch's layout}}
  %y, %h, %c = recur.lstm_recurrence %g, %whh interleaved(2) : (tensor<3x2x24xf32>, tensor<24x6xf32>) -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @recurrence_tile_not_positive(%g: tensor<3x2x24xf32>, %whh: tensor<24x6xf32>) {
  // expected-error @below {{attribute 'gate_tile' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %y, %h, %c = recur.lstm_recurrence %g, %whh interleaved(0) cell<fused> : (tensor<3x2x24xf32>, tensor<24x6xf32>) -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @interleave_tile_does_not_divide(%w: tensor<24x6xf32>) {
  // expected-error @below {{'recur.interleave_gates' op gate tile 4 does not divide the hidden size H = 6}}
  %0 = recur.interleave_gates %w tile(4) : tensor<24x6xf32>
  return
}

// -----

func.func @interleave_rows_not_gates(%w: tensor<10x6xf32>) {
  // expected-error @below {{'recur.interleave_gates' op operand 'input' dimension 0 (4*H) must be a multiple of 4, got 10}}
  %0 = recur.interleave_gates %w tile(1) : tensor<10x6xf32>
  return
}

// -----

func.func @interleave_rows_not_three_gates(%w: tensor<20x6xf32>) {
  // expected-error @below {{'recur.interleave_gates' op operand 'input' dimension 0 (3*H) must be a multiple of 3, got 20}}
  %0 = recur.interleave_gates %w tile(1) gates(3) : tensor<20x6xf32>
  return
}

// -----

func.func @interleave_no_gates(%w: tensor<24x6xf32>) {
  // expected-error @below {{attribute 'gates' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = recur.interleave_gates %w tile(1) gates(0) : tensor<24x6xf32>
  return
}

// -----

func.func @interleave_dynamic(%w: tensor<?x6xf32>) {
  // expected-error @below {{'recur.interleave_gates' op operand 'input' must have a static shape [4*H, K], got 'tensor<?x6xf32>'}}
  %0 = recur.interleave_gates %w tile(1) : tensor<?x6xf32>
  return
}

// -----

func.func @interleave_rank(%w: tensor<2x4x6xf32>) {
  // expected-error @below {{'recur.interleave_gates' op operand 'input' must be a ranked tensor of rank 2 [4*H, K], got 'tensor<2x4x6xf32>'}}
  %0 = recur.interleave_gates %w tile(1) : tensor<2x4x6xf32>
  return
}

// -----

func.func @wavefront_missing_projection(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op expected 1 w_ih operands for 2 layers, got 0}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_h0_count(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>, %h: tensor<2x4xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op expected 0 or 2 h0 operands for 2 layers, got 1}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b) h0(%h) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_w_ih_shape(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %w1: tensor<24x6xf32>, %u: tensor<24x5xf32>, %b: tensor<24xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op operand 'w_ih[1]' expected shape [4*H1, H0] = [24, 4], got [24, 5]}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w1) w_ih(%u) bias(%b) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<24x6xf32>, tensor<24x5xf32>, tensor<24xf32>) -> (tensor<3x2x6xf32>, tensor<2x4xf32>, tensor<2x6xf32>, tensor<2x4xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @wavefront_bias_shape(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<12xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op operand 'bias[1]' expected shape [4*H1] = [16], got [12]}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<12xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_c0_batch(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>, %c: tensor<2x4xf32>, %c1: tensor<5x4xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op operand 'c0[1]' expected shape [B, H1] = [2, 4], got [5, 4]}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b) c0(%c, %c1) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<5x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_result_count(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op expected 4 final states (h_n and c_n of 2 layers), got 2}}
  %y, %s:2 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_result_shape(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op result 'c_n[0]' expected shape [B, H0] = [2, 4], got [2, 3]}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_interleaved_separate(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op interleaved weights need cell<fused>; the separate schedule reads PyTorch's layout}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b) interleaved([2, 2]) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_tile_count(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op expected one gate tile per layer (2), got 1}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b) interleaved([2]) cell<fused> : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_tile_does_not_divide(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op gate tile 3 does not divide the hidden size H = 4}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b) interleaved([2, 3]) cell<fused> : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_tile_negative(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op gate tile of layer 1 must be positive, got 0}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b) interleaved([2, 0]) cell<fused> : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_no_layer(%g: tensor<3x2x16xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op needs at least one layer, got no w_hh operand}}
  %y = recur.lstm_wavefront %g w_hh() : (tensor<3x2x16xf32>) -> (tensor<3x2x4xf32>)
  return
}

// -----

func.func @wavefront_bias_count(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op expected 1 bias operands for 2 layers, got 2}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b, %b) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @wavefront_c0_count(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>, %c: tensor<2x4xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op expected 0 or 2 c0 operands for 2 layers, got 3}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w) w_ih(%w) bias(%b) c0(%c, %c, %c) : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @pack_panels_result(%w: tensor<37x8xf32>) {
  // expected-error @below {{'recur.pack_panels' op result expected 'tensor<3x8x16xf32>', got 'tensor<2x8x16xf32>'}}
  %0 = recur.pack_panels %w tile(16) : tensor<37x8xf32> -> tensor<2x8x16xf32>
  return
}

// -----

func.func @pack_panels_dynamic(%w: tensor<?x8xf32>) {
  // expected-error @below {{'recur.pack_panels' op operand 'input' must have a static shape [N, K], got 'tensor<?x8xf32>'}}
  %0 = recur.pack_panels %w tile(16) : tensor<?x8xf32> -> tensor<3x8x16xf32>
  return
}

// -----

func.func @packed_linear_panels(%x: tensor<2x8xf32>, %w: tensor<2x8x16xf32>) {
  // expected-error @below {{'recur.linear' op operand 'weight' packed in panels of 16 rows for N = 37 needs 3 panels, got 2}}
  %0 = recur.linear %x, %w : (tensor<2x8xf32>, tensor<2x8x16xf32>) -> tensor<2x37xf32>
  return
}

// -----

func.func @packed_linear_dynamic_n(%x: tensor<2x8xf32>, %w: tensor<3x8x16xf32>) {
  // expected-error @below {{'recur.linear' op a packed weight needs the result's last dimension N to be static, got 'tensor<2x?xf32>'}}
  %0 = recur.linear %x, %w : (tensor<2x8xf32>, tensor<3x8x16xf32>) -> tensor<2x?xf32>
  return
}

// -----

func.func @packed_linear_depth(%x: tensor<2x9xf32>, %w: tensor<3x8x16xf32>) {
  // expected-error @below {{'recur.linear' op operand 'weight' expected shape [P, K, t] = [3, 9, 16], got [3, 8, 16]}}
  %0 = recur.linear %x, %w : (tensor<2x9xf32>, tensor<3x8x16xf32>) -> tensor<2x37xf32>
  return
}

// -----

func.func @packed_w_hh_fused(%g: tensor<3x2x24xf32>, %w: tensor<2x6x16xf32>) {
  // expected-error @below {{'recur.lstm_recurrence' op a packed w_hh read by cell<fused> needs interleaved(K) and panels of 4*K rows (the four gates of K units), got panels of 16 rows without interleaved(K)}}
  %y, %h, %c = recur.lstm_recurrence %g, %w cell<fused> : (tensor<3x2x24xf32>, tensor<2x6x16xf32>) -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @packed_w_hh_fused_panel(%g: tensor<3x2x24xf32>, %w: tensor<2x6x16xf32>) {
  // expected-error @below {{'recur.lstm_recurrence' op a packed w_hh read by cell<fused> needs interleaved(K) and panels of 4*K rows (the four gates of K units), got panels of 16 rows for K = 2}}
  %y, %h, %c = recur.lstm_recurrence %g, %w interleaved(2) cell<fused> : (tensor<3x2x24xf32>, tensor<2x6x16xf32>) -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @packed_w_hh_panels(%g: tensor<3x2x24xf32>, %w: tensor<1x6x16xf32>) {
  // expected-error @below {{'recur.lstm_recurrence' op operand 'w_hh' packed in panels of 16 rows for 4*H = 24 needs 2 panels, got 1}}
  %y, %h, %c = recur.lstm_recurrence %g, %w : (tensor<3x2x24xf32>, tensor<1x6x16xf32>) -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @cross_entropy_grad_d_loss_shape(%l: tensor<4x2x13xf32>, %t: tensor<4x2xi64>, %d: tensor<4xf32>) {
  // expected-error @below {{'recur.cross_entropy_grad' op operand 'd_loss' must be a ranked tensor of rank 0 [], got 'tensor<4xf32>'}}
  %0 = recur.cross_entropy_grad %l, %t, %d : (tensor<4x2x13xf32>, tensor<4x2xi64>, tensor<4xf32>) -> tensor<4x2x13xf32>
  return
}

// -----

func.func @cross_entropy_grad_result(%l: tensor<4x2x13xf32>, %t: tensor<4x2xi64>, %d: tensor<f32>) {
  // expected-error @below {{'recur.cross_entropy_grad' op result 'd_logits' expected shape [d0, d1, C] = [4, 2, 13], got [4, 2, 12]}}
  %0 = recur.cross_entropy_grad %l, %t, %d : (tensor<4x2x13xf32>, tensor<4x2xi64>, tensor<f32>) -> tensor<4x2x12xf32>
  return
}

// -----

func.func @linear_grad_d_result(%d: tensor<4x12xf32>, %x: tensor<4x7xf32>, %w: tensor<13x7xf32>) {
  // expected-error @below {{'recur.linear_grad' op operand 'd_result' expected shape [d0, N] = [4, 13], got [4, 12]}}
  %0:3 = recur.linear_grad %d, %x, %w : (tensor<4x12xf32>, tensor<4x7xf32>, tensor<13x7xf32>) -> (tensor<4x7xf32>, tensor<13x7xf32>, tensor<13xf32>)
  return
}

// -----

func.func @linear_grad_packed_weight(%d: tensor<4x13xf32>, %x: tensor<4x7xf32>, %w: tensor<1x7x16xf32>) {
  // expected-error @below {{'recur.linear_grad' op operand 'weight' must be a ranked tensor of rank 2 [N, K], got 'tensor<1x7x16xf32>'}}
  %0:3 = recur.linear_grad %d, %x, %w : (tensor<4x13xf32>, tensor<4x7xf32>, tensor<1x7x16xf32>) -> (tensor<4x7xf32>, tensor<13x7xf32>, tensor<13xf32>)
  return
}

// -----

func.func @lstm_grad_y(%x: tensor<3x2x5xf32>, %wi: tensor<28x5xf32>, %wh: tensor<28x7xf32>, %b: tensor<28xf32>, %y: tensor<3x2x8xf32>) {
  // expected-error @below {{'recur.lstm_grad' op operand 'y' expected shape [T, B, H] = [3, 2, 7], got [3, 2, 8]}}
  %0:6 = recur.lstm_grad %x, %wi, %wh, %b, %b y(%y) d_y(%y) : (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>, tensor<3x2x8xf32>, tensor<3x2x8xf32>) -> (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<2x7xf32>, tensor<2x7xf32>)
  return
}

// -----

func.func @lstm_grad_d_bias(%x: tensor<3x2x5xf32>, %wi: tensor<28x5xf32>, %wh: tensor<28x7xf32>, %b: tensor<28xf32>, %y: tensor<3x2x7xf32>) {
  // expected-error @below {{'recur.lstm_grad' op result 'd_bias' expected shape [4*H] = [28], got [32]}}
  %0:6 = recur.lstm_grad %x, %wi, %wh, %b, %b y(%y) d_y(%y) : (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>, tensor<3x2x7xf32>, tensor<3x2x7xf32>) -> (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<32xf32>, tensor<2x7xf32>, tensor<2x7xf32>)
  return
}

// -----

func.func @lstm_grad_d_c_n(%x: tensor<3x2x5xf32>, %wi: tensor<28x5xf32>, %wh: tensor<28x7xf32>, %y: tensor<3x2x7xf32>, %s: tensor<2x7xf32>, %bad: tensor<3x7xf32>) {
  // expected-error @below {{'recur.lstm_grad' op operand 'd_c_n' expected shape [B, H] = [2, 7], got [3, 7]}}
  %0:6 = recur.lstm_grad %x, %wi, %wh y(%y) h0(%s) d_c_n(%bad) : (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<3x2x7xf32>, tensor<2x7xf32>, tensor<3x7xf32>) -> (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<2x7xf32>, tensor<2x7xf32>)
  return
}

// -----

func.func @lstm_grad_lengths(%x: tensor<3x2x5xf32>, %wi: tensor<28x5xf32>, %wh: tensor<28x7xf32>, %y: tensor<3x2x7xf32>, %n: tensor<3xi64>) {
  // expected-error @below {{'recur.lstm_grad' op expects lengths to be a [B] tensor of integers with the input's B, got 'tensor<3xi64>'}}
  %0:6 = recur.lstm_grad %x, %wi, %wh y(%y) lengths(%n) : (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<3x2x7xf32>, tensor<3xi64>) -> (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<2x7xf32>, tensor<2x7xf32>)
  return
}

// -----

func.func @gru_grad_w_hh(%x: tensor<3x2x5xf32>, %wi: tensor<21x5xf32>, %wh: tensor<28x7xf32>, %y: tensor<3x2x7xf32>) {
  // expected-error @below {{'recur.gru_grad' op operand 'w_hh' dimension 0 (3*H) must be a multiple of 3, got 28}}
  %0:6 = recur.gru_grad %x, %wi, %wh y(%y) : (tensor<3x2x5xf32>, tensor<21x5xf32>, tensor<28x7xf32>, tensor<3x2x7xf32>) -> (tensor<3x2x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<2x7xf32>)
  return
}

// -----

func.func @lstm_grad_d_h0(%x: tensor<3x2x5xf32>, %wi: tensor<28x5xf32>, %wh: tensor<28x7xf32>, %y: tensor<3x2x7xf32>) {
  // expected-error @below {{'recur.lstm_grad' op result 'd_h0' expected shape [B, H] = [2, 7], got [2, 8]}}
  %0:6 = recur.lstm_grad %x, %wi, %wh y(%y) : (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<3x2x7xf32>) -> (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<2x8xf32>, tensor<2x7xf32>)
  return
}

// -----

func.func @embedding_grad_rows(%d: tensor<4x2x5xf32>, %i: tensor<4x2xi64>) {
  // expected-error @below {{'recur.embedding_grad' op result 'd_table' expected shape [V, E] = [13, 5], got [12, 5]}}
  %0 = recur.embedding_grad %d[%i] rows(13) : (tensor<4x2x5xf32>, tensor<4x2xi64>) -> tensor<12x5xf32>
  return
}

// -----

func.func @embedding_grad_dynamic_columns(%d: tensor<4x2x?xf32>, %i: tensor<4x2xi64>) {
  // expected-error @below {{'recur.embedding_grad' op operand 'd_result' must have a static last dimension (the table's columns E), got 'tensor<4x2x?xf32>'}}
  %0 = recur.embedding_grad %d[%i] rows(13) : (tensor<4x2x?xf32>, tensor<4x2xi64>) -> tensor<13x5xf32>
  return
}

// -----

func.func @clip_grad_norm_result_type(%a: tensor<4xf32>, %b: tensor<3x2xf32>) {
  // expected-error @below {{'recur.clip_grad_norm' op result #2 expected type 'tensor<3x2xf32>', got 'tensor<2x3xf32>'}}
  %0:3 = recur.clip_grad_norm %a, %b max_norm(1.0) : (tensor<4xf32>, tensor<3x2xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<2x3xf32>)
  return
}

// -----

func.func @clip_grad_norm_result_count(%a: tensor<4xf32>) {
  // expected-error @below {{'recur.clip_grad_norm' op expected 2 results (the norm, then one per gradient), got 1}}
  %0 = recur.clip_grad_norm %a max_norm(1.0) : (tensor<4xf32>) -> (tensor<f32>)
  return
}

// -----

func.func @clip_grad_norm_mixed_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @below {{'recur.clip_grad_norm' op operand 'gradients' #1 expected element type 'f32' (that of operand 'gradients' #0), got 'bf16'}}
  %0:3 = recur.clip_grad_norm %a, %b max_norm(1.0) : (tensor<4xf32>, tensor<4xbf16>) -> (tensor<f32>, tensor<4xf32>, tensor<4xbf16>)
  return
}

// -----

func.func @clip_grad_norm_zero(%a: tensor<4xf32>) {
  // expected-error @below {{'recur.clip_grad_norm' op attribute 'max_norm' failed to satisfy constraint: 64-bit float attribute whose value is finite and positive}}
  %0:2 = recur.clip_grad_norm %a max_norm(0.0) : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return
}

// -----

func.func @sgd_update_gradient_type(%w: tensor<4xf32>, %g: tensor<5xf32>) {
  // expected-error @below {{'recur.sgd_update' op failed to verify that all of {weight, gradient, result} have same type}}
  %0 = "recur.sgd_update"(%w, %g) {lr = 0.1 : f64} : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @sgd_update_negative_lr(%w: tensor<4xf32>) {
  // expected-error @below {{'recur.sgd_update' op attribute 'lr' failed to satisfy constraint: 64-bit float attribute whose value is finite and positive}}
  %0 = recur.sgd_update %w, %w lr(-0.1) : tensor<4xf32>
  return
}

// -----

// expected-error @below {{'recur.backward' is a unit attribute of a function}}
func.func @backward_not_unit(%x: tensor<f32>) -> tensor<f32> attributes {recur.backward = 1 : i64} {
  return %x : tensor<f32>
}

// -----

// expected-error @below {{'recur.kept' is a unit attribute of a result that has a 'recur.output' name}}
func.func @kept_without_name(%x: tensor<f32>) -> (tensor<f32> {recur.kept}) {
  return %x : tensor<f32>
}

// -----

// expected-error @below {{'recur.vjp' is a unit attribute of a function that is not a training step}}
func.func @vjp_of_training_step(%loss: tensor<f32>) -> tensor<f32> attributes {recur.vjp, recur.train = #recur.sgd<lr = 1.0>} {
  return %loss : tensor<f32>
}

// -----

// expected-error @below {{'recur.train' must be a #recur.sgd<lr = ..., clip_norm = ...> attribute, got 2.000000e+01 : f64}}
func.func @train_not_sgd(%loss: tensor<f32>) -> tensor<f32> attributes {recur.train = 20.0 : f64} {
  return %loss : tensor<f32>
}

// -----

// expected-error @below {{the learning rate lr must be finite and positive, got 0}}
func.func @train_zero_lr(%loss: tensor<f32>) -> tensor<f32> attributes {recur.train = #recur.sgd<lr = 0.0>} {
  return %loss : tensor<f32>
}

// -----

// expected-error @below {{clip_norm must be finite and at least 0 (0: no clipping), got -1}}
func.func @train_negative_clip(%loss: tensor<f32>) -> tensor<f32> attributes {recur.train = #recur.sgd<lr = 1.0, clip_norm = -1.0>} {
  return %loss : tensor<f32>
}

// -----

// expected-error @below {{result 1 updates weight 'c', which no argument of the function names}}
func.func @update_unknown_weight(%b: tensor<4xf32> {recur.weight = "b"}, %loss: tensor<f32>)
    -> (tensor<f32>, tensor<4xf32> {recur.update = "c"}) {
  return %loss, %b : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @below {{result 1 updates weight 'b' of type 'tensor<4xf32>' but has type 'tensor<5xf32>'}}
func.func @update_wrong_type(%b: tensor<4xf32> {recur.weight = "b"}, %loss: tensor<f32>, %c: tensor<5xf32>)
    -> (tensor<f32>, tensor<5xf32> {recur.update = "b"}) {
  return %loss, %c : tensor<f32>, tensor<5xf32>
}

// -----

// expected-error @below {{weight 'b' is updated by result 0 and result 1}}
func.func @update_twice(%b: tensor<4xf32> {recur.weight = "b"})
    -> (tensor<4xf32> {recur.update = "b"}, tensor<4xf32> {recur.update = "b"}) {
  return %b, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @lstm_one_bias(%x: tensor<5x2x8xf32>, %w_ih: tensor<16x8xf32>, %w_hh: tensor<16x4xf32>,
    %b: tensor<16xf32>) -> tensor<5x2x4xf32> {
  // expected-error @below {{'recur.lstm' op takes both biases b_ih and b_hh or neither}}
  %y, %h, %c = "recur.lstm"(%x, %w_ih, %w_hh, %b) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0>}>
      : (tensor<5x2x8xf32>, tensor<16x8xf32>, tensor<16x4xf32>, tensor<16xf32>)
      -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y : tensor<5x2x4xf32>
}

// -----

func.func @transpose_not_a_permutation(%x: tensor<5x2x8xf32>) -> tensor<2x5x8xf32> {
  // expected-error @below {{'recur.transpose' op permutation [1, 1, 2] is not a permutation of the 3 dimensions of operand 'input'}}
  %0 = recur.transpose %x [1, 1, 2] : tensor<5x2x8xf32> -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// -----

func.func @transpose_wrong_result(%x: tensor<5x2x8xf32>) -> tensor<5x2x8xf32> {
  // expected-error @below {{'recur.transpose' op result 'result' expected type 'tensor<2x5x8xf32>', got 'tensor<5x2x8xf32>'}}
  %0 = recur.transpose %x [1, 0, 2] : tensor<5x2x8xf32> -> tensor<5x2x8xf32>
  return %0 : tensor<5x2x8xf32>
}

// -----

func.func @lstm_projection_not_smaller(%x: tensor<5x2x8xf32>, %w_ih: tensor<16x8xf32>,
    %w_hh: tensor<16x4xf32>, %w_hr: tensor<4x4xf32>) -> tensor<5x2x4xf32> {
  // expected-error @below {{'recur.lstm' op projects the hidden state to 4 of 4 units; a projection (w_hr) must make it smaller}}
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh proj(%w_hr)
      : (tensor<5x2x8xf32>, tensor<16x8xf32>, tensor<16x4xf32>, tensor<4x4xf32>)
      -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y : tensor<5x2x4xf32>
}

// -----

func.func @lstm_projected_w_hh(%x: tensor<5x2x8xf32>, %w_ih: tensor<24x8xf32>,
    %w_hh: tensor<24x6xf32>, %w_hr: tensor<4x6xf32>) -> tensor<5x2x4xf32> {
  // expected-error @below {{'recur.lstm' op operand 'w_hh' expected shape [4*H, P] = [24, 4], got [24, 6]}}
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh proj(%w_hr)
      : (tensor<5x2x8xf32>, tensor<24x8xf32>, tensor<24x6xf32>, tensor<4x6xf32>)
      -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x6xf32>)
  return %y : tensor<5x2x4xf32>
}

// -----

func.func @recurrence_projected_fused(%g: tensor<5x2x24xf32>, %w_hh: tensor<24x4xf32>,
    %w_hr: tensor<4x6xf32>) -> tensor<5x2x4xf32> {
  // expected-error @below {{'recur.lstm_recurrence' op a projected recurrence (w_hr) has the separate schedule and PyTorch's layout}}
  %y, %h, %c = recur.lstm_recurrence %g, %w_hh proj(%w_hr) cell<fused>
      : (tensor<5x2x24xf32>, tensor<24x4xf32>, tensor<4x6xf32>)
      -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x6xf32>)
  return %y : tensor<5x2x4xf32>
}

// -----

func.func @lstm_no_hidden_units(%x: tensor<5x2x8xf32>, %w_ih: tensor<0x8xf32>,
    %w_hh: tensor<0x0xf32>) -> tensor<5x2x0xf32> {
  // expected-error @below {{'recur.lstm' op has 0 hidden units; an LSTM needs at least one}}
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh
      : (tensor<5x2x8xf32>, tensor<0x8xf32>, tensor<0x0xf32>)
      -> (tensor<5x2x0xf32>, tensor<2x0xf32>, tensor<2x0xf32>)
  return %y : tensor<5x2x0xf32>
}

// -----

func.func @lstm_projection_to_nothing(%x: tensor<5x2x8xf32>, %w_ih: tensor<16x8xf32>,
    %w_hh: tensor<16x0xf32>, %w_hr: tensor<0x4xf32>) -> tensor<5x2x0xf32> {
  // expected-error @below {{'recur.lstm' op projects the hidden state to 0 of 4 units; a projection (w_hr) must make it smaller and keep at least one}}
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh proj(%w_hr)
      : (tensor<5x2x8xf32>, tensor<16x8xf32>, tensor<16x0xf32>, tensor<0x4xf32>)
      -> (tensor<5x2x0xf32>, tensor<2x0xf32>, tensor<2x4xf32>)
  return %y : tensor<5x2x0xf32>
}

// -----

func.func @lstm_recurrence_projection_not_smaller(%g: tensor<3x2x16xf32>,
    %w_hh: tensor<16x4xf32>, %w_hr: tensor<4x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @below {{'recur.lstm_recurrence' op projects the hidden state to 4 of 4 units; a projection (w_hr) must make it smaller and keep at least one}}
  %y, %h, %c = recur.lstm_recurrence %g, %w_hh proj(%w_hr)
      : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<4x4xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y : tensor<3x2x4xf32>
}

// -----

func.func @lstm_recurrence_no_hidden_units(%g: tensor<3x2x0xf32>, %w_hh: tensor<0x0xf32>) -> tensor<3x2x0xf32> {
  // expected-error @below {{'recur.lstm_recurrence' op has 0 hidden units; an LSTM needs at least one}}
  %y, %h, %c = recur.lstm_recurrence %g, %w_hh
      : (tensor<3x2x0xf32>, tensor<0x0xf32>) -> (tensor<3x2x0xf32>, tensor<2x0xf32>, tensor<2x0xf32>)
  return %y : tensor<3x2x0xf32>
}

// -----

func.func @lstm_wavefront_no_hidden_units(%g: tensor<3x2x16xf32>, %w: tensor<16x4xf32>,
    %w1_ih: tensor<0x4xf32>, %w1_hh: tensor<0x0xf32>, %b1: tensor<0xf32>) {
  // expected-error @below {{'recur.lstm_wavefront' op has 0 hidden units; an LSTM needs at least one}}
  %y, %s:4 = recur.lstm_wavefront %g w_hh(%w, %w1_hh) w_ih(%w1_ih) bias(%b1)
      : (tensor<3x2x16xf32>, tensor<16x4xf32>, tensor<0x0xf32>, tensor<0x4xf32>, tensor<0xf32>)
      -> (tensor<3x2x0xf32>, tensor<2x4xf32>, tensor<2x0xf32>, tensor<2x4xf32>, tensor<2x0xf32>)
  return
}

// -----

func.func @lstm_grad_no_hidden_units(%x: tensor<3x2x5xf32>, %wi: tensor<0x5xf32>, %wh: tensor<0x0xf32>, %b: tensor<0xf32>, %y: tensor<3x2x0xf32>) {
  // expected-error @below {{'recur.lstm_grad' op has 0 hidden units; an LSTM needs at least one}}
  %0:6 = recur.lstm_grad %x, %wi, %wh, %b, %b y(%y) d_y(%y) : (tensor<3x2x5xf32>, tensor<0x5xf32>, tensor<0x0xf32>, tensor<0xf32>, tensor<0xf32>, tensor<3x2x0xf32>, tensor<3x2x0xf32>) -> (tensor<3x2x5xf32>, tensor<0x5xf32>, tensor<0x0xf32>, tensor<0xf32>, tensor<2x0xf32>, tensor<2x0xf32>)
  return
}

// -----

func.func @pack_panels_odd_pairs(%w: tensor<37x7xbf16>) {
  // expected-error @below {{'recur.pack_panels' op packs K = 7 in pairs; pairs need an even K}}
  %0 = recur.pack_panels %w tile(16) pairs : tensor<37x7xbf16> -> tensor<3x3x16x2xbf16>
  return
}

// -----

func.func @pack_panels_pairs_result(%w: tensor<37x8xbf16>) {
  // expected-error @below {{'recur.pack_panels' op result expected 'tensor<3x4x16x2xbf16>', got 'tensor<3x8x16xbf16>'}}
  %0 = recur.pack_panels %w tile(16) pairs : tensor<37x8xbf16> -> tensor<3x8x16xbf16>
  return
}

// -----

func.func @pack_panels_pairs_of_f32(%w: tensor<37x8xf32>) {
  // expected-error @below {{'recur.pack_panels' op packs 'tensor<37x8xf32>' in pairs of k; pairs are of bf16}}
  %0 = recur.pack_panels %w tile(16) pairs : tensor<37x8xf32> -> tensor<3x4x16x2xf32>
  return
}

// -----

func.func @linear_packed_rank(%x: tensor<5x8xf32>, %w: tensor<3x4x16x2x1xbf16>) {
  // expected-error @below {{'recur.linear' op operand 'weight' packed in panels must be [P, K, t], or [P, K/2, t, 2] in pairs of k, got 'tensor<3x4x16x2x1xbf16>'}}
  %0 = recur.linear %x, %w : (tensor<5x8xf32>, tensor<3x4x16x2x1xbf16>) -> tensor<5x37xf32>
  return
}

// -----

func.func @linear_pairs_depth(%x: tensor<5x8xf32>, %w: tensor<3x8x16x2xbf16>) {
  // expected-error @below {{'recur.linear' op operand 'weight' packed in pairs of k expected shape [P, K/2 = 4, t, 2] with K static, got 'tensor<3x8x16x2xbf16>'}}
  %0 = recur.linear %x, %w : (tensor<5x8xf32>, tensor<3x8x16x2xbf16>) -> tensor<5x37xf32>
  return
}

// -----

func.func @linear_pairs_odd_depth(%x: tensor<5x7xf32>, %w: tensor<3x3x16x2xbf16>) {
  // expected-error @below {{'recur.linear' op operand 'weight' packed in pairs of k expected shape [P, K/2 = 3 (K odd), t, 2] with K static, got 'tensor<3x3x16x2xbf16>'}}
  %0 = recur.linear %x, %w : (tensor<5x7xf32>, tensor<3x3x16x2xbf16>) -> tensor<5x37xf32>
  return
}

// -----

func.func @linear_pairs_panels(%x: tensor<5x8xf32>, %w: tensor<2x4x16x2xbf16>) {
  // expected-error @below {{'recur.linear' op operand 'weight' packed in panels of 16 rows for N = 37 needs 3 panels, got 2}}
  %0 = recur.linear %x, %w : (tensor<5x8xf32>, tensor<2x4x16x2xbf16>) -> tensor<5x37xf32>
  return
}

// -----

func.func @linear_pairs_not_bf16(%x: tensor<5x8xf32>, %w: tensor<3x4x16x2xf32>) {
  // expected-error @below {{'recur.linear' op operand 'weight' packed in pairs of k must be bf16 and read by an f32 op, got 'tensor<3x4x16x2xf32>' read by 'tensor<5x8xf32>'}}
  %0 = recur.linear %x, %w : (tensor<5x8xf32>, tensor<3x4x16x2xf32>) -> tensor<5x37xf32>
  return
}

// -----

func.func @linear_pairs_not_pairs(%x: tensor<5x8xf32>, %w: tensor<3x4x16x3xbf16>) {
  // expected-error @below {{'recur.linear' op operand 'weight' packed in pairs of k must have a static shape [P, K/2, t, 2], got 'tensor<3x4x16x3xbf16>'}}
  %0 = recur.linear %x, %w : (tensor<5x8xf32>, tensor<3x4x16x3xbf16>) -> tensor<5x37xf32>
  return
}

// -----

// A bf16 weight packed without pairs is no weight of an f32 linear.
func.func @linear_bf16_panels(%x: tensor<5x8xf32>, %w: tensor<3x8x16xbf16>) {
  // expected-error @below {{'recur.linear' op operand 'weight' expected element type 'f32' (that of operand 'input'), got 'bf16'}}
  %0 = recur.linear %x, %w : (tensor<5x8xf32>, tensor<3x8x16xbf16>) -> tensor<5x37xf32>
  return
}

// -----

func.func @linear_empty_panels(%x: tensor<5x6xf32>, %w: tensor<1x6x0xf32>) {
  // expected-error @below {{'recur.linear' op operand 'weight' packed in panels of 0 rows; a panel holds at least one}}
  %0 = recur.linear %x, %w : (tensor<5x6xf32>, tensor<1x6x0xf32>) -> tensor<5x11xf32>
  return
}

// -----

func.func @recurrence_pairs_panels(%g: tensor<3x2x24xf32>, %w: tensor<3x3x16x2xbf16>) {
  // expected-error @below {{'recur.lstm_recurrence' op operand 'w_hh' packed in panels of 16 rows for 4*H = 24 needs 2 panels, got 3}}
  %y, %h, %c = recur.lstm_recurrence %g, %w : (tensor<3x2x24xf32>, tensor<3x3x16x2xbf16>) -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @recurrence_pairs_fused_tile(%g: tensor<3x2x24xf32>, %w: tensor<1x3x24x2xbf16>) {
  // expected-error @below {{'recur.lstm_recurrence' op a packed w_hh read by cell<fused> needs interleaved(K) and panels of 4*K rows (the four gates of K units), got panels of 24 rows for K = 2}}
  %y, %h, %c = recur.lstm_recurrence %g, %w interleaved(2) cell<fused> : (tensor<3x2x24xf32>, tensor<1x3x24x2xbf16>) -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

func.func @recurrence_empty_panels(%g: tensor<3x2x16xf32>, %w: tensor<2x2x0x2xbf16>) {
  // expected-error @below {{'recur.lstm_recurrence' op operand 'w_hh' packed in panels of 0 rows; a panel holds at least one}}
  %y, %h, %c = recur.lstm_recurrence %g, %w : (tensor<3x2x16xf32>, tensor<2x2x0x2xbf16>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

// A fused step's lowering config: typed, and checked where it is attached.
func.func @unit_step_not_typed(%x: memref<4x4xf32>) {
  // expected-error @below {{'recur.unit_step' must be a #recur.unit_step attribute, got {batch = 0 : i64}}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%x : memref<4x4xf32>) attrs = {recur.unit_step = {batch = 0 : i64}} {
  ^bb0(%out: f32):
    linalg.yield %out : f32
  }
  return
}

// -----

// expected-error @below {{'recur.unit_step' belongs on a linalg.generic}}
func.func @unit_step_on_a_function() attributes {
  recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [4], gate_tiles = [0]>} {
  return
}

// -----

func.func @unit_step_out_of_the_nest(%x: memref<4x4xf32>) {
  // expected-error @below {{'recur.unit_step' names iteration dimension 2 of a loop nest of 2}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%x : memref<4x4xf32>) attrs = {recur.unit_step = #recur.unit_step<batch = 0, unit = 2, hidden = [4], gate_tiles = [0]>} {
  ^bb0(%out: f32):
    linalg.yield %out : f32
  }
  return
}

// -----

// expected-error @below {{the batch, unit and layer dimensions must be distinct and non-negative, got [0, 0]}}
func.func @unit_step_same_dims() attributes {test.step = #recur.unit_step<batch = 0, unit = 0, hidden = [4], gate_tiles = [0]>} {
  return
}

// -----

// expected-error @below {{expected hidden sizes and gate tiles for every layer, got 2 and 1}}
func.func @unit_step_tiles_per_layer() attributes {test.step = #recur.unit_step<batch = 0, unit = 1, layer = 2, hidden = [4, 4], gate_tiles = [0]>} {
  return
}

// -----

// expected-error @below {{a step has at least one gate per unit, got 0}}
func.func @unit_step_no_gates() attributes {test.step = #recur.unit_step<batch = 0, unit = 1, hidden = [4], gate_tiles = [0], gates = 0>} {
  return
}

// -----

// expected-error @below {{a step of 2 layers needs its layer dimension}}
func.func @unit_step_no_layer() attributes {test.step = #recur.unit_step<batch = 0, unit = 1, hidden = [4, 4], gate_tiles = [0, 0]>} {
  return
}

// -----

// expected-error @below {{each layer's gate tile must be 0 or divide its hidden size, got tile 3 for 4 units}}
func.func @unit_step_tile() attributes {test.step = #recur.unit_step<batch = 0, unit = 1, hidden = [4], gate_tiles = [3]>} {
  return
}

// -----

// A panel GEMM's lowering config: typed, on a contraction whose weight map is
// the layout's.
func.func @panel_gemm_not_typed(%x: memref<4x4xf32>, %w: memref<4x4xf32>, %y: memref<4x4xf32>) {
  // expected-error @below {{'recur.panel_gemm' must be a #recur.panel_gemm attribute, got 64 : i64}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x4xf32>, memref<4x4xf32>) outs(%y : memref<4x4xf32>) attrs = {recur.panel_gemm = 64} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    linalg.yield %c : f32
  }
  return
}

// -----

// expected-error @below {{the panel width must be positive, got 0}}
func.func @panel_gemm_empty_panels() attributes {test.gemm = #recur.panel_gemm<tile = 0, layout = packed>} {
  return
}

// -----

func.func @panel_gemm_on_a_copy(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  // expected-error @below {{'recur.panel_gemm' belongs on a linalg.generic contraction of two inputs into one output}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x4xf32>) outs(%y : memref<4x4xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 16, layout = packed>} {
  ^bb0(%a: f32, %c: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

func.func @panel_gemm_without_reduction(%x: memref<4x4xf32>, %w: memref<4x4xf32>, %y: memref<4x4xf32>) {
  // expected-error @below {{'recur.panel_gemm' needs loops (..., n, k) with k the only reduction}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : memref<4x4xf32>, memref<4x4xf32>) outs(%y : memref<4x4xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 16, layout = in_place>} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    linalg.yield %c : f32
  }
  return
}

// -----

func.func @panel_gemm_layout_disagrees(%x: memref<5x6xf32>, %w: memref<1x6x16xf32>, %y: memref<5x11xf32>) {
  // expected-error @below {{'recur.panel_gemm' with layout packed reads the weight by affine_map<(d0, d1, d2) -> (d1 floordiv 32, d2, d1 mod 32)>, but the loop nest reads it by affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2, d1 mod 16)>}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1 floordiv 16, d2, d1 mod 16)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<5x6xf32>, memref<1x6x16xf32>) outs(%y : memref<5x11xf32>) attrs = {recur.panel_gemm = #recur.panel_gemm<tile = 32, layout = packed>} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    linalg.yield %c : f32
  }
  return
}

// -----

// expected-error @below {{expected ::mlir::recur::PanelLayout to be one of: packed, pairs, in_place}}
// expected-error @below {{failed to parse Recur_PanelGemmAttr parameter 'layout'}}
func.func @panel_gemm_unknown_layout() attributes {test.gemm = #recur.panel_gemm<tile = 16, layout = columns>} {
  return
}

// -----

// The GPU's lowering configs check their tiles.
// expected-error @below {{precision tf32 takes a warp_tile of [m, n] (tensor cores, a tile per warp) and no other}}
func.func @gpu_gemm_simt_tile_on_tensor_cores() attributes {test.gemm = #recur.gpu_gemm<precision = tf32, tile = [128, 128, 16], thread_tile = [8, 8]>} {
  return
}

// -----

// expected-error @below {{tile must be [m, n, k], got 2 sizes}}
func.func @gpu_gemm_no_k() attributes {test.gemm = #recur.gpu_gemm<precision = fp32, tile = [128, 128], thread_tile = [8, 8]>} {
  return
}

// -----

// expected-error @below {{warp tiles must be multiples of 16 rows and 8 columns (mma.sync's m16n8)}}
func.func @gpu_gemm_odd_warp_tile() attributes {test.gemm = #recur.gpu_gemm<precision = bf16, tile = [64, 64, 16], warp_tile = [32, 4]>} {
  return
}

// -----

// 16 x 8 k over (16 / 2) * (16 / 2) = 64 threads: 2 each, but the other
// operand's 32 x 8 k would need 4.
// expected-error @below {{a slice of 32 rows and 8 k must split into parts of 1, 2 or 4 consecutive k, one per thread (32 threads)}}
func.func @gpu_gemm_uneven_loads() attributes {test.gemm = #recur.gpu_gemm<precision = fp32, tile = [32, 64, 8], thread_tile = [4, 16]>} {
  return
}

// -----

// expected-error @below {{on tensor cores, units must be a multiple of 4 (16 slot rows, an MMA's m) and block_size of 32 (whole warps), got 2 and 256}}
func.func @stationary_step_small_group() attributes {test.step = #recur.stationary_step<precision = tf32, units = 2, block_size = 256, max_lanes = 32>} {
  return
}

// -----

// expected-error @below {{max_lanes must be a power of two up to 32 (a warp), got 64}}
func.func @stationary_step_wide_lanes() attributes {test.step = #recur.stationary_step<precision = fp32, units = 2, block_size = 256, max_lanes = 64>} {
  return
}

// -----

func.func @stationary_step_not_on_a_step(%x: memref<4xf32>) {
  // expected-error @below {{'recur.stationary_step' must be a #recur.stationary_step on a fused step (a linalg.generic with 'recur.unit_step')}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%x : memref<4xf32>) attrs = {recur.stationary_step = #recur.stationary_step<precision = fp32, units = 2, block_size = 256, max_lanes = 32>} {
  ^bb0(%a: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// expected-error @below {{block_size must be whole warps, 32 to 1024 threads, got 48}}
func.func @gpu_row_group_partial_warp() attributes {test.row = #recur.gpu_row_group<block_size = 48>} {
  return
}

// -----

func.func @gpu_row_group_not_on_a_generic(%x: memref<4xf32>) {
  %cst = arith.constant 0.0 : f32
  // expected-error @below {{'recur.gpu_row_group' must be a #recur.gpu_row_group on a linalg.generic}}
  linalg.fill {recur.gpu_row_group = 1 : i32} ins(%cst : f32) outs(%x : memref<4xf32>)
  return
}

// -----

// expected-error @below {{'recur.dims' must be an array of "T", "B" or "", one per dimension, got ["T", "N"]}}
func.func @dims_unknown_symbol(%a: tensor<?x?xf32> {recur.input = "x", recur.dims = ["T", "N"]}) {
  return
}

// -----

// expected-error @below {{'recur.dims' names 2 dimensions of 'tensor<?x1x?xf32>'}}
func.func @dims_wrong_rank() -> (tensor<?x1x?xf32> {recur.output = "y", recur.dims = ["T", "B"]}) {
  %0 = tensor.empty() : tensor<0x1x0xf32>
  %1 = tensor.cast %0 : tensor<0x1x0xf32> to tensor<?x1x?xf32>
  return %1 : tensor<?x1x?xf32>
}
