// RUN: recur-opt %s | recur-opt | FileCheck %s
// RUN: recur-opt %s --mlir-print-op-generic | recur-opt | FileCheck %s

// Round trip of every recur op in its custom form, and through the generic
// form back to the custom one.

// CHECK-LABEL: func.func @embedding
func.func @embedding(%table: tensor<10001x128xf32>, %ids: tensor<?x?xi64>, %flat: tensor<7xi64>)
    -> (tensor<?x?x128xf32>, tensor<7x128xf32>) {
  // CHECK: recur.embedding %{{.*}}[%{{.*}}] : (tensor<10001x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
  %0 = recur.embedding %table[%ids] : (tensor<10001x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
  // CHECK: recur.embedding %{{.*}}[%{{.*}}] : (tensor<10001x128xf32>, tensor<7xi64>) -> tensor<7x128xf32>
  %1 = recur.embedding %table[%flat] : (tensor<10001x128xf32>, tensor<7xi64>) -> tensor<7x128xf32>
  return %0, %1 : tensor<?x?x128xf32>, tensor<7x128xf32>
}

// CHECK-LABEL: func.func @lstm_dynamic_time_and_batch
func.func @lstm_dynamic_time_and_batch(%x: tensor<?x?x128xf32>, %w_ih: tensor<1024x128xf32>,
    %w_hh: tensor<1024x256xf32>, %b_ih: tensor<1024xf32>, %b_hh: tensor<1024xf32>)
    -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>) {
  // CHECK: %[[Y:.*]], %[[H:.*]], %[[C:.*]] = recur.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
  // CHECK-SAME: (tensor<?x?x128xf32>, tensor<1024x128xf32>, tensor<1024x256xf32>, tensor<1024xf32>, tensor<1024xf32>)
  // CHECK-SAME: -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b_ih, %b_hh
      : (tensor<?x?x128xf32>, tensor<1024x128xf32>, tensor<1024x256xf32>, tensor<1024xf32>, tensor<1024xf32>)
      -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
  return %y, %h, %c : tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>
}

// CHECK-LABEL: func.func @lstm_initial_state
func.func @lstm_initial_state(%x: tensor<1x1x3xf32>, %w_ih: tensor<8x3xf32>, %w_hh: tensor<8x2xf32>,
    %b: tensor<8xf32>, %h0: tensor<1x2xf32>, %c0: tensor<1x2xf32>) -> tensor<1x2xf32> {
  // CHECK: recur.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} h0(%{{.*}}) c0(%{{.*}}) :
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b, %b h0(%h0) c0(%c0)
      : (tensor<1x1x3xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x2xf32>, tensor<1x2xf32>)
      -> (tensor<1x1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>)
  // Either state may come alone; the other is zero.
  // CHECK: recur.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} c0(%{{.*}}) :
  %y2, %h2, %c2 = recur.lstm %x, %w_ih, %w_hh, %b, %b c0(%c)
      : (tensor<1x1x3xf32>, tensor<8x3xf32>, tensor<8x2xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x2xf32>)
      -> (tensor<1x1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>)
  return %h2 : tensor<1x2xf32>
}

// CHECK-LABEL: func.func @lstm_bf16_static_results_refine_dynamic_operands
func.func @lstm_bf16_static_results_refine_dynamic_operands(%x: tensor<?x4x16xbf16>, %w_ih: tensor<32x16xbf16>,
    %w_hh: tensor<32x8xbf16>, %b: tensor<32xbf16>) -> tensor<5x4x8xbf16> {
  // CHECK: -> (tensor<5x4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>)
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b, %b
      : (tensor<?x4x16xbf16>, tensor<32x16xbf16>, tensor<32x8xbf16>, tensor<32xbf16>, tensor<32xbf16>)
      -> (tensor<5x4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>)
  return %y : tensor<5x4x8xbf16>
}

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<?x?x256xf32>, %w: tensor<10001x256xf32>, %b: tensor<10001xf32>, %v: tensor<256xf16>,
    %wh: tensor<3x256xf16>) -> (tensor<?x?x10001xf32>, tensor<3xf16>) {
  // CHECK: recur.linear %{{.*}}, %{{.*}} bias(%{{.*}}) : (tensor<?x?x256xf32>, tensor<10001x256xf32>, tensor<10001xf32>) -> tensor<?x?x10001xf32>
  %0 = recur.linear %x, %w bias(%b) : (tensor<?x?x256xf32>, tensor<10001x256xf32>, tensor<10001xf32>) -> tensor<?x?x10001xf32>
  // CHECK: recur.linear %{{.*}}, %{{.*}} : (tensor<256xf16>, tensor<3x256xf16>) -> tensor<3xf16>
  %1 = recur.linear %v, %wh : (tensor<256xf16>, tensor<3x256xf16>) -> tensor<3xf16>
  return %0, %1 : tensor<?x?x10001xf32>, tensor<3xf16>
}

// CHECK-LABEL: func.func @lstm_recurrence
func.func @lstm_recurrence(%gates: tensor<?x?x1024xf32>, %w_hh: tensor<1024x256xf32>,
    %h0: tensor<?x256xf32>, %c0: tensor<?x256xf32>)
    -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x?x256xf32>) {
  // The default schedule (separate) is not printed.
  // CHECK: recur.lstm_recurrence %{{.*}}, %{{.*}} : (tensor<?x?x1024xf32>, tensor<1024x256xf32>)
  // CHECK-SAME: -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
  %y, %h, %c = recur.lstm_recurrence %gates, %w_hh
      : (tensor<?x?x1024xf32>, tensor<1024x256xf32>) -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
  // CHECK: recur.lstm_recurrence %{{.*}}, %{{.*}} h0(%{{.*}}) c0(%{{.*}}) cell<fused> :
  %y2, %h2, %c2 = recur.lstm_recurrence %gates, %w_hh h0(%h0) c0(%c0) cell<fused>
      : (tensor<?x?x1024xf32>, tensor<1024x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
      -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
  return %y, %h, %y2 : tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x?x256xf32>
}

// CHECK-LABEL: func.func @interleaved_recurrence
func.func @interleaved_recurrence(%gates: tensor<?x?x1024xf32>, %w_hh: tensor<1024x256xf32>,
    %b: tensor<1024xf32>, %w3: tensor<768x256xf32>) -> (tensor<?x?x256xf32>, tensor<1024xf32>) {
  // CHECK: %[[W:.*]] = recur.interleave_gates %{{.*}} tile(16) : tensor<1024x256xf32>
  // CHECK: recur.interleave_gates %{{.*}} tile(1) : tensor<1024xf32>
  // A GRU's three gates; the LSTM's four are the default, not printed.
  // CHECK: recur.interleave_gates %{{.*}} tile(16) gates(3) : tensor<768x256xf32>
  // CHECK: recur.lstm_recurrence %{{.*}}, %[[W]] interleaved(16) cell<fused> :
  %w = recur.interleave_gates %w_hh tile(16) : tensor<1024x256xf32>
  %b2 = recur.interleave_gates %b tile(1) : tensor<1024xf32>
  %u = recur.interleave_gates %w3 tile(16) gates(3) : tensor<768x256xf32>
  %y, %h, %c = recur.lstm_recurrence %gates, %w interleaved(16) cell<fused>
      : (tensor<?x?x1024xf32>, tensor<1024x256xf32>) -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
  return %y, %b2 : tensor<?x?x256xf32>, tensor<1024xf32>
}

// The fused step's register tile: panels of the four gates of 16 units.
// CHECK-LABEL: func.func @packed_fused_recurrence
func.func @packed_fused_recurrence(%gates: tensor<?x?x1024xf32>, %w_hh: tensor<1024x256xf32>)
    -> tensor<?x?x256xf32> {
  // CHECK: %[[P:.*]] = recur.pack_panels %{{.*}} tile(64) : tensor<1024x256xf32> -> tensor<16x256x64xf32>
  // CHECK: recur.lstm_recurrence %{{.*}}, %[[P]] interleaved(16) cell<fused> :
  %w = recur.interleave_gates %w_hh tile(16) : tensor<1024x256xf32>
  %p = recur.pack_panels %w tile(64) : tensor<1024x256xf32> -> tensor<16x256x64xf32>
  %y, %h, %c = recur.lstm_recurrence %gates, %p interleaved(16) cell<fused>
      : (tensor<?x?x1024xf32>, tensor<16x256x64xf32>) -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
  return %y : tensor<?x?x256xf32>
}

// CHECK-LABEL: func.func @packed_linear
func.func @packed_linear(%x: tensor<?x?x8xf32>, %w: tensor<37x8xf32>, %b: tensor<37xf32>)
    -> tensor<?x?x37xf32> {
  // CHECK: %[[P:.*]] = recur.pack_panels %{{.*}} tile(16) : tensor<37x8xf32> -> tensor<3x8x16xf32>
  // CHECK: recur.linear %{{.*}}, %[[P]] bias(%{{.*}}) : (tensor<?x?x8xf32>, tensor<3x8x16xf32>, tensor<37xf32>) -> tensor<?x?x37xf32>
  %p = recur.pack_panels %w tile(16) : tensor<37x8xf32> -> tensor<3x8x16xf32>
  %y = recur.linear %x, %p bias(%b)
      : (tensor<?x?x8xf32>, tensor<3x8x16xf32>, tensor<37xf32>) -> tensor<?x?x37xf32>
  return %y : tensor<?x?x37xf32>
}

// Packed in pairs of k: bf16 products of f32 ops.
// CHECK-LABEL: func.func @pair_packed_linear
func.func @pair_packed_linear(%x: tensor<?x?x8xf32>, %w: tensor<37x8xbf16>, %b: tensor<37xf32>)
    -> tensor<?x?x37xf32> {
  // CHECK: %[[P:.*]] = recur.pack_panels %{{.*}} tile(16) pairs : tensor<37x8xbf16> -> tensor<3x4x16x2xbf16>
  // CHECK: recur.linear %{{.*}}, %[[P]] bias(%{{.*}}) : (tensor<?x?x8xf32>, tensor<3x4x16x2xbf16>, tensor<37xf32>) -> tensor<?x?x37xf32>
  %p = recur.pack_panels %w tile(16) pairs : tensor<37x8xbf16> -> tensor<3x4x16x2xbf16>
  %y = recur.linear %x, %p bias(%b)
      : (tensor<?x?x8xf32>, tensor<3x4x16x2xbf16>, tensor<37xf32>) -> tensor<?x?x37xf32>
  return %y : tensor<?x?x37xf32>
}

// CHECK-LABEL: func.func @pair_packed_fused_recurrence
func.func @pair_packed_fused_recurrence(%gates: tensor<?x?x1024xf32>, %w_hh: tensor<1024x256xbf16>)
    -> tensor<?x?x256xf32> {
  // CHECK: %[[P:.*]] = recur.pack_panels %{{.*}} tile(64) pairs : tensor<1024x256xbf16> -> tensor<16x128x64x2xbf16>
  // CHECK: recur.lstm_recurrence %{{.*}}, %[[P]] interleaved(16) cell<fused> : (tensor<?x?x1024xf32>, tensor<16x128x64x2xbf16>) -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
  %w = recur.interleave_gates %w_hh tile(16) : tensor<1024x256xbf16>
  %p = recur.pack_panels %w tile(64) pairs : tensor<1024x256xbf16> -> tensor<16x128x64x2xbf16>
  %y, %h, %c = recur.lstm_recurrence %gates, %p interleaved(16) cell<fused>
      : (tensor<?x?x1024xf32>, tensor<16x128x64x2xbf16>) -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
  return %y : tensor<?x?x256xf32>
}

// CHECK-LABEL: func.func @pair_packed_separate_recurrence
func.func @pair_packed_separate_recurrence(%gates: tensor<?x?x24xf32>, %w_hh: tensor<24x6xbf16>)
    -> tensor<?x?x6xf32> {
  // CHECK: recur.lstm_recurrence %{{.*}}, %{{.*}} : (tensor<?x?x24xf32>, tensor<2x3x16x2xbf16>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  %p = recur.pack_panels %w_hh tile(16) pairs : tensor<24x6xbf16> -> tensor<2x3x16x2xbf16>
  %y, %h, %c = recur.lstm_recurrence %gates, %p
      : (tensor<?x?x24xf32>, tensor<2x3x16x2xbf16>) -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x6xf32>
}

// CHECK-LABEL: func.func @lstm_wavefront
func.func @lstm_wavefront(%gates: tensor<?x?x32xf32>, %w0: tensor<32x8xf32>, %u1: tensor<24x8xf32>,
    %b1: tensor<24xf32>, %w1: tensor<24x6xf32>, %h0: tensor<?x8xf32>, %h1: tensor<?x6xf32>)
    -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x?x6xf32>) {
  // CHECK: %{{.*}}, %[[S:.*]]:4 = recur.lstm_wavefront %{{.*}} w_hh(%{{.*}}, %{{.*}}) w_ih(%{{.*}}) bias(%{{.*}}) :
  // CHECK-SAME: -> (tensor<?x?x6xf32>, tensor<?x8xf32>, tensor<?x6xf32>, tensor<?x8xf32>, tensor<?x6xf32>)
  %y, %s:4 = recur.lstm_wavefront %gates w_hh(%w0, %w1) w_ih(%u1) bias(%b1)
      : (tensor<?x?x32xf32>, tensor<32x8xf32>, tensor<24x6xf32>, tensor<24x8xf32>, tensor<24xf32>)
      -> (tensor<?x?x6xf32>, tensor<?x8xf32>, tensor<?x6xf32>, tensor<?x8xf32>, tensor<?x6xf32>)
  // CHECK: recur.lstm_wavefront %{{.*}} w_hh(%{{.*}}, %{{.*}}) w_ih(%{{.*}}) bias(%{{.*}}) h0(%{{.*}}, %{{.*}}) interleaved([4, 2]) cell<fused> :
  %y2, %s2:4 = recur.lstm_wavefront %gates w_hh(%w0, %w1) w_ih(%u1) bias(%b1) h0(%h0, %h1)
      interleaved([4, 2]) cell<fused>
      : (tensor<?x?x32xf32>, tensor<32x8xf32>, tensor<24x6xf32>, tensor<24x8xf32>, tensor<24xf32>,
         tensor<?x8xf32>, tensor<?x6xf32>)
      -> (tensor<?x?x6xf32>, tensor<?x8xf32>, tensor<?x6xf32>, tensor<?x8xf32>, tensor<?x6xf32>)
  // A stack of one layer has no input projections.
  // CHECK: recur.lstm_wavefront %{{.*}} w_hh(%{{.*}}) : (tensor<?x?x32xf32>, tensor<32x8xf32>)
  %y3, %s3:2 = recur.lstm_wavefront %gates w_hh(%w0)
      : (tensor<?x?x32xf32>, tensor<32x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  return %y, %s#3, %y2 : tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x?x6xf32>
}

// CHECK-LABEL: func.func @log_softmax
func.func @log_softmax(%x: tensor<?x?x10001xf32>) -> tensor<?x?x10001xf32> {
  // CHECK: recur.log_softmax %{{.*}} : tensor<?x?x10001xf32> -> tensor<?x?x10001xf32>
  %0 = recur.log_softmax %x : tensor<?x?x10001xf32> -> tensor<?x?x10001xf32>
  return %0 : tensor<?x?x10001xf32>
}

// CHECK-LABEL: func.func @cross_entropy
func.func @cross_entropy(%logits: tensor<?x?x10001xf32>, %targets: tensor<?x?xi64>)
    -> (tensor<f32>, tensor<f32>, tensor<?x?xf32>) {
  // The default reduction (mean) is not printed.
  // CHECK: recur.cross_entropy %{{.*}}, %{{.*}} : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<f32>
  %mean = recur.cross_entropy %logits, %targets : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<f32>
  // CHECK: recur.cross_entropy %{{.*}}, %{{.*}} reduction<sum> : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<f32>
  %sum = recur.cross_entropy %logits, %targets reduction<sum> : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<f32>
  // CHECK: recur.cross_entropy %{{.*}}, %{{.*}} reduction<none> : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
  %none = recur.cross_entropy %logits, %targets reduction<none> : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
  return %mean, %sum, %none : tensor<f32>, tensor<f32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @model_names
// CHECK-SAME: {recur.input = "tokens"}
// CHECK-SAME: {recur.weight = "embedding.weight"}
// CHECK-SAME: {recur.output = "x"}
func.func @model_names(%tokens: tensor<2x3xi64> {recur.input = "tokens"},
    %table: tensor<5x4xf32> {recur.weight = "embedding.weight"}) -> (tensor<2x3x4xf32> {recur.output = "x"}) {
  %0 = recur.embedding %table[%tokens] : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @training_ops
func.func @training_ops(%x: tensor<?x?x5xf32>, %ids: tensor<?x?xi64>, %w_ih: tensor<28x5xf32>,
    %w_hh: tensor<28x7xf32>, %b: tensor<28xf32>, %y: tensor<?x?x7xf32>, %w: tensor<13x7xf32>,
    %logits: tensor<?x?x13xf32>, %d_loss: tensor<f32>, %per_token: tensor<?x?xf32>,
    %gw_ih: tensor<21x5xf32>, %gw_hh: tensor<21x7xf32>, %gb: tensor<21xf32>,
    %ew_ih: tensor<7x5xf32>, %ew_hh: tensor<7x7xf32>)
    -> (tensor<13x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<f32>, tensor<?x?x13xf32>) {
  // CHECK: recur.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?x13xf32>, tensor<?x?xi64>, tensor<f32>) -> tensor<?x?x13xf32>
  %d_logits = recur.cross_entropy_grad %logits, %ids, %d_loss
      : (tensor<?x?x13xf32>, tensor<?x?xi64>, tensor<f32>) -> tensor<?x?x13xf32>
  // CHECK: recur.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} reduction<none> : (tensor<?x?x13xf32>, tensor<?x?xi64>, tensor<?x?xf32>)
  %d_none = recur.cross_entropy_grad %logits, %ids, %per_token reduction<none>
      : (tensor<?x?x13xf32>, tensor<?x?xi64>, tensor<?x?xf32>) -> tensor<?x?x13xf32>
  // CHECK: recur.linear_grad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?x13xf32>, tensor<?x?x7xf32>, tensor<13x7xf32>)
  // CHECK-SAME: -> (tensor<?x?x7xf32>, tensor<13x7xf32>, tensor<13xf32>)
  %d_y, %d_w, %d_b = recur.linear_grad %d_logits, %y, %w
      : (tensor<?x?x13xf32>, tensor<?x?x7xf32>, tensor<13x7xf32>)
      -> (tensor<?x?x7xf32>, tensor<13x7xf32>, tensor<13xf32>)
  // CHECK: recur.lstm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} y(%{{.*}}) d_y(%{{.*}}) :
  // CHECK-SAME: -> (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  %d_x, %d_w_ih, %d_w_hh, %d_bias, %d_h0, %d_c0 = recur.lstm_grad %x, %w_ih, %w_hh, %b, %b y(%y) d_y(%d_y)
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>,
         tensor<?x?x7xf32>, tensor<?x?x7xf32>)
      -> (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  // Without biases or d_y, with the initial state and the final state's gradients.
  // CHECK: recur.lstm_grad %{{.*}}, %{{.*}}, %{{.*}} y(%{{.*}}) h0(%{{.*}}) c0(%{{.*}}) d_h_n(%{{.*}}) d_c_n(%{{.*}}) :
  %s:6 = recur.lstm_grad %x, %w_ih, %w_hh y(%y) h0(%d_h0) c0(%d_c0) d_h_n(%d_h0) d_c_n(%d_c0)
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<?x?x7xf32>,
         tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
      -> (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  // CHECK: recur.gru_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} y(%{{.*}}) d_y(%{{.*}}) h0(%{{.*}}) :
  // CHECK-SAME: -> (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<?x7xf32>)
  %g:6 = recur.gru_grad %x, %gw_ih, %gw_hh, %gb, %gb y(%y) d_y(%d_y) h0(%d_h0)
      : (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>,
         tensor<?x?x7xf32>, tensor<?x?x7xf32>, tensor<?x7xf32>)
      -> (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<?x7xf32>)
  // CHECK: recur.rnn_grad %{{.*}}, %{{.*}}, %{{.*}} y(%{{.*}}) d_y(%{{.*}}) relu :
  // CHECK-SAME: -> (tensor<?x?x5xf32>, tensor<7x5xf32>, tensor<7x7xf32>, tensor<7xf32>, tensor<?x7xf32>)
  %e:5 = recur.rnn_grad %x, %ew_ih, %ew_hh y(%y) d_y(%d_y) relu
      : (tensor<?x?x5xf32>, tensor<7x5xf32>, tensor<7x7xf32>, tensor<?x?x7xf32>, tensor<?x?x7xf32>)
      -> (tensor<?x?x5xf32>, tensor<7x5xf32>, tensor<7x7xf32>, tensor<7xf32>, tensor<?x7xf32>)
  // CHECK: recur.embedding_grad %{{.*}}[%{{.*}}] rows(13) : (tensor<?x?x5xf32>, tensor<?x?xi64>) -> tensor<13x5xf32>
  %d_table = recur.embedding_grad %d_x[%ids] rows(13) : (tensor<?x?x5xf32>, tensor<?x?xi64>) -> tensor<13x5xf32>
  // CHECK: recur.clip_grad_norm %{{.*}}, %{{.*}} max_norm(2.500000e-01) : (tensor<13x5xf32>, tensor<28x7xf32>)
  // CHECK-SAME: -> (tensor<f32>, tensor<13x5xf32>, tensor<28x7xf32>)
  %norm, %clipped:2 = recur.clip_grad_norm %d_table, %d_w_hh max_norm(0.25)
      : (tensor<13x5xf32>, tensor<28x7xf32>) -> (tensor<f32>, tensor<13x5xf32>, tensor<28x7xf32>)
  // CHECK: recur.sgd_update %{{.*}}, %{{.*}} lr(1.000000e-01) : tensor<28x5xf32>
  %new = recur.sgd_update %w_ih, %d_w_ih lr(0.1) : tensor<28x5xf32>
  return %clipped#0, %new, %clipped#1, %norm, %d_none
      : tensor<13x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<f32>, tensor<?x?x13xf32>
}

// A training step's optimizer, and the results that update weights in place.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {recur.output = "loss"}, tensor<4xf32> {recur.update = "b"})
// CHECK-SAME: attributes {recur.train = #recur.sgd<lr = 2.000000e+01, clip_norm = 2.500000e-01>}
func.func @train_step(%b: tensor<4xf32> {recur.weight = "b"}, %loss: tensor<f32>)
    -> (tensor<f32> {recur.output = "loss"}, tensor<4xf32> {recur.update = "b"})
    attributes {recur.train = #recur.sgd<lr = 20.0, clip_norm = 0.25>} {
  return %loss, %b : tensor<f32>, tensor<4xf32>
}

// No clipping is the default, and not printed.
// CHECK-LABEL: func.func @train_step_no_clip
// CHECK-SAME: attributes {recur.train = #recur.sgd<lr = 1.000000e-01>}
func.func @train_step_no_clip(%loss: tensor<f32>) -> tensor<f32>
    attributes {recur.train = #recur.sgd<lr = 0.1>} {
  return %loss : tensor<f32>
}

// nn.LSTM(bias=False) and a bidirectional layer's backward direction.
// CHECK-LABEL: func.func @lstm_without_biases_in_reverse
func.func @lstm_without_biases_in_reverse(%x: tensor<?x?x8xf32>, %w_ih: tensor<16x8xf32>,
    %w_hh: tensor<16x4xf32>, %gates: tensor<?x?x16xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  // CHECK: recur.lstm %{{.*}}, %{{.*}}, %{{.*}} reverse : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16x4xf32>) ->
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh reverse
      : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16x4xf32>)
      -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  // CHECK: recur.lstm_recurrence %{{.*}}, %{{.*}} reverse :
  %y2, %h2, %c2 = recur.lstm_recurrence %gates, %w_hh reverse
      : (tensor<?x?x16xf32>, tensor<16x4xf32>)
      -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  return %y, %y2 : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<?x7x8xf32>, %ids: tensor<3x?xi64>)
    -> (tensor<7x?x8xf32>, tensor<?x3xi64>) {
  // CHECK: recur.transpose %{{.*}} [1, 0, 2] : tensor<?x7x8xf32> -> tensor<7x?x8xf32>
  %0 = recur.transpose %x [1, 0, 2] : tensor<?x7x8xf32> -> tensor<7x?x8xf32>
  // CHECK: recur.transpose %{{.*}} [1, 0] : tensor<3x?xi64> -> tensor<?x3xi64>
  %1 = recur.transpose %ids [1, 0] : tensor<3x?xi64> -> tensor<?x3xi64>
  return %0, %1 : tensor<7x?x8xf32>, tensor<?x3xi64>
}

// nn.LSTM(proj_size=P): h, h0, h_n and y have P units, c has H.
// CHECK-LABEL: func.func @lstm_projected
func.func @lstm_projected(%x: tensor<?x?x8xf32>, %w_ih: tensor<24x8xf32>, %w_hh: tensor<24x4xf32>,
    %b: tensor<24xf32>, %w_hr: tensor<4x6xf32>, %h0: tensor<?x4xf32>, %c0: tensor<?x6xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x6xf32>) {
  // CHECK: recur.lstm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} proj(%{{.*}}) h0(%{{.*}}) c0(%{{.*}}) :
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b, %b proj(%w_hr) h0(%h0) c0(%c0)
      : (tensor<?x?x8xf32>, tensor<24x8xf32>, tensor<24x4xf32>, tensor<24xf32>, tensor<24xf32>,
         tensor<4x6xf32>, tensor<?x4xf32>, tensor<?x6xf32>)
      -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x6xf32>)
  return %y, %h, %c : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x6xf32>
}

// CHECK-LABEL: func.func @lstm_recurrence_projected
func.func @lstm_recurrence_projected(%gates: tensor<?x?x24xf32>, %w_hh: tensor<24x4xf32>,
    %w_hr: tensor<4x6xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x6xf32>) {
  // CHECK: recur.lstm_recurrence %{{.*}}, %{{.*}} proj(%{{.*}}) reverse :
  %y, %h, %c = recur.lstm_recurrence %gates, %w_hh proj(%w_hr) reverse
      : (tensor<?x?x24xf32>, tensor<24x4xf32>, tensor<4x6xf32>)
      -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x6xf32>)
  return %y, %h, %c : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x6xf32>
}

// The lowering configs print as they parse.
// CHECK-LABEL: func.func @lowering_configs
// CHECK-SAME: test.gemms = [#recur.panel_gemm<tile = 64, layout = packed>, #recur.panel_gemm<tile = 32, layout = pairs>, #recur.panel_gemm<tile = 16, layout = in_place>]
// CHECK-SAME: test.gpu_gemms = [#recur.gpu_gemm<precision = fp32, tile = [128, 128, 8], thread_tile = [8, 8]>, #recur.gpu_gemm<precision = tf32, tile = [128, 128, 16], warp_tile = [64, 32]>]
// CHECK-SAME: test.gpu_row = #recur.gpu_row_group<block_size = 128>
// CHECK-SAME: test.gpu_step = #recur.stationary_step<precision = bf16, units = 8, block_size = 256, max_lanes = 32>
// CHECK-SAME: test.step = #recur.unit_step<batch = 0, unit = 1, layer = 2, hidden = [8, 8], gate_tiles = [0, 4]>
// CHECK-SAME: test.step3 = #recur.unit_step<batch = 0, unit = 1, hidden = [16], gate_tiles = [0], gates = 3>
func.func @lowering_configs() attributes {
    test.gpu_gemms = [#recur.gpu_gemm<precision = fp32, tile = [128, 128, 8], thread_tile = [8, 8]>,
                      #recur.gpu_gemm<precision = tf32, tile = [128, 128, 16], warp_tile = [64, 32]>],
    test.gpu_step = #recur.stationary_step<precision = bf16, units = 8, block_size = 256, max_lanes = 32>,
    test.gpu_row = #recur.gpu_row_group<block_size = 128>,
    test.gemms = [#recur.panel_gemm<tile = 64, layout = packed>,
                  #recur.panel_gemm<tile = 32, layout = pairs>,
                  #recur.panel_gemm<tile = 16, layout = in_place>],
    test.step = #recur.unit_step<batch = 0, unit = 1, layer = 2, hidden = [8, 8], gate_tiles = [0, 4]>,
    test.step3 = #recur.unit_step<batch = 0, unit = 1, hidden = [16], gate_tiles = [0], gates = 3>} {
  return
}
