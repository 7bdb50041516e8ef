// RUN: recur-opt %s -split-input-file --recur-generalize-cells=lstm=true | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-generalize-cells | FileCheck %s --check-prefix=KEPT

// With `lstm`, recur.lstm is the recur.rnn of its cell too: the state
// (h, c), the two products, the gates' columns (i, f, g, o) and one
// pointwise generic giving c_t and h_t = o ⊙ tanh(c_t); h_t is y_t and the
// new h. Absent h0 and c0 are zeros. The pipelines leave recur.lstm to
// their LSTM stages (KEPT).
// CHECK-LABEL: func.func @lstm
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>, %[[WI:[^:]*]]: tensor<28x5xf32>, %[[WH:[^:]*]]: tensor<28x7xf32>, %[[BI:[^:]*]]: tensor<28xf32>, %[[BH:[^:]*]]: tensor<28xf32>)
// CHECK: %[[H0:.*]] = linalg.fill {{.*}} -> tensor<?x7xf32>
// CHECK: %[[C0:.*]] = linalg.fill {{.*}} -> tensor<?x7xf32>
// CHECK: %[[Y:.*]], %[[S:.*]]:2 = recur.rnn %[[X]] init(%[[H0]], %[[C0]]) captures(%[[WI]], %[[WH]], %[[BI]], %[[BH]]) reverse
// CHECK: ^bb0(%[[XT:.*]]: tensor<?x5xf32>, %[[HP:.*]]: tensor<?x7xf32>, %[[CP:.*]]: tensor<?x7xf32>, %[[CWI:.*]]: tensor<28x5xf32>, %[[CWH:.*]]: tensor<28x7xf32>, %[[CBI:.*]]: tensor<28xf32>, %[[CBH:.*]]: tensor<28xf32>):
// CHECK: %[[GI:.*]] = recur.linear %[[XT]], %[[CWI]] bias(%[[CBI]])
// CHECK: %[[GH:.*]] = recur.linear %[[HP]], %[[CWH]] bias(%[[CBH]])
// CHECK-COUNT-4: tensor.extract_slice %[[GI]]
// CHECK-COUNT-4: tensor.extract_slice %[[GH]]
// CHECK: %[[NEXT:.*]]:2 = linalg.generic {{.*}} ins({{.*}}, %[[CP]] : {{.*}}) outs(
// CHECK: ^bb0(%[[ii:[^:]*]]: f32, %[[fi:[^:]*]]: f32, %[[gi:[^:]*]]: f32, %[[oi:[^:]*]]: f32, %[[ih:[^:]*]]: f32, %[[fh:[^:]*]]: f32, %[[gh:[^:]*]]: f32, %[[oh:[^:]*]]: f32, %[[c:[^:]*]]: f32,
// CHECK: arith.addf %[[ii]], %[[ih]]
// CHECK: arith.addf %[[fi]], %[[fh]]
// CHECK: %[[GSUM:.*]] = arith.addf %[[gi]], %[[gh]]
// CHECK: %[[G:.*]] = math.tanh %[[GSUM]]
// CHECK: arith.addf %[[oi]], %[[oh]]
// CHECK: %[[FC:.*]] = arith.mulf %{{.*}}, %[[c]]
// CHECK: %[[IG:.*]] = arith.mulf %{{.*}}, %[[G]]
// CHECK: %[[CT:.*]] = arith.addf %[[FC]], %[[IG]]
// CHECK: %[[TC:.*]] = math.tanh %[[CT]]
// CHECK: %[[HT:.*]] = arith.mulf %{{.*}}, %[[TC]]
// CHECK: linalg.yield %[[CT]], %[[HT]]
// CHECK: recur.yield %[[NEXT]]#1, %[[NEXT]]#1, %[[NEXT]]#0
// CHECK: return %[[Y]], %[[S]]#0, %[[S]]#1
// KEPT-LABEL: func.func @lstm
// KEPT: recur.lstm
func.func @lstm(%x: tensor<?x?x5xf32>, %w_ih: tensor<28x5xf32>, %w_hh: tensor<28x7xf32>,
                %b_ih: tensor<28xf32>, %b_hh: tensor<28xf32>)
    -> (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>) {
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b_ih, %b_hh reverse
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>)
      -> (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  return %y, %h, %c : tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>
}

// -----

// proj_size: h_t is the product of o ⊙ tanh(c_t) with w_hr, [B, P]; the
// cell state stays [B, H].
// CHECK-LABEL: func.func @projected
// CHECK-SAME: %[[H0:[^:]*]]: tensor<?x3xf32>, %[[C0:[^:]*]]: tensor<?x7xf32>
// CHECK: recur.rnn %{{.*}} init(%[[H0]], %[[C0]]) captures({{.*}})
// CHECK: ^bb0(%{{.*}}: tensor<?x5xf32>, %{{.*}}: tensor<?x3xf32>, %{{.*}}: tensor<?x7xf32>, %{{.*}}: tensor<28x5xf32>, %{{.*}}: tensor<28x3xf32>, %[[WR:.*]]: tensor<3x7xf32>):
// CHECK: %[[NEXT:.*]]:2 = linalg.generic
// CHECK: %[[HT:.*]] = recur.linear %[[NEXT]]#1, %[[WR]] : (tensor<?x7xf32>, tensor<3x7xf32>) -> tensor<?x3xf32>
// CHECK: recur.yield %[[HT]], %[[HT]], %[[NEXT]]#0
func.func @projected(%x: tensor<?x?x5xf32>, %w_ih: tensor<28x5xf32>, %w_hh: tensor<28x3xf32>,
                     %w_hr: tensor<3x7xf32>, %h0: tensor<?x3xf32>, %c0: tensor<?x7xf32>)
    -> tensor<?x?x3xf32> {
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh proj(%w_hr) h0(%h0) c0(%c0)
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x3xf32>, tensor<3x7xf32>, tensor<?x3xf32>, tensor<?x7xf32>)
      -> (tensor<?x?x3xf32>, tensor<?x3xf32>, tensor<?x7xf32>)
  return %y : tensor<?x?x3xf32>
}
