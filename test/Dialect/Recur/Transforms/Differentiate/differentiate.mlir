// RUN: recur-opt %s -split-input-file --recur-differentiate | FileCheck %s

// A one-layer LM's training step: gradients from the loss back through every
// op, in reverse order, then the clipping over all weights' gradients (the
// LSTM's two biases share theirs), then the updates. Each update is a result
// naming its weight.

// CHECK-LABEL: func.func @lm
// CHECK-SAME: -> (tensor<f32> {recur.output = "loss"},
// CHECK-SAME: tensor<13x5xf32> {recur.update = "embedding.weight"},
// CHECK-SAME: tensor<28x5xf32> {recur.update = "lstm.weight_ih_l0"},
// CHECK-SAME: tensor<28x7xf32> {recur.update = "lstm.weight_hh_l0"},
// CHECK-SAME: tensor<28xf32> {recur.update = "lstm.bias_ih_l0"},
// CHECK-SAME: tensor<28xf32> {recur.update = "lstm.bias_hh_l0"},
// CHECK-SAME: tensor<13x7xf32> {recur.update = "proj.weight"},
// CHECK-SAME: tensor<13xf32> {recur.update = "proj.bias"})
// CHECK-SAME: attributes {recur.train = #recur.sgd<lr = 2.000000e+01, clip_norm = 2.500000e-01>}
// CHECK: %[[X:.*]] = recur.embedding %[[TABLE:.*]][%[[TOKENS:.*]]]
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = recur.lstm %[[X]], %[[WIH:.*]], %[[WHH:.*]], %[[BIH:.*]], %[[BHH:.*]] :
// CHECK: %[[LOGITS:.*]] = recur.linear %[[Y]], %[[PW:.*]] bias(%[[PB:.*]]) :
// CHECK: %[[LOSS:.*]] = recur.cross_entropy %[[LOGITS]], %[[TARGETS:.*]] :
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DLOGITS:.*]] = recur.cross_entropy_grad %[[LOGITS]], %[[TARGETS]], %[[ONE]] :
// CHECK: %[[DY:.*]], %[[DPW:.*]], %[[DPB:.*]] = recur.linear_grad %[[DLOGITS]], %[[Y]], %[[PW]] :
// CHECK: %[[DX:.*]], %[[DWIH:.*]], %[[DWHH:.*]], %[[DB:.*]] = recur.lstm_grad %[[X]], %[[WIH]], %[[WHH]], %[[BIH]], %[[BHH]], %[[Y]], %[[DY]] :
// CHECK: %[[DTABLE:.*]] = recur.embedding_grad %[[DX]][%[[TOKENS]]] rows(13) :
// CHECK: %[[NORM:.*]], %[[G:.*]]:7 = recur.clip_grad_norm %[[DTABLE]], %[[DWIH]], %[[DWHH]], %[[DB]], %[[DB]], %[[DPW]], %[[DPB]] max_norm(2.500000e-01) :
// CHECK: %[[U0:.*]] = recur.sgd_update %[[TABLE]], %[[G]]#0 lr(2.000000e+01) : tensor<13x5xf32>
// CHECK: %[[U6:.*]] = recur.sgd_update %[[PB]], %[[G]]#6 lr(2.000000e+01) : tensor<13xf32>
// CHECK: return %[[LOSS]], %[[U0]], {{.*}}, %[[U6]] :
func.func @lm(%tokens: tensor<?x?xi64> {recur.input = "tokens"},
    %targets: tensor<?x?xi64> {recur.input = "targets"},
    %table: tensor<13x5xf32> {recur.weight = "embedding.weight"},
    %w_ih: tensor<28x5xf32> {recur.weight = "lstm.weight_ih_l0"},
    %w_hh: tensor<28x7xf32> {recur.weight = "lstm.weight_hh_l0"},
    %b_ih: tensor<28xf32> {recur.weight = "lstm.bias_ih_l0"},
    %b_hh: tensor<28xf32> {recur.weight = "lstm.bias_hh_l0"},
    %proj_w: tensor<13x7xf32> {recur.weight = "proj.weight"},
    %proj_b: tensor<13xf32> {recur.weight = "proj.bias"})
    -> (tensor<f32> {recur.output = "loss"})
    attributes {recur.train = #recur.sgd<lr = 20.0, clip_norm = 0.25>} {
  %x = recur.embedding %table[%tokens] : (tensor<13x5xf32>, tensor<?x?xi64>) -> tensor<?x?x5xf32>
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b_ih, %b_hh
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>)
      -> (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  %logits = recur.linear %y, %proj_w bias(%proj_b)
      : (tensor<?x?x7xf32>, tensor<13x7xf32>, tensor<13xf32>) -> tensor<?x?x13xf32>
  %loss = recur.cross_entropy %logits, %targets : (tensor<?x?x13xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Without clip_norm there is no clipping. A model input needs no gradient: the
// layer's d_input is left unused (and so is not computed). A weight the loss
// does not depend on is not updated. A weight used twice (tied embedding and
// projection) gets the sum of its two gradients.

// CHECK-LABEL: func.func @tied_no_clip
// CHECK-SAME: -> (tensor<f32> {recur.output = "loss"}, tensor<13x7xf32> {recur.update = "tied"})
// CHECK-NOT: recur.clip_grad_norm
// CHECK: %[[DLOGITS:.*]] = recur.cross_entropy_grad
// CHECK: %{{.*}}, %[[DW:.*]], %{{.*}} = recur.linear_grad %[[DLOGITS]], %{{.*}}, %[[TIED:[^ ]*]] :
// CHECK: %[[DE:.*]] = recur.embedding_grad
// CHECK: %[[SUM:.*]] = arith.addf %[[DW]], %[[DE]] : tensor<13x7xf32>
// CHECK-NOT: recur.clip_grad_norm
// CHECK: %[[U:.*]] = recur.sgd_update %[[TIED]], %[[SUM]] lr(1.000000e-01)
// CHECK: return %{{.*}}, %[[U]] : tensor<f32>, tensor<13x7xf32>
func.func @tied_no_clip(%tokens: tensor<4x2xi64> {recur.input = "tokens"},
    %targets: tensor<4x2xi64> {recur.input = "targets"},
    %tied: tensor<13x7xf32> {recur.weight = "tied"},
    %unused: tensor<3xf32> {recur.weight = "unused"})
    -> (tensor<f32> {recur.output = "loss"})
    attributes {recur.train = #recur.sgd<lr = 0.1>} {
  %x = recur.embedding %tied[%tokens] : (tensor<13x7xf32>, tensor<4x2xi64>) -> tensor<4x2x7xf32>
  %logits = recur.linear %x, %tied : (tensor<4x2x7xf32>, tensor<13x7xf32>) -> tensor<4x2x13xf32>
  %loss = recur.cross_entropy %logits, %targets : (tensor<4x2x13xf32>, tensor<4x2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A training step that already returns its updates (the IR printed after this
// pass) is left alone, so that the pipeline runs on it as on the model.

// CHECK-LABEL: func.func @differentiated
// CHECK: recur.cross_entropy_grad
// CHECK-NOT: recur.cross_entropy_grad
// CHECK: recur.sgd_update
// CHECK-NOT: recur.sgd_update
// CHECK: return
func.func @differentiated(%x: tensor<4x7xf32>,
    %targets: tensor<4xi64> {recur.input = "targets"},
    %w: tensor<13x7xf32> {recur.weight = "w"})
    -> (tensor<f32> {recur.output = "loss"}, tensor<13x7xf32> {recur.update = "w"})
    attributes {recur.train = #recur.sgd<lr = 0.1>} {
  %logits = recur.linear %x, %w : (tensor<4x7xf32>, tensor<13x7xf32>) -> tensor<4x13xf32>
  %loss = recur.cross_entropy %logits, %targets : (tensor<4x13xf32>, tensor<4xi64>) -> tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %d_logits = recur.cross_entropy_grad %logits, %targets, %one : (tensor<4x13xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x13xf32>
  %d_x, %d_w, %d_b = recur.linear_grad %d_logits, %x, %w : (tensor<4x13xf32>, tensor<4x7xf32>, tensor<13x7xf32>) -> (tensor<4x7xf32>, tensor<13x7xf32>, tensor<13xf32>)
  %new_w = recur.sgd_update %w, %d_w lr(0.1) : tensor<13x7xf32>
  return %loss, %new_w : tensor<f32>, tensor<13x7xf32>
}

// -----

// A function that is not a training step is left alone.

// CHECK-LABEL: func.func @inference
// CHECK-NOT: _grad
// CHECK: return
func.func @inference(%x: tensor<4x7xf32>, %w: tensor<13x7xf32> {recur.weight = "w"}) -> tensor<4x13xf32> {
  %0 = recur.linear %x, %w : (tensor<4x7xf32>, tensor<13x7xf32>) -> tensor<4x13xf32>
  return %0 : tensor<4x13xf32>
}
