// RUN: recur-opt %s -split-input-file -verify-diagnostics

// Malformed recur IR gets a diagnostic with a location, never a crash.

func.func @missing_operand(%t: tensor<10x8xf32>) {
  // expected-error @below {{expected SSA operand}}
  %0 = recur.embedding %t[] : (tensor<10x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return
}

// -----

func.func @operand_type_count(%t: tensor<10x8xf32>, %i: tensor<4xi64>) {
  // expected-error @below {{number of operands and types do not match: got 2 operands and 1 types}}
  %0 = recur.embedding %t[%i] : (tensor<10x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @unknown_reduction(%l: tensor<3x10xf32>, %t: tensor<3xi64>) {
  // expected-error @below {{expected ::mlir::recur::Reduction to be one of: none, mean, sum}}
  // expected-error @below {{failed to parse Recur_ReductionAttr parameter 'value'}}
  %0 = recur.cross_entropy %l, %t reduction<avg> : (tensor<3x10xf32>, tensor<3xi64>) -> tensor<f32>
  return
}

// -----

func.func @lstm_result_count(%x: tensor<3x2x4xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{operation defines 3 results but was provided 1 to bind}}
  %y = recur.lstm %x, %w, %w, %b, %b : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @lstm_missing_weights(%x: tensor<3x2x4xf32>, %w: tensor<16x4xf32>) {
  // expected-error @below {{expected ','}}
  %y, %h, %c = recur.lstm %x, %w : (tensor<3x2x4xf32>, tensor<16x4xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @generic_form_with_wrong_operand_count(%x: tensor<3x2x4xf32>) {
  // expected-error @below {{'recur.log_softmax' op requires a single operand}}
  %0 = "recur.log_softmax"(%x, %x) : (tensor<3x2x4xf32>, tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  return
}

// -----

func.func @generic_lstm_bad_segments(%x: tensor<3x2x4xf32>, %w: tensor<16x4xf32>, %b: tensor<16xf32>) {
  // expected-error @below {{'recur.lstm' op operand count (5) does not match with the total size (6) specified in attribute 'operandSegmentSizes'}}
  %0:3 = "recur.lstm"(%x, %w, %w, %b, %b) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1, 0, 0>}> : (tensor<3x2x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @use_of_undefined_value(%t: tensor<10x8xf32>) {
  // expected-error @below {{use of undeclared SSA value name}}
  %0 = recur.embedding %t[%nope] : (tensor<10x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return
}
