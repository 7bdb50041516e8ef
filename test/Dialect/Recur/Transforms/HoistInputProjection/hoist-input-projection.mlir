// RUN: recur-opt %s -split-input-file --recur-hoist-input-projection | FileCheck %s

// Every recur.lstm becomes one recur.linear over all T·B rows, with both
// biases summed once, and the recurrence over the precomputed gates.
// CHECK-LABEL: func.func @lstm
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x4xf32>, %[[WIH:[^:]*]]: tensor<24x4xf32>, %[[WHH:[^:]*]]: tensor<24x6xf32>, %[[BIH:[^:]*]]: tensor<24xf32>, %[[BHH:[^:]*]]: tensor<24xf32>)
func.func @lstm(%x: tensor<?x?x4xf32>, %wih: tensor<24x4xf32>, %whh: tensor<24x6xf32>,
                %bih: tensor<24xf32>, %bhh: tensor<24xf32>)
    -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>) {
  // CHECK: %[[BIAS:.*]] = arith.addf %[[BIH]], %[[BHH]] : tensor<24xf32>
  // CHECK: %[[GATES:.*]] = recur.linear %[[X]], %[[WIH]] bias(%[[BIAS]]) : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
  // CHECK: %[[Y:.*]], %[[H:.*]], %[[C:.*]] = recur.lstm_recurrence %[[GATES]], %[[WHH]] : (tensor<?x?x24xf32>, tensor<24x6xf32>)
  // CHECK-NOT: recur.lstm
  // CHECK: return %[[Y]], %[[H]], %[[C]]
  %y, %h, %c = recur.lstm %x, %wih, %whh, %bih, %bhh
      : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24x6xf32>, tensor<24xf32>, tensor<24xf32>)
      -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y, %h, %c : tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>
}

// -----

// Initial states move to the recurrence; each layer of a stack is hoisted.
// CHECK-LABEL: func.func @stack_with_state
// CHECK-SAME: %[[H0:[^:]*]]: tensor<2x6xf32>, %[[C0:[^:]*]]: tensor<2x6xf32>)
func.func @stack_with_state(%x: tensor<3x2x4xf32>, %wih: tensor<24x4xf32>, %whh: tensor<24x6xf32>,
    %b: tensor<24xf32>, %wih1: tensor<24x6xf32>, %h0: tensor<2x6xf32>, %c0: tensor<2x6xf32>)
    -> tensor<3x2x6xf32> {
  // CHECK: recur.linear
  // CHECK: %[[Y0:.*]], %{{.*}}, %{{.*}} = recur.lstm_recurrence %{{.*}}, %{{.*}} h0(%[[H0]]) c0(%[[C0]]) :
  // CHECK: %[[G1:.*]] = recur.linear %[[Y0]]
  // CHECK: recur.lstm_recurrence %[[G1]], %{{.*}} :
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b h0(%h0) c0(%c0)
      : (tensor<3x2x4xf32>, tensor<24x4xf32>, tensor<24x6xf32>, tensor<24xf32>, tensor<24xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
      -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  %y1, %h1, %c1 = recur.lstm %y, %wih1, %whh, %b, %b
      : (tensor<3x2x6xf32>, tensor<24x6xf32>, tensor<24x6xf32>, tensor<24xf32>, tensor<24xf32>)
      -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  return %y1 : tensor<3x2x6xf32>
}

// -----

// Nothing to hoist: a recurrence that is already hoisted and the other ops
// stay as they are.
// CHECK-LABEL: func.func @nothing_to_hoist
func.func @nothing_to_hoist(%g: tensor<3x2x24xf32>, %whh: tensor<24x6xf32>, %w: tensor<5x6xf32>)
    -> tensor<3x2x5xf32> {
  // CHECK-NEXT: %[[Y:.*]], %{{.*}}, %{{.*}} = recur.lstm_recurrence
  // CHECK-NEXT: %[[P:.*]] = recur.linear %[[Y]]
  // CHECK-NEXT: return %[[P]]
  %y, %h, %c = recur.lstm_recurrence %g, %whh
      : (tensor<3x2x24xf32>, tensor<24x6xf32>) -> (tensor<3x2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
  %p = recur.linear %y, %w : (tensor<3x2x6xf32>, tensor<5x6xf32>) -> tensor<3x2x5xf32>
  return %p : tensor<3x2x5xf32>
}

// -----

// Without biases (nn.LSTM(bias=False)) the projection has none; a layer
// that runs in reverse keeps doing so.
// CHECK-LABEL: func.func @reverse_without_biases
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x4xf32>, %[[WIH:[^:]*]]: tensor<24x4xf32>, %[[WHH:[^:]*]]: tensor<24x6xf32>)
func.func @reverse_without_biases(%x: tensor<?x?x4xf32>, %wih: tensor<24x4xf32>, %whh: tensor<24x6xf32>)
    -> tensor<?x?x6xf32> {
  // CHECK-NOT: arith.addf
  // CHECK: %[[GATES:.*]] = recur.linear %[[X]], %[[WIH]] : (tensor<?x?x4xf32>, tensor<24x4xf32>) -> tensor<?x?x24xf32>
  // CHECK: recur.lstm_recurrence %[[GATES]], %[[WHH]] reverse :
  %y, %h, %c = recur.lstm %x, %wih, %whh reverse
      : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24x6xf32>)
      -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x6xf32>
}

// -----

// A projected layer (proj_size) keeps its projection on the recurrence.
// CHECK-LABEL: func.func @projected
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x4xf32>, %[[WIH:[^:]*]]: tensor<24x4xf32>, %[[WHH:[^:]*]]: tensor<24x3xf32>, %[[WHR:[^:]*]]: tensor<3x6xf32>)
// CHECK: %[[GATES:.*]] = recur.linear %[[X]], %[[WIH]] :
// CHECK: recur.lstm_recurrence %[[GATES]], %[[WHH]] proj(%[[WHR]]) : (tensor<?x?x24xf32>, tensor<24x3xf32>, tensor<3x6xf32>) -> (tensor<?x?x3xf32>, tensor<?x3xf32>, tensor<?x6xf32>)
func.func @projected(%x: tensor<?x?x4xf32>, %wih: tensor<24x4xf32>, %whh: tensor<24x3xf32>,
    %whr: tensor<3x6xf32>) -> tensor<?x?x3xf32> {
  %y, %h, %c = recur.lstm %x, %wih, %whh proj(%whr)
      : (tensor<?x?x4xf32>, tensor<24x4xf32>, tensor<24x3xf32>, tensor<3x6xf32>)
      -> (tensor<?x?x3xf32>, tensor<?x3xf32>, tensor<?x6xf32>)
  return %y : tensor<?x?x3xf32>
}

// -----

// A recur.rnn whose x_t feeds one product with a captured weight (a GRU's
// x_t · w_ihᵀ + b_ih): the product of all T·B rows is computed before the
// loop, and the cell reads its row block as x_t.
// CHECK-LABEL: func.func @rnn_product
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>, %[[H0:[^:]*]]: tensor<?x7xf32>, %[[W:[^:]*]]: tensor<21x5xf32>, %[[B:[^:]*]]: tensor<21xf32>)
// CHECK: %[[P:.*]] = recur.linear %[[X]], %[[W]] bias(%[[B]]) : (tensor<?x?x5xf32>, tensor<21x5xf32>, tensor<21xf32>) -> tensor<?x?x21xf32>
// CHECK: recur.rnn %[[P]] init(%[[H0]]) captures(%[[W]], %[[B]])
// CHECK: ^bb0(%[[XT:.*]]: tensor<?x21xf32>, %{{.*}}: tensor<?x7xf32>, %{{.*}}: tensor<21x5xf32>, %{{.*}}: tensor<21xf32>):
// CHECK-NOT: recur.linear
// CHECK: tensor.extract_slice %[[XT]][0, 14] [%{{.*}}, 7] [1, 1]
func.func @rnn_product(%x: tensor<?x?x5xf32>, %h0: tensor<?x7xf32>, %w: tensor<21x5xf32>, %b: tensor<21xf32>)
    -> tensor<?x?x7xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w, %b)
      : (tensor<?x?x5xf32>, tensor<?x7xf32>, tensor<21x5xf32>, tensor<21xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %hp: tensor<?x7xf32>, %wt: tensor<21x5xf32>, %bt: tensor<21xf32>):
    %p = recur.linear %xt, %wt bias(%bt) : (tensor<?x5xf32>, tensor<21x5xf32>, tensor<21xf32>) -> tensor<?x21xf32>
    %c0 = arith.constant 0 : index
    %n = tensor.dim %hp, %c0 : tensor<?x7xf32>
    %s = tensor.extract_slice %p[0, 14] [%n, 7] [1, 1] : tensor<?x21xf32> to tensor<?x7xf32>
    %ht = arith.addf %s, %hp : tensor<?x7xf32>
    recur.yield %ht, %ht : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y : tensor<?x?x7xf32>
}

// -----

// x_t also read for its batch size (as recur.compile_rnn's cells do): the
// product replaces x_t there too, with the same rows.
// CHECK-LABEL: func.func @rnn_product_and_batch_size
// CHECK: %[[P:.*]] = recur.linear %{{.*}}, %{{.*}} : (tensor<?x?x5xf32>, tensor<28x5xf32>) -> tensor<?x?x28xf32>
// CHECK: recur.rnn %[[P]]
// CHECK: ^bb0(%[[XT:[^:]*]]: tensor<?x28xf32>,
// CHECK-NOT: recur.linear %[[XT]]
// CHECK: tensor.dim %[[XT]], %{{.*}} : tensor<?x28xf32>
// CHECK-NOT: recur.linear %[[XT]]
func.func @rnn_product_and_batch_size(%x: tensor<?x?x5xf32>, %h0: tensor<?x7xf32>, %w: tensor<28x5xf32>)
    -> tensor<?x?x7xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w)
      : (tensor<?x?x5xf32>, tensor<?x7xf32>, tensor<28x5xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %hp: tensor<?x7xf32>, %wt: tensor<28x5xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x5xf32>
    %p = recur.linear %xt, %wt : (tensor<?x5xf32>, tensor<28x5xf32>) -> tensor<?x28xf32>
    %s = tensor.extract_slice %p[0, 7] [%n, 7] [1, 1] : tensor<?x28xf32> to tensor<?x7xf32>
    %ht = arith.addf %s, %hp : tensor<?x7xf32>
    recur.yield %ht, %ht : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y : tensor<?x?x7xf32>
}

// -----

// x_t read by a product and by an op on both, neither reading the state:
// the product alone is not hoisted, but both run rowwise on x_t only, so
// they run before the loop over x's T·B rows, and the cell reads their
// result's rows as x_t.
// CHECK-LABEL: func.func @rnn_product_and_more
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x7xf32>, %[[H0:[^:]*]]: tensor<?x7xf32>, %[[W:[^:]*]]: tensor<7x7xf32>)
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x?x7xf32> into tensor<?x7xf32>
// CHECK: %[[P:.*]] = recur.linear %[[ROWS]], %[[W]] : (tensor<?x7xf32>, tensor<7x7xf32>) -> tensor<?x7xf32>
// CHECK: %[[Q:.*]] = arith.mulf %[[P]], %[[ROWS]] : tensor<?x7xf32>
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[STEPS:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0, 1], [2]] output_shape [%[[T]], %[[B]], 7]
// CHECK: recur.rnn %[[STEPS]] init(%[[H0]])
// CHECK: ^bb0(%[[XT:[^:]*]]: tensor<?x7xf32>, %[[HP:[^:]*]]: tensor<?x7xf32>
// CHECK-NOT: recur.linear
// CHECK-NOT: arith.mulf
// CHECK: arith.addf %[[XT]], %[[HP]]
func.func @rnn_product_and_more(%x: tensor<?x?x7xf32>, %h0: tensor<?x7xf32>, %w: tensor<7x7xf32>)
    -> tensor<?x?x7xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w)
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<7x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>, %wt: tensor<7x7xf32>):
    %p = recur.linear %xt, %wt : (tensor<?x7xf32>, tensor<7x7xf32>) -> tensor<?x7xf32>
    %q = arith.mulf %p, %xt : tensor<?x7xf32>
    %ht = arith.addf %q, %hp : tensor<?x7xf32>
    recur.yield %ht, %ht : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y : tensor<?x?x7xf32>
}

// -----

// x_t read other than by one product: left alone (a remark says why).
// CHECK-LABEL: func.func @rnn_direct
// CHECK: recur.rnn %{{[^ ]*}} init
func.func @rnn_direct(%x: tensor<?x?x7xf32>, %h0: tensor<?x7xf32>) -> tensor<?x?x7xf32> {
  %y, %h = recur.rnn %x init(%h0) : (tensor<?x?x7xf32>, tensor<?x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %ht = arith.addf %xt, %hp : tensor<?x7xf32>
    recur.yield %ht, %ht : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y : tensor<?x?x7xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A bias the cell adds to the product rows (a traced `x @ W + h @ U + b`,
// one generic per op) moves into the hoisted product: the sum is
// reassociated, (x·W + b) + h·U, and the step no longer adds it.
// CHECK-LABEL: func.func @rnn_bias_folded
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x4xf32>, %{{[^:]*}}: tensor<?x8xf32>, %[[W:[^:]*]]: tensor<8x4xf32>, %{{[^:]*}}: tensor<8x8xf32>, %[[B:[^:]*]]: tensor<8xf32>)
// CHECK: %[[P:.*]] = recur.linear %[[X]], %[[W]] bias(%[[B]])
// CHECK: recur.rnn %[[P]]
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: ^bb0(%[[S:[^:]*]]: f32, %{{[^:]*}}: f32, %{{[^:]*}}: f32):
// CHECK-NEXT: linalg.yield %[[S]] : f32
func.func @rnn_bias_folded(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %w: tensor<8x4xf32>, %u: tensor<8x8xf32>,
                           %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w, %u, %b)
      : (tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x8xf32>, %wt: tensor<8x4xf32>, %ut: tensor<8x8xf32>, %bt: tensor<8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x4xf32>
    %p = recur.linear %xt, %wt : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
    %q = recur.linear %hp, %ut : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %e0 = tensor.empty(%n) : tensor<?x8xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %q : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e0 : tensor<?x8xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %r = arith.addf %a, %c : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    %e1 = tensor.empty(%n) : tensor<?x8xf32>
    %t = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%s, %bt : tensor<?x8xf32>, tensor<8xf32>) outs(%e1 : tensor<?x8xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %r = arith.addf %a, %c : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    recur.yield %t, %t : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y : tensor<?x?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// nn.Linear's bias added to the product alone (fastrnns' RNN cells, traced:
// `x @ W + b`, then `+ h @ U`) moves into the hoisted product too; what is
// left of its add copies x_t and is not hoisted as a row chain (it would
// compute nothing, and its reshapes keep stacked layers from a wavefront).
// CHECK-LABEL: func.func @rnn_bias_of_the_product_alone
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x4xf32>, %{{[^:]*}}: tensor<?x8xf32>, %[[W:[^:]*]]: tensor<8x4xf32>, %{{[^:]*}}: tensor<8x8xf32>, %[[B:[^:]*]]: tensor<8xf32>)
// CHECK: %[[P:.*]] = recur.linear %[[X]], %[[W]] bias(%[[B]])
// CHECK-NOT: tensor.collapse_shape
// CHECK: recur.rnn %[[P]]
func.func @rnn_bias_of_the_product_alone(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %w: tensor<8x4xf32>, %u: tensor<8x8xf32>,
                                         %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w, %u, %b)
      : (tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x8xf32>, %wt: tensor<8x4xf32>, %ut: tensor<8x8xf32>, %bt: tensor<8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x4xf32>
    %p = recur.linear %xt, %wt : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
    %e0 = tensor.empty(%n) : tensor<?x8xf32>
    %v = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %bt : tensor<?x8xf32>, tensor<8xf32>) outs(%e0 : tensor<?x8xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %r = arith.addf %a, %c : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    %q = recur.linear %hp, %ut : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %e1 = tensor.empty(%n) : tensor<?x8xf32>
    %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%v, %q : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %r = arith.addf %a, %c : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    recur.yield %t, %t : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y : tensor<?x?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// Not folded: the bias is added after the rows are scaled ((p * 2) + b is
// not p·W' + b with W's bias). Reading x_t alone, the sum runs before the
// loop, on the T·B product rows, rather than in the step.
// CHECK-LABEL: func.func @rnn_bias_after_a_product
// CHECK: %[[P:.*]] = recur.linear %{{[^ ]*}}, %{{[^ ]*}} :
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[P]]
// CHECK: linalg.generic {{.*}} ins(%[[ROWS]], %{{.*}} : tensor<?x8xf32>, tensor<8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: recur.rnn
// CHECK-NOT: arith.mulf
func.func @rnn_bias_after_a_product(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %w: tensor<8x4xf32>,
                                    %b: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w, %b)
      : (tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<8x4xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x8xf32>, %wt: tensor<8x4xf32>, %bt: tensor<8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x4xf32>
    %p = recur.linear %xt, %wt : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
    %e0 = tensor.empty(%n) : tensor<?x8xf32>
    %t = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %bt : tensor<?x8xf32>, tensor<8xf32>) outs(%e0 : tensor<?x8xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %two = arith.constant 2.0 : f32
      %m = arith.mulf %a, %two : f32
      %r = arith.addf %m, %c : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    recur.yield %t, %t : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y : tensor<?x?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A scale the cell applies to the product rows first ((x·W + b) * s) moves
// into the hoisted product's weight and bias: W's rows and b times s,
// computed from the weights alone (the prologue's, once per binding).
// CHECK-LABEL: func.func @rnn_scale_folded
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x4xf32>, %{{[^:]*}}: tensor<?x8xf32>, %[[W:[^:]*]]: tensor<8x4xf32>, %[[B:[^:]*]]: tensor<8xf32>, %[[S:[^:]*]]: tensor<8xf32>)
// CHECK: %[[WS:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[S]] : tensor<8x4xf32>, tensor<8xf32>)
// CHECK: arith.mulf
// CHECK: %[[BS:.*]] = arith.mulf %[[B]], %[[S]] : tensor<8xf32>
// CHECK: %[[P:.*]] = recur.linear %[[X]], %[[WS]] bias(%[[BS]])
// CHECK: recur.rnn %[[P]]
// CHECK: linalg.generic
// CHECK-NOT: arith.mulf
// CHECK: math.tanh
func.func @rnn_scale_folded(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %w: tensor<8x4xf32>, %b: tensor<8xf32>,
                            %s: tensor<8xf32>) -> tensor<?x?x8xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w, %b, %s)
      : (tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<8x4xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x8xf32>, %wt: tensor<8x4xf32>, %bt: tensor<8xf32>, %st: tensor<8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x4xf32>
    %p = recur.linear %xt, %wt bias(%bt) : (tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %e0 = tensor.empty(%n) : tensor<?x8xf32>
    %t = linalg.generic {indexing_maps = [#id, #col, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %st, %hp : tensor<?x8xf32>, tensor<8xf32>, tensor<?x8xf32>) outs(%e0 : tensor<?x8xf32>) {
    ^bb0(%a: f32, %c: f32, %v: f32, %o: f32):
      %m = arith.mulf %a, %c : f32
      %r = arith.addf %m, %v : f32
      %q = math.tanh %r : f32
      linalg.yield %q : f32
    } -> tensor<?x8xf32>
    recur.yield %t, %t : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y : tensor<?x?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A layer norm of the hoisted product (a traced layer-norm LSTM's
// layernorm_i): its row statistics and normalization read x_t and the
// captures alone, so they run before the loop on x's T·B rows too, on
// tensors sized by the rows' count; the cell adds the normalized rows to
// its recurrent part. The state's product stays.
// CHECK-LABEL: func.func @layer_norm_of_the_product
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x3xf32>, %[[H0:[^:]*]]: tensor<?x4xf32>, %[[W:[^:]*]]: tensor<4x3xf32>, %[[U:[^:]*]]: tensor<4x4xf32>, %[[G:[^:]*]]: tensor<4xf32>)
// CHECK: %[[P:.*]] = recur.linear %[[X]], %[[W]] : (tensor<?x?x3xf32>, tensor<4x3xf32>) -> tensor<?x?x4xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1], [2]]
// CHECK: %[[N:.*]] = tensor.dim %[[ROWS]], %c0
// CHECK: tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<?x4xf32>)
// CHECK: %[[NORM:.*]] = linalg.generic {{.*}} ins(%[[ROWS]], %[[SUM]], %[[G]] : tensor<?x4xf32>, tensor<?xf32>, tensor<4xf32>)
// CHECK: %[[STEPS:.*]] = tensor.expand_shape %[[NORM]]
// CHECK: recur.rnn %[[STEPS]] init(%[[H0]])
// CHECK: ^bb0(%[[XT:[^:]*]]: tensor<?x4xf32>, %[[HP:[^:]*]]: tensor<?x4xf32>
// CHECK-NOT: iterator_types = ["parallel", "reduction"]
// CHECK: %[[R:.*]] = recur.linear %[[HP]]
// CHECK-NOT: iterator_types = ["parallel", "reduction"]
// CHECK: arith.addf %[[XT]], %[[R]]
func.func @layer_norm_of_the_product(%x: tensor<?x?x3xf32>, %h0: tensor<?x4xf32>, %w: tensor<4x3xf32>,
                                     %u: tensor<4x4xf32>, %g: tensor<4xf32>) -> tensor<?x?x4xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w, %u, %g)
      : (tensor<?x?x3xf32>, tensor<?x4xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x3xf32>, %hp: tensor<?x4xf32>, %wt: tensor<4x3xf32>, %ut: tensor<4x4xf32>, %gt: tensor<4xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x3xf32>
    %zero = arith.constant 0.0 : f32
    %p = recur.linear %xt, %wt : (tensor<?x3xf32>, tensor<4x3xf32>) -> tensor<?x4xf32>
    %e = tensor.empty(%n) : tensor<?xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%p : tensor<?x4xf32>) outs(%z : tensor<?xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    %e2 = tensor.empty(%n) : tensor<?x4xf32>
    %norm = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %sum, %gt : tensor<?x4xf32>, tensor<?xf32>, tensor<4xf32>) outs(%e2 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %m: f32, %c: f32, %o: f32):
      %quarter = arith.constant 0.25 : f32
      %mean = arith.mulf %m, %quarter : f32
      %d = arith.subf %a, %mean : f32
      %r = arith.mulf %d, %c : f32
      linalg.yield %r : f32
    } -> tensor<?x4xf32>
    %r = recur.linear %hp, %ut : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    %sum2 = arith.addf %norm, %r : tensor<?x4xf32>
    %ht = math.tanh %sum2 : tensor<?x4xf32>
    recur.yield %ht, %ht : tensor<?x4xf32>, tensor<?x4xf32>
  }
  return %y : tensor<?x?x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// What x_t alone gives is read by the rest of the cell as two values (a
// sum per row, and the product rows): hoisting them would make two
// sequences of one; only the product is hoisted.
// CHECK-LABEL: func.func @two_values_read
// CHECK: %[[P:.*]] = recur.linear
// CHECK-NOT: tensor.collapse_shape
// CHECK: recur.rnn %[[P]]
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @two_values_read(%x: tensor<?x?x3xf32>, %h0: tensor<?x4xf32>, %w: tensor<4x3xf32>) -> tensor<?x?x4xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w)
      : (tensor<?x?x3xf32>, tensor<?x4xf32>, tensor<4x3xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x3xf32>, %hp: tensor<?x4xf32>, %wt: tensor<4x3xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x3xf32>
    %zero = arith.constant 0.0 : f32
    %p = recur.linear %xt, %wt : (tensor<?x3xf32>, tensor<4x3xf32>) -> tensor<?x4xf32>
    %e = tensor.empty(%n) : tensor<?xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%p : tensor<?x4xf32>) outs(%z : tensor<?xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    %e2 = tensor.empty(%n) : tensor<?x4xf32>
    %ht = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %sum, %hp : tensor<?x4xf32>, tensor<?xf32>, tensor<?x4xf32>) outs(%e2 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %m: f32, %v: f32, %o: f32):
      %d = arith.subf %a, %m : f32
      %r = arith.addf %d, %v : f32
      linalg.yield %r : f32
    } -> tensor<?x4xf32>
    recur.yield %ht, %ht : tensor<?x4xf32>, tensor<?x4xf32>
  }
  return %y : tensor<?x?x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A sum over the batch (the rows) of x_t's product is no rowwise op: run
// on T·B rows it would sum over all steps. It stays in the cell.
// CHECK-LABEL: func.func @sum_over_rows_stays
// CHECK-NOT: tensor.collapse_shape
// CHECK: recur.rnn
// CHECK: iterator_types = ["reduction", "parallel"]
func.func @sum_over_rows_stays(%x: tensor<?x?x3xf32>, %h0: tensor<?x4xf32>, %w: tensor<4x3xf32>) -> tensor<?x?x4xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w)
      : (tensor<?x?x3xf32>, tensor<?x4xf32>, tensor<4x3xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x3xf32>, %hp: tensor<?x4xf32>, %wt: tensor<4x3xf32>):
    %zero = arith.constant 0.0 : f32
    %p = recur.linear %xt, %wt : (tensor<?x3xf32>, tensor<4x3xf32>) -> tensor<?x4xf32>
    %e = tensor.empty() : tensor<4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
        ins(%p : tensor<?x4xf32>) outs(%z : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %e2 = tensor.empty() : tensor<4x4xf32>
    %c0 = arith.constant 0 : index
    %n = tensor.dim %hp, %c0 : tensor<?x4xf32>
    %e3 = tensor.empty(%n) : tensor<?x4xf32>
    %ht = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%hp, %sum : tensor<?x4xf32>, tensor<4xf32>) outs(%e3 : tensor<?x4xf32>) {
    ^bb0(%v: f32, %m: f32, %o: f32):
      %r = arith.addf %v, %m : f32
      linalg.yield %r : f32
    } -> tensor<?x4xf32>
    recur.yield %ht, %ht : tensor<?x4xf32>, tensor<?x4xf32>
  }
  return %y : tensor<?x?x4xf32>
}
