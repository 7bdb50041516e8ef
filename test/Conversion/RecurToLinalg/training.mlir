// RUN: recur-opt %s -split-input-file --convert-recur-to-linalg | FileCheck %s
// RUN: recur-opt %s -split-input-file --convert-recur-to-linalg="embedding-grad-row-blocks=4" | FileCheck %s --check-prefix=BLOCKS

// The backward of one LSTM layer: the gates of every step recomputed by two
// contractions over all steps (x·w_ihᵀ and the shifted y·w_hhᵀ), a forward
// scan for the cell states, the reverse time loop (its step: one fused
// elementwise pass over [B, H] with five results, and dgates_t · w_hh), then
// the weight gradients as contractions over every step's rows at once.
// CHECK-LABEL: func.func @lstm_grad
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x5xf32>, %[[WIH:[^:]*]]: tensor<28x5xf32>, %[[WHH:[^:]*]]: tensor<28x7xf32>
// CHECK: %[[GATES0:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%[[X]], %[[WIH]] :
// CHECK: %[[SHIFTED:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[1, 0, 0]
// CHECK: %[[YPREV:.*]] = tensor.extract_slice %[[SHIFTED]][0, 0, 0]
// CHECK: %[[GATES:.*]] = linalg.generic {{.*}} ins(%[[YPREV]], %[[WHH]] : {{.*}} outs(%[[GATES0]] :
// CHECK: %[[CELLS:.*]] = scf.for
// CHECK: %[[BACK:.*]]:3 = scf.for
// CHECK:   %[[T:.*]] = arith.subi
// CHECK:   linalg.generic {{.*}} outs({{.*}}, {{.*}}, {{.*}}, {{.*}}, {{.*}} : tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
// CHECK-COUNT-4: tensor.insert_slice
// CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %[[WHH]] : tensor<?x28xf32>, tensor<28x7xf32>)
// CHECK:   scf.yield
// d_input (used), d_w_ih, d_w_hh over all rows, d_bias.
// CHECK: linalg.generic {{.*}} ins(%[[BACK]]#0, %[[WIH]] : tensor<?x?x28xf32>, tensor<28x5xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]{{.*}} ins(%[[BACK]]#0, %[[X]] :
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]{{.*}} ins(%[[BACK]]#0, %[[YPREV]] :
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]{{.*}} ins(%[[BACK]]#0 :
func.func @lstm_grad(%x: tensor<?x?x5xf32>, %w_ih: tensor<28x5xf32>, %w_hh: tensor<28x7xf32>,
    %b: tensor<28xf32>, %y: tensor<?x?x7xf32>, %d_y: tensor<?x?x7xf32>)
    -> (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>) {
  %dx, %dwi, %dwh, %db, %dh0, %dc0 = recur.lstm_grad %x, %w_ih, %w_hh, %b, %b y(%y) d_y(%d_y)
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>,
         tensor<?x?x7xf32>, tensor<?x?x7xf32>)
      -> (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  return %dx, %dwi, %dwh, %db : tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>
}

// -----

// With the initial state and the final state's gradients, without biases or
// d_y: h0 is the shifted y's first step, c0 the cell scan's first, the
// reverse loop starts from d_h_n and d_c_n, and carries out d_h0 and d_c0;
// the gates start from zeros and every step reads a zero d_y.
// CHECK-LABEL: func.func @lstm_grad_state
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x5xf32>, %[[WIH:[^:]*]]: tensor<28x5xf32>, %[[WHH:[^:]*]]: tensor<28x7xf32>, %[[Y:[^:]*]]: tensor<?x?x7xf32>, %[[H0:[^:]*]]: tensor<?x7xf32>, %[[C0:[^:]*]]: tensor<?x7xf32>, %[[DHN:[^:]*]]: tensor<?x7xf32>, %[[DCN:[^:]*]]: tensor<?x7xf32>
// CHECK: %[[GATES0:.*]] = linalg.fill
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[WIH]] : {{.*}} outs(%[[GATES0]] :
// CHECK: %[[FIRST:.*]] = tensor.insert_slice %[[H0]] into %{{.*}}[%{{.*}}, 0, 0]
// CHECK: tensor.insert_slice %[[Y]] into %[[FIRST]][1, 0, 0]
// CHECK: tensor.insert_slice %[[C0]] into %{{.*}}[%{{.*}}, 0, 0]
// CHECK: scf.for
// CHECK: %[[NODY:.*]] = linalg.fill {{.*}} -> tensor<?x7xf32>
// CHECK: %[[BACK:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[DHN]], %{{.*}} = %[[DCN]])
// CHECK:   linalg.generic {{.*}} ins({{.*}}, %[[NODY]], {{.*}} :
// CHECK: return %[[BACK]]#1, %[[BACK]]#2
func.func @lstm_grad_state(%x: tensor<?x?x5xf32>, %w_ih: tensor<28x5xf32>, %w_hh: tensor<28x7xf32>,
    %y: tensor<?x?x7xf32>, %h0: tensor<?x7xf32>, %c0: tensor<?x7xf32>, %d_h_n: tensor<?x7xf32>,
    %d_c_n: tensor<?x7xf32>) -> (tensor<?x7xf32>, tensor<?x7xf32>) {
  %g:6 = recur.lstm_grad %x, %w_ih, %w_hh y(%y) h0(%h0) c0(%c0) d_h_n(%d_h_n) d_c_n(%d_c_n)
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<?x?x7xf32>, tensor<?x7xf32>,
         tensor<?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
      -> (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  return %g#4, %g#5 : tensor<?x7xf32>, tensor<?x7xf32>
}

// -----

// With lengths: a [T, B] mask of the steps within each row's length; the
// cell scan keeps a row's c past its length (a select), and the reverse
// loop's step selects zero gate gradients there and passes dc and dh on
// (dh in place, the recurrent product accumulated onto it).
// CHECK-LABEL: func.func @lstm_grad_lengths
// CHECK-SAME: %[[N:[^:]*]]: tensor<?xi64>
// CHECK: %[[MASK:.*]] = linalg.generic {{.*}} ins(%[[N]] : tensor<?xi64>) outs(%{{.*}} : tensor<?x?xf32>)
// CHECK:   arith.cmpi slt
// CHECK:   arith.uitofp
// CHECK: scf.for
// CHECK:   tensor.extract_slice %[[MASK]]
// CHECK:   linalg.generic
// CHECK:     arith.cmpf ogt
// CHECK:     arith.select
// CHECK: %[[BACK:.*]]:3 = scf.for
// CHECK:   tensor.extract_slice %[[MASK]]
// CHECK:   %[[STEP:.*]]:6 = linalg.generic
// CHECK-COUNT-6: arith.select
// CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%[[STEP]]#5 :
func.func @lstm_grad_lengths(%x: tensor<?x?x5xf32>, %w_ih: tensor<28x5xf32>, %w_hh: tensor<28x7xf32>,
    %y: tensor<?x?x7xf32>, %d_y: tensor<?x?x7xf32>, %n: tensor<?xi64>) -> tensor<28x7xf32> {
  %g:6 = recur.lstm_grad %x, %w_ih, %w_hh y(%y) d_y(%d_y) lengths(%n)
      : (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<?x?x7xf32>, tensor<?x?x7xf32>,
         tensor<?xi64>)
      -> (tensor<?x?x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<?x7xf32>, tensor<?x7xf32>)
  return %g#2 : tensor<28x7xf32>
}

// -----

// A GRU layer's backward: both gate products recomputed over all steps (x ·
// w_ihᵀ and the shifted y · w_hhᵀ), the reverse loop (one fused step with
// five results, dh ⊙ z in place of dh, then dgh_t · w_hh accumulated onto
// it), then the weight and bias gradients over all rows.
// CHECK-LABEL: func.func @gru_grad
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x5xf32>, %[[WIH:[^:]*]]: tensor<21x5xf32>, %[[WHH:[^:]*]]: tensor<21x7xf32>
// CHECK: %[[GI:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[WIH]] :
// CHECK: %[[GH:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[WHH]] :
// CHECK: %[[BACK:.*]]:3 = scf.for
// CHECK:   %[[STEP:.*]]:5 = linalg.generic
// CHECK-COUNT-6: tensor.insert_slice
// CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %[[WHH]] : tensor<?x21xf32>, tensor<21x7xf32>) outs(%[[STEP]]#4 :
// CHECK: linalg.generic {{.*}} ins(%[[BACK]]#0, %[[WIH]] :
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]{{.*}} ins(%[[BACK]]#0, %[[X]] :
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]{{.*}} ins(%[[BACK]]#1, %{{.*}} :
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]{{.*}} ins(%[[BACK]]#0 :
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]{{.*}} ins(%[[BACK]]#1 :
func.func @gru_grad(%x: tensor<?x?x5xf32>, %w_ih: tensor<21x5xf32>, %w_hh: tensor<21x7xf32>,
    %b: tensor<21xf32>, %y: tensor<?x?x7xf32>, %d_y: tensor<?x?x7xf32>)
    -> (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>) {
  %g:6 = recur.gru_grad %x, %w_ih, %w_hh, %b, %b y(%y) d_y(%d_y)
      : (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>,
         tensor<?x?x7xf32>, tensor<?x?x7xf32>)
      -> (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<?x7xf32>)
  return %g#0, %g#1, %g#2, %g#3, %g#4 : tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>
}

// -----

// A gradient nobody reads is not computed: d_input of a model input.
// CHECK-LABEL: func.func @linear_grad_unused_input
// CHECK-NOT: tensor<4x13xf32>, tensor<13x7xf32>) outs
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x13xf32>, tensor<4x7xf32>) outs(%{{.*}} : tensor<13x7xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<4x13xf32>) outs(%{{.*}} : tensor<13xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @linear_grad_unused_input(%d: tensor<4x13xf32>, %x: tensor<4x7xf32>, %w: tensor<13x7xf32>)
    -> (tensor<13x7xf32>, tensor<13xf32>) {
  %dx, %dw, %db = recur.linear_grad %d, %x, %w
      : (tensor<4x13xf32>, tensor<4x7xf32>, tensor<13x7xf32>) -> (tensor<4x7xf32>, tensor<13x7xf32>, tensor<13xf32>)
  return %dw, %db : tensor<13x7xf32>, tensor<13xf32>
}

// -----

// Rows summed by id, one id after another: a loop over the flattened ids.
// CHECK-LABEL: func.func @embedding_grad
// CHECK: %[[IDS:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<?x?xi64> into tensor<?xi64>
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<13x5xf32>
// CHECK: scf.for {{.*}} iter_args(%[[TABLE:.*]] = %[[ZERO]])
// CHECK:   %[[ID:.*]] = tensor.extract %[[IDS]]
// CHECK:   %[[ROW:.*]] = arith.index_cast %[[ID]]
// CHECK:   tensor.extract_slice %[[TABLE]][%[[ROW]], 0] [1, 5] [1, 1]
// CHECK:   tensor.insert_slice %{{.*}} into %[[TABLE]][%[[ROW]], 0] [1, 5] [1, 1]
// The GPU's form: a task per column of each block of rows (4 blocks of 4
// rows, the last one short), each walking every id and adding those in its
// block: no host loop over ids, no two tasks on one element.
// BLOCKS-LABEL: func.func @embedding_grad
// BLOCKS: %[[IDS:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<?x?xi64> into tensor<?xi64>
// BLOCKS: %[[D:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<?x?x5xf32> into tensor<?x5xf32>
// BLOCKS: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<13x5xf32>
// BLOCKS: scf.forall (%[[R:.*]], %[[E:.*]]) in (4, 5) shared_outs(%[[TABLE:.*]] = %[[ZERO]])
// BLOCKS:   %[[FIRST:.*]] = arith.muli %[[R]], %{{.*}} : index
// BLOCKS:   %[[SIZE:.*]] = arith.minsi
// BLOCKS:   %[[COLUMN:.*]] = tensor.extract_slice %[[TABLE]][%[[FIRST]], %[[E]]] [%[[SIZE]], 1] [1, 1] : tensor<13x5xf32> to tensor<?xf32>
// BLOCKS:   %[[SUMS:.*]] = scf.for %[[P:.*]] = {{.*}} iter_args(%[[SUM:.*]] = %[[COLUMN]])
// BLOCKS:     %[[ID:.*]] = tensor.extract %[[IDS]][%[[P]]]
// BLOCKS:     %[[ROW:.*]] = arith.index_cast %[[ID]]
// BLOCKS:     %[[LOCAL:.*]] = arith.subi %[[ROW]], %[[FIRST]]
// BLOCKS:     %[[IN:.*]] = arith.cmpi ult, %[[LOCAL]], %[[SIZE]]
// BLOCKS:     scf.if %[[IN]]
// BLOCKS:       %[[OLD:.*]] = tensor.extract %[[SUM]][%[[LOCAL]]]
// BLOCKS:       %[[ADD:.*]] = tensor.extract %[[D]][%[[P]], %[[E]]]
// BLOCKS:       %[[NEW:.*]] = arith.addf %[[OLD]], %[[ADD]]
// BLOCKS:       tensor.insert %[[NEW]] into %[[SUM]][%[[LOCAL]]]
// BLOCKS:     } else {
// BLOCKS:       scf.yield %[[SUM]]
// BLOCKS:   scf.forall.in_parallel
// BLOCKS:     tensor.parallel_insert_slice %[[SUMS]] into %[[TABLE]][%[[FIRST]], %[[E]]] [%[[SIZE]], 1] [1, 1]
func.func @embedding_grad(%d: tensor<?x?x5xf32>, %ids: tensor<?x?xi64>) -> tensor<13x5xf32> {
  %0 = recur.embedding_grad %d[%ids] rows(13) : (tensor<?x?x5xf32>, tensor<?x?xi64>) -> tensor<13x5xf32>
  return %0 : tensor<13x5xf32>
}

// -----

// One scale for all gradients, min(1, max_norm / (norm + 1e-6)), kept in a
// rank-0 tensor that the scaling reads (no tensor.extract: on the GPU the host
// never reads it). A 2-D gradient's squares are summed by rows first; the
// update writes into the weight's tensor.
// CHECK-LABEL: func.func @clip_and_update
// CHECK-SAME: %[[W:[^:]*]]: tensor<4xf32>, %[[G:[^:]*]]: tensor<4xf32>, %[[H:[^:]*]]: tensor<2x3xf32>
// CHECK-NOT: tensor.extract
// CHECK: %[[SQ_G:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[G]] : tensor<4xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[ROWS_H:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[H]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: %[[SQ_H:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[ROWS_H]] : tensor<2xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[NORM:.*]] = linalg.generic {{.*}} ins(%[[SQ_G]], %[[SQ_H]] : tensor<f32>, tensor<f32>)
// CHECK:   math.sqrt
// CHECK: %[[SCALE:.*]] = linalg.generic {{.*}} ins(%[[NORM]] : tensor<f32>)
// CHECK:   arith.divf
// CHECK:   arith.minimumf
// CHECK: %[[CG:.*]] = linalg.generic {{.*}} ins(%[[G]], %[[SCALE]] : tensor<4xf32>, tensor<f32>)
// CHECK: %[[CH:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[SCALE]] : tensor<2x3xf32>, tensor<f32>)
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[CG]] : tensor<4xf32>) outs(%[[W]] : tensor<4xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.subf
// CHECK: return %[[NORM]], %[[NEW]], %[[CH]]
// CHECK-NOT: tensor.extract
func.func @clip_and_update(%w: tensor<4xf32>, %g: tensor<4xf32>, %h: tensor<2x3xf32>)
    -> (tensor<f32>, tensor<4xf32>, tensor<2x3xf32>) {
  %norm, %c:2 = recur.clip_grad_norm %g, %h max_norm(0.25)
      : (tensor<4xf32>, tensor<2x3xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<2x3xf32>)
  %new = recur.sgd_update %w, %c#0 lr(0.5) : tensor<4xf32>
  return %norm, %new, %c#1 : tensor<f32>, tensor<4xf32>, tensor<2x3xf32>
}

// -----

// The mean's scale, d_loss / (T·B), stays a rank-0 tensor that the gradient's
// generic reads at no index: the host never extracts it.
// CHECK-LABEL: func.func @cross_entropy_grad_mean
// CHECK-SAME: %{{[^:]*}}: tensor<?x?x13xf32>, %{{[^:]*}}: tensor<?x?xi64>, %[[DLOSS:[^:]*]]: tensor<f32>
// CHECK-NOT: tensor.extract %[[DLOSS]]
// CHECK: %[[SCALE:.*]] = linalg.generic {{.*}} ins(%[[DLOSS]] : tensor<f32>)
// CHECK:   arith.divf
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SCALE]] : tensor<?x?x13xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xi64>, tensor<f32>)
// CHECK:   math.exp
// CHECK:   arith.select
// CHECK:   arith.mulf
func.func @cross_entropy_grad_mean(%logits: tensor<?x?x13xf32>, %ids: tensor<?x?xi64>, %d_loss: tensor<f32>)
    -> tensor<?x?x13xf32> {
  %d_logits = recur.cross_entropy_grad %logits, %ids, %d_loss
      : (tensor<?x?x13xf32>, tensor<?x?xi64>, tensor<f32>) -> tensor<?x?x13xf32>
  return %d_logits : tensor<?x?x13xf32>
}
