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
// CHECK: %[[DX:.*]], %[[DWIH:.*]], %[[DWHH:.*]], %[[DB:.*]], %{{.*}}, %{{.*}} = recur.lstm_grad %[[X]], %[[WIH]], %[[WHH]], %[[BIH]], %[[BHH]] y(%[[Y]]) d_y(%[[DY]]) :
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

// -----

// A layer with an initial state and no biases, whose loss reads its final
// hidden state only: the gradient op takes h0 and d_h_n, and no d_y (zero).
// CHECK-LABEL: func.func @final_state_loss
// CHECK: %[[Y:.*]], %[[H:.*]], %{{.*}} = recur.lstm %[[X:[^,]*]], %[[WIH:[^,]*]], %[[WHH:[^ ]*]] h0(%[[H0:[^)]*]])
// CHECK: %[[DH:.*]], %{{.*}}, %{{.*}} = recur.linear_grad %{{.*}}, %[[H]], %{{.*}} :
// CHECK: recur.lstm_grad %[[X]], %[[WIH]], %[[WHH]] y(%[[Y]]) h0(%[[H0]]) d_h_n(%[[DH]]) :
func.func @final_state_loss(%x: tensor<3x2x5xf32> {recur.input = "x"}, %t: tensor<2xi64> {recur.input = "t"},
    %h0: tensor<2x7xf32> {recur.input = "h0"},
    %w_ih: tensor<28x5xf32> {recur.weight = "w_ih"}, %w_hh: tensor<28x7xf32> {recur.weight = "w_hh"},
    %p: tensor<13x7xf32> {recur.weight = "p"}) -> (tensor<f32> {recur.output = "loss"})
    attributes {recur.train = #recur.sgd<lr = 0.1>} {
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh h0(%h0)
      : (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<2x7xf32>)
      -> (tensor<3x2x7xf32>, tensor<2x7xf32>, tensor<2x7xf32>)
  %logits = recur.linear %h, %p : (tensor<2x7xf32>, tensor<13x7xf32>) -> tensor<2x13xf32>
  %loss = recur.cross_entropy %logits, %t : (tensor<2x13xf32>, tensor<2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// recur.vjp: the layer's backward for a caller's autograd. Arguments: the
// forward's, then its kept output (the backward reads y), then one gradient
// per result; results: one gradient per float argument. The forward op is
// gone: the kept output replaces it.
// CHECK-LABEL: func.func @vjp_layer
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x5xf32> {recur.input = "input"}, %[[H0:[^:]*]]: tensor<?x7xf32> {recur.input = "h0"}, %[[C0:[^:]*]]: tensor<?x7xf32> {recur.input = "c0"}
// CHECK-SAME: %[[WIH:[^:]*]]: tensor<28x5xf32> {recur.weight = "weight_ih"}, %[[WHH:[^:]*]]: tensor<28x7xf32> {recur.weight = "weight_hh"}, %[[BIH:[^:]*]]: tensor<28xf32> {recur.weight = "bias_ih"}, %[[BHH:[^:]*]]: tensor<28xf32> {recur.weight = "bias_hh"}
// CHECK-SAME: %[[KEPT:[^:]*]]: tensor<?x?x7xf32> {recur.input = "output"}, %[[DY:[^:]*]]: tensor<?x?x7xf32> {recur.input = "d_output"}, %[[DHN:[^:]*]]: tensor<?x7xf32> {recur.input = "d_h_n"}, %[[DCN:[^:]*]]: tensor<?x7xf32> {recur.input = "d_c_n"})
// CHECK-SAME: -> (tensor<?x?x5xf32> {recur.output = "d_input"}, tensor<?x7xf32> {recur.output = "d_h0"}, tensor<?x7xf32> {recur.output = "d_c0"}, tensor<28x5xf32> {recur.output = "d_weight_ih"}, tensor<28x7xf32> {recur.output = "d_weight_hh"}, tensor<28xf32> {recur.output = "d_bias_ih"}, tensor<28xf32> {recur.output = "d_bias_hh"})
// CHECK-SAME: attributes {recur.backward}
// CHECK-NOT: recur.lstm %
// CHECK: %[[DX:.*]], %[[DWIH:.*]], %[[DWHH:.*]], %[[DB:.*]], %[[DH0:.*]], %[[DC0:.*]] = recur.lstm_grad %[[X]], %[[WIH]], %[[WHH]], %[[BIH]], %[[BHH]] y(%[[KEPT]]) d_y(%[[DY]]) h0(%[[H0]]) c0(%[[C0]]) d_h_n(%[[DHN]]) d_c_n(%[[DCN]]) :
// CHECK: return %[[DX]], %[[DH0]], %[[DC0]], %[[DWIH]], %[[DWHH]], %[[DB]], %[[DB]] :
func.func @vjp_layer(%x: tensor<?x?x5xf32> {recur.input = "input"},
    %h0: tensor<?x7xf32> {recur.input = "h0"}, %c0: tensor<?x7xf32> {recur.input = "c0"},
    %w_ih: tensor<28x5xf32> {recur.weight = "weight_ih"}, %w_hh: tensor<28x7xf32> {recur.weight = "weight_hh"},
    %b_ih: tensor<28xf32> {recur.weight = "bias_ih"}, %b_hh: tensor<28xf32> {recur.weight = "bias_hh"})
    -> (tensor<?x?x7xf32> {recur.output = "output"}, tensor<?x7xf32> {recur.output = "h_n"},
        tensor<?x7xf32> {recur.output = "c_n"}) attributes {recur.vjp} {
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b_ih, %b_hh h0(%h0) c0(%c0)
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>,
         tensor<?x7xf32>, tensor<?x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  return %y, %h, %c : tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>
}

// -----

// Two layers: the kept output is the top layer's y; the lower layer's y is
// not kept, so its forward stays (recomputed) and feeds both backwards.
// CHECK-LABEL: func.func @vjp_two_layers
// CHECK-SAME: %[[KEPT:[^:]*]]: tensor<?x?x7xf32> {recur.input = "output"}, %[[DY:[^:]*]]: tensor<?x?x7xf32> {recur.input = "d_output"})
// CHECK: %[[Y0:.*]], %{{.*}}, %{{.*}} = recur.lstm
// CHECK-NOT: recur.lstm %
// CHECK: %[[D1:.*]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = recur.lstm_grad %[[Y0]], {{.*}} y(%[[KEPT]]) d_y(%[[DY]]) :
// CHECK: recur.lstm_grad %{{.*}} y(%[[Y0]]) d_y(%[[D1]]) :
func.func @vjp_two_layers(%x: tensor<?x?x5xf32> {recur.input = "input"},
    %w0: tensor<28x5xf32> {recur.weight = "w0"}, %u0: tensor<28x7xf32> {recur.weight = "u0"},
    %w1: tensor<28x7xf32> {recur.weight = "w1"}, %u1: tensor<28x7xf32> {recur.weight = "u1"})
    -> (tensor<?x?x7xf32> {recur.output = "output"}) attributes {recur.vjp} {
  %y0, %h0, %c0 = recur.lstm %x, %w0, %u0
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  %y1, %h1, %c1 = recur.lstm %y0, %w1, %u1
      : (tensor<?x?x7xf32>, tensor<28x7xf32>, tensor<28x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  return %y1 : tensor<?x?x7xf32>
}

// -----

// A kept activation (recur.kept: a layer's output, returned for the
// backward only) gets no gradient argument; the backward takes it back, so
// the layer's forward is not recomputed. An integer input gets no gradient.
// CHECK-LABEL: func.func @vjp_kept
// CHECK-SAME: %[[TOKENS:[^:]*]]: tensor<?x?xi64> {recur.input = "tokens"}
// CHECK-SAME: %[[KEPT:[^:]*]]: tensor<?x?x7xf32> {recur.input = "y_l0"}, %[[DL:[^:]*]]: tensor<?x?x13xf32> {recur.input = "d_logits"})
// CHECK-SAME: -> (tensor<13x5xf32> {recur.output = "d_embedding.weight"}, tensor<28x5xf32> {recur.output = "d_w_ih"}, tensor<28x7xf32> {recur.output = "d_w_hh"}, tensor<13x7xf32> {recur.output = "d_proj"})
// CHECK-NOT: d_y_l0
// CHECK-NOT: recur.lstm %
// CHECK: %[[DY:.*]], %{{.*}}, %{{.*}} = recur.linear_grad %[[DL]], %[[KEPT]], %{{.*}} :
// CHECK: recur.lstm_grad %{{.*}} y(%[[KEPT]]) d_y(%[[DY]]) :
func.func @vjp_kept(%tokens: tensor<?x?xi64> {recur.input = "tokens"},
    %table: tensor<13x5xf32> {recur.weight = "embedding.weight"},
    %w_ih: tensor<28x5xf32> {recur.weight = "w_ih"}, %w_hh: tensor<28x7xf32> {recur.weight = "w_hh"},
    %p: tensor<13x7xf32> {recur.weight = "proj"})
    -> (tensor<?x?x13xf32> {recur.output = "logits"}, tensor<?x?x7xf32> {recur.output = "y_l0", recur.kept})
    attributes {recur.vjp} {
  %x = recur.embedding %table[%tokens] : (tensor<13x5xf32>, tensor<?x?xi64>) -> tensor<?x?x5xf32>
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  %logits = recur.linear %y, %p : (tensor<?x?x7xf32>, tensor<13x7xf32>) -> tensor<?x?x13xf32>
  return %logits, %y : tensor<?x?x13xf32>, tensor<?x?x7xf32>
}

// -----

// Lengths reach the gradient op: the forward ran each row for its length.
// CHECK-LABEL: func.func @vjp_lengths
// CHECK-SAME: %[[N:[^:]*]]: tensor<?xi64> {recur.input = "lengths"}
// CHECK: recur.lstm_grad {{.*}} lengths(%[[N]]) :
func.func @vjp_lengths(%x: tensor<?x?x5xf32> {recur.input = "input"}, %n: tensor<?xi64> {recur.input = "lengths"},
    %w: tensor<28x5xf32> {recur.weight = "w"}, %u: tensor<28x7xf32> {recur.weight = "u"})
    -> (tensor<?x?x7xf32> {recur.output = "output"}) attributes {recur.vjp} {
  %y, %h, %c = recur.lstm %x, %w, %u lengths(%n)
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<?xi64>)
      -> (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  return %y : tensor<?x?x7xf32>
}

// -----

// A GRU layer's backward: recur.gru_grad, its own gradient for each bias.
// CHECK-LABEL: func.func @vjp_gru
// CHECK-SAME: -> (tensor<?x?x5xf32> {recur.output = "d_input"}, tensor<?x7xf32> {recur.output = "d_h0"}, tensor<21x5xf32> {recur.output = "d_w_ih"}, tensor<21x7xf32> {recur.output = "d_w_hh"}, tensor<21xf32> {recur.output = "d_b_ih"}, tensor<21xf32> {recur.output = "d_b_hh"})
// CHECK: %[[DX:.*]], %[[DWI:.*]], %[[DWH:.*]], %[[DBI:.*]], %[[DBH:.*]], %[[DH0:.*]] = recur.gru_grad {{.*}} y(%{{.*}}) d_y(%{{.*}}) h0(%{{.*}}) d_h_n(%{{.*}}) :
// CHECK: return %[[DX]], %[[DH0]], %[[DWI]], %[[DWH]], %[[DBI]], %[[DBH]] :
func.func @vjp_gru(%x: tensor<?x?x5xf32> {recur.input = "input"}, %h0: tensor<?x7xf32> {recur.input = "h0"},
    %w_ih: tensor<21x5xf32> {recur.weight = "w_ih"}, %w_hh: tensor<21x7xf32> {recur.weight = "w_hh"},
    %b_ih: tensor<21xf32> {recur.weight = "b_ih"}, %b_hh: tensor<21xf32> {recur.weight = "b_hh"})
    -> (tensor<?x?x7xf32> {recur.output = "output"}, tensor<?x7xf32> {recur.output = "h_n"})
    attributes {recur.vjp} {
  %y, %h = recur.gru %x, %w_ih, %w_hh, %b_ih, %b_hh h0(%h0)
      : (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<?x7xf32>)
      -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  return %y, %h : tensor<?x?x7xf32>, tensor<?x7xf32>
}

// -----

// An Elman layer's backward: recur.rnn_grad (relu for rnn_relu), one bias
// gradient for both biases.
// CHECK-LABEL: func.func @vjp_rnn_relu
// CHECK: %[[DX:.*]], %[[DWI:.*]], %[[DWH:.*]], %[[DB:.*]], %{{.*}} = recur.rnn_grad {{.*}} y(%{{.*}}) d_y(%{{.*}}) relu :
// CHECK: return %[[DX]], %[[DWI]], %[[DWH]], %[[DB]], %[[DB]] :
func.func @vjp_rnn_relu(%x: tensor<3x2x5xf32> {recur.input = "x"}, %w_ih: tensor<7x5xf32> {recur.weight = "w_ih"},
    %w_hh: tensor<7x7xf32> {recur.weight = "w_hh"}, %b_ih: tensor<7xf32> {recur.weight = "b_ih"},
    %b_hh: tensor<7xf32> {recur.weight = "b_hh"}) -> (tensor<3x2x7xf32> {recur.output = "y"})
    attributes {recur.vjp} {
  %y, %h = recur.rnn_relu %x, %w_ih, %w_hh, %b_ih, %b_hh
      : (tensor<3x2x5xf32>, tensor<7x5xf32>, tensor<7x7xf32>, tensor<7xf32>, tensor<7xf32>)
      -> (tensor<3x2x7xf32>, tensor<2x7xf32>)
  return %y : tensor<3x2x7xf32>
}
