// RUN: recur-opt %s -split-input-file --recur-generalize-cells | FileCheck %s

// A GRU is the recur.rnn of its cell: the two products (biases included),
// the gates' columns, one pointwise loop nest with PyTorch's formulas (the
// reset gate on the recurrent product's n columns); h_t is both y_t and
// the new state.
// CHECK-LABEL: func.func @gru
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>, %[[WI:[^:]*]]: tensor<21x5xf32>, %[[WH:[^:]*]]: tensor<21x7xf32>, %[[BI:[^:]*]]: tensor<21xf32>, %[[BH:[^:]*]]: tensor<21xf32>, %[[H0:[^:]*]]: tensor<?x7xf32>)
// CHECK: %[[Y:.*]], %[[H:.*]] = recur.rnn %[[X]] init(%[[H0]]) captures(%[[WI]], %[[WH]], %[[BI]], %[[BH]]) reverse
// CHECK: ^bb0(%[[XT:.*]]: tensor<?x5xf32>, %[[HP:.*]]: tensor<?x7xf32>, %[[CWI:.*]]: tensor<21x5xf32>, %[[CWH:.*]]: tensor<21x7xf32>, %[[CBI:.*]]: tensor<21xf32>, %[[CBH:.*]]: tensor<21xf32>):
// CHECK: %[[GI:.*]] = recur.linear %[[XT]], %[[CWI]] bias(%[[CBI]])
// CHECK: %[[GH:.*]] = recur.linear %[[HP]], %[[CWH]] bias(%[[CBH]])
// CHECK: %[[RI:.*]] = tensor.extract_slice %[[GI]][0, 0]
// CHECK: %[[ZI:.*]] = tensor.extract_slice %[[GI]][0, 7]
// CHECK: %[[NI:.*]] = tensor.extract_slice %[[GI]][0, 14]
// CHECK: %[[RH:.*]] = tensor.extract_slice %[[GH]][0, 0]
// CHECK: %[[ZH:.*]] = tensor.extract_slice %[[GH]][0, 7]
// CHECK: %[[NH:.*]] = tensor.extract_slice %[[GH]][0, 14]
// CHECK: %[[HT:.*]] = linalg.generic {{.*}} ins(%[[RI]], %[[ZI]], %[[NI]], %[[RH]], %[[ZH]], %[[NH]], %[[HP]] :
// CHECK: ^bb0(%[[ri:.*]]: f32, %[[zi:.*]]: f32, %[[ni:.*]]: f32, %[[rh:.*]]: f32, %[[zh:.*]]: f32, %[[nh:.*]]: f32, %[[h:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[RSUM:.*]] = arith.addf %[[ri]], %[[rh]]
// CHECK: %[[R:.*]] = arith.divf
// CHECK: %[[ZSUM:.*]] = arith.addf %[[zi]], %[[zh]]
// CHECK: %[[Z:.*]] = arith.divf
// CHECK: %[[RN:.*]] = arith.mulf %[[R]], %[[nh]]
// CHECK: %[[NSUM:.*]] = arith.addf %[[ni]], %[[RN]]
// CHECK: %[[N:.*]] = math.tanh %[[NSUM]]
// CHECK: %[[KEEP:.*]] = arith.subf %{{.*}}, %[[Z]]
// CHECK: %[[A:.*]] = arith.mulf %[[KEEP]], %[[N]]
// CHECK: %[[B:.*]] = arith.mulf %[[Z]], %[[h]]
// CHECK: %[[NEW:.*]] = arith.addf %[[A]], %[[B]]
// CHECK: linalg.yield %[[NEW]]
// CHECK: recur.yield %[[HT]], %[[HT]]
// CHECK: return %[[Y]], %[[H]]
func.func @gru(%x: tensor<?x?x5xf32>, %wi: tensor<21x5xf32>, %wh: tensor<21x7xf32>,
               %bi: tensor<21xf32>, %bh: tensor<21xf32>, %h0: tensor<?x7xf32>)
    -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  %y, %h = recur.gru %x, %wi, %wh, %bi, %bh h0(%h0) reverse
      : (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<?x7xf32>)
      -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  return %y, %h : tensor<?x?x7xf32>, tensor<?x7xf32>
}

// -----

// nn.RNN without biases or h0: products without bias, zeros for h0 (the
// batch size read off the input), the nonlinearity on their sum.
// CHECK-LABEL: func.func @rnn_relu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[EMPTY:.*]] = tensor.empty(%[[B]]) : tensor<?x7xf32>
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<?x7xf32>)
// CHECK: recur.rnn %[[X]] init(%[[ZEROS]]) captures(%{{[^,]*}}, %{{[^)]*}}) :
// CHECK: recur.linear %{{[^,]*}}, %{{[^ ]*}} :
// CHECK: recur.linear %{{[^,]*}}, %{{[^ ]*}} :
// CHECK: linalg.generic
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: arith.maximumf %[[SUM]], %{{.*}} : f32
// CHECK-LABEL: func.func @rnn_tanh
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: math.tanh %[[SUM]] : f32
func.func @rnn_relu(%x: tensor<?x?x5xf32>, %wi: tensor<7x5xf32>, %wh: tensor<7x7xf32>) -> tensor<?x?x7xf32> {
  %y, %h = recur.rnn_relu %x, %wi, %wh
      : (tensor<?x?x5xf32>, tensor<7x5xf32>, tensor<7x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  return %y : tensor<?x?x7xf32>
}
func.func @rnn_tanh(%x: tensor<?x?x5xf32>, %wi: tensor<7x5xf32>, %wh: tensor<7x7xf32>) -> tensor<?x?x7xf32> {
  %y, %h = recur.rnn_tanh %x, %wi, %wh
      : (tensor<?x?x5xf32>, tensor<7x5xf32>, tensor<7x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  return %y : tensor<?x?x7xf32>
}

// -----

// A layer's sequence lengths go to its recur.rnn.
// CHECK-LABEL: func.func @gru_lengths
// CHECK-SAME: %[[L:[^:]*]]: tensor<?xi64>)
// CHECK: recur.rnn %{{.*}} init(%{{.*}}) captures(%{{.*}}, %{{.*}}) lengths(%[[L]]) :
func.func @gru_lengths(%x: tensor<?x?x5xf32>, %wi: tensor<21x5xf32>, %wh: tensor<21x7xf32>, %lengths: tensor<?xi64>)
    -> tensor<?x?x7xf32> {
  %y, %h = recur.gru %x, %wi, %wh lengths(%lengths)
      : (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  return %y : tensor<?x?x7xf32>
}

// -----

// An LSTM with sequence lengths is written as a recur.rnn even without the
// `lstm` option: recur.rnn takes the lengths, the LSTM stages do not.
// CHECK-LABEL: func.func @lstm_lengths
// CHECK-SAME: %[[L:[^:]*]]: tensor<?xi64>)
// CHECK-NOT: recur.lstm
// CHECK: recur.rnn %{{.*}} init(%{{.*}}, %{{.*}}) captures(%{{.*}}, %{{.*}}) lengths(%[[L]]) :
func.func @lstm_lengths(%x: tensor<?x?x5xf32>, %wi: tensor<28x5xf32>, %wh: tensor<28x7xf32>, %lengths: tensor<?xi64>)
    -> tensor<?x?x7xf32> {
  %y, %h, %c = recur.lstm %x, %wi, %wh lengths(%lengths)
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  return %y : tensor<?x?x7xf32>
}
