// RUN: recur-opt %s -split-input-file --recur-differentiate | FileCheck %s

// The backward of a recurrence whose cell is a region is a recur.rnn that
// runs the other way. Each reverse step reads, as one stream, x_t's product
// with its weight (one GEMM over all T·B rows before the loop, as for the
// forward), the states that entered the forward step (kept by the forward,
// after its y_t) and d_y_t; it recomputes the rest of the step and carries
// the states' gradients. What the weights' gradients need comes out per
// step, and their GEMMs run over all T·B rows after the loop: the recurrent
// product's input gradient uses the transposed weight, captured; the input
// product's whole gradient (input and weight) is one recur.linear_grad.

// CHECK-LABEL: func.func @elman
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x16xf32> {recur.input = "input"}
// CHECK-SAME: %[[WIH:[^:]*]]: tensor<32x16xf32> {recur.weight = "w_ih"}
// CHECK-SAME: %[[WHH:[^:]*]]: tensor<32x32xf32> {recur.weight = "w_hh"}
// CHECK-SAME: %[[KEPT:[^:]*]]: tensor<?x?x64xf32> {recur.input = "kept_states_0"}
// CHECK-SAME: %[[DY:[^:]*]]: tensor<?x?x32xf32> {recur.input = "d_y"}
// CHECK-SAME: %[[DHN:[^:]*]]: tensor<?x32xf32> {recur.input = "d_h_n"}
// CHECK-SAME: -> (tensor<?x?x16xf32> {recur.output = "d_input"}, tensor<?x32xf32> {recur.output = "d_h0"},
// CHECK-SAME: tensor<32x16xf32> {recur.output = "d_w_ih"}, tensor<32x32xf32> {recur.output = "d_w_hh"})
// CHECK-SAME: attributes {recur.backward}
// CHECK-NOT: recur.rnn {{.*}} -> (tensor<?x?x64xf32>
// CHECK: %[[PRODUCTS:.*]] = recur.linear %[[X]], %[[WIH]] : (tensor<?x?x16xf32>, tensor<32x16xf32>) -> tensor<?x?x32xf32>
// CHECK: %[[STREAM:.*]] = tensor.concat dim(2) %[[PRODUCTS]], %[[KEPT]], %[[DY]]
// CHECK: %[[WHHT:.*]] = recur.transpose %[[WHH]] [1, 0]
// CHECK: %[[DSTEPS:.*]], %[[DH0:.*]] = recur.rnn %[[STREAM]] init(%[[DHN]]) captures(%[[WIH]], %[[WHH]], %[[WHHT]]) reverse
// CHECK: ^bb0(%[[ROW:[^:]*]]: tensor<?x128xf32>, %[[DH:[^:]*]]: tensor<?x32xf32>, %{{[^:]*}}: tensor<32x16xf32>, %[[CWHH:[^:]*]]: tensor<32x32xf32>, %[[CWHHT:[^:]*]]: tensor<32x32xf32>)
// CHECK-DAG: %[[PT:.*]] = tensor.extract_slice %[[ROW]][0, 0] [%{{.*}}, 32]
// CHECK-DAG: %[[HPREV:.*]] = tensor.extract_slice %[[ROW]][0, 64] [%{{.*}}, 32]
// CHECK-NOT: tensor<?x16xf32>
// CHECK: %[[RT:.*]] = recur.linear %[[HPREV]], %[[CWHH]]
// CHECK: %[[S:.*]] = arith.addf %[[PT]], %[[RT]]
// CHECK-NOT: math.tanh %[[S]]
// CHECK: %[[DYT:.*]] = tensor.extract_slice %[[ROW]][0, 96] [%{{.*}}, 32]
// CHECK: %[[G:.*]] = arith.addf %[[DYT]], %[[DH]]
// CHECK: %[[DS:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[G]] :
// CHECK: math.tanh
// CHECK: arith.subf
// CHECK: } -> tensor<?x32xf32>
// CHECK: %[[DHPREV:.*]] = recur.linear %[[DS]], %[[CWHHT]]
// CHECK: recur.yield %[[DS]], %[[DHPREV]]
// CHECK: %[[HSEQ:.*]] = tensor.extract_slice %[[KEPT]][0, 0, 32]
// CHECK: %{{.*}}, %[[DWHH:.*]], %{{.*}} = recur.linear_grad %[[DSTEPS]], %[[HSEQ]], %[[WHH]]
// CHECK: %[[DX:.*]], %[[DWIH:.*]], %{{.*}} = recur.linear_grad %[[DSTEPS]], %[[X]], %[[WIH]]
// CHECK: return %[[DX]], %[[DH0]], %[[DWIH]], %[[DWHH]]
func.func @elman(%x: tensor<?x?x16xf32> {recur.input = "input"}, %h0: tensor<?x32xf32> {recur.input = "h0"},
                 %w_ih: tensor<32x16xf32> {recur.weight = "w_ih"}, %w_hh: tensor<32x32xf32> {recur.weight = "w_hh"})
    -> (tensor<?x?x32xf32> {recur.output = "y"}, tensor<?x32xf32> {recur.output = "h_n"}) attributes {recur.vjp} {
  %y, %h = recur.rnn %x init(%h0) captures(%w_ih, %w_hh)
      : (tensor<?x?x16xf32>, tensor<?x32xf32>, tensor<32x16xf32>, tensor<32x32xf32>)
      -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h_prev: tensor<?x32xf32>,
       %wi: tensor<32x16xf32>, %wh: tensor<32x32xf32>):
    %a = recur.linear %xt, %wi : (tensor<?x16xf32>, tensor<32x16xf32>) -> tensor<?x32xf32>
    %b = recur.linear %h_prev, %wh : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
    %s = arith.addf %a, %b : tensor<?x32xf32>
    %h_t = math.tanh %s : tensor<?x32xf32>
    recur.yield %h_t, %h_t : tensor<?x32xf32>, tensor<?x32xf32>
  }
  return %y, %h : tensor<?x?x32xf32>, tensor<?x32xf32>
}

// -----

// The forward of the pair (recur.keep_activations) returns what its backward
// reads: the states entering each step, after y_t in the recurrence's y,
// and its y is a slice of that.

// CHECK-LABEL: func.func @forward_keeps_states
// CHECK-SAME: -> (tensor<?x?x32xf32> {recur.output = "y"}, tensor<?x32xf32> {recur.output = "h_n"},
// CHECK-SAME: tensor<?x?x64xf32> {recur.kept, recur.output = "kept_states_0"})
// CHECK-NOT: recur.keep_activations
// CHECK: %[[KEPT:.*]], %[[HN:.*]] = recur.rnn
// CHECK: ^bb0(%{{.*}}: tensor<?x16xf32>, %[[HPREV:[^:]*]]: tensor<?x32xf32>,
// CHECK: %[[H:.*]] = math.tanh
// CHECK: %[[YT:.*]] = tensor.concat dim(1) %[[H]], %[[HPREV]]
// CHECK: recur.yield %[[YT]], %[[H]]
// CHECK: %[[Y:.*]] = tensor.extract_slice %[[KEPT]][0, 0, 0] [%{{.*}}, %{{.*}}, 32] [1, 1, 1]
// CHECK: return %[[Y]], %[[HN]], %[[KEPT]]
func.func @forward_keeps_states(%x: tensor<?x?x16xf32> {recur.input = "input"}, %h0: tensor<?x32xf32> {recur.input = "h0"},
                 %w_ih: tensor<32x16xf32> {recur.weight = "w_ih"}, %w_hh: tensor<32x32xf32> {recur.weight = "w_hh"})
    -> (tensor<?x?x32xf32> {recur.output = "y"}, tensor<?x32xf32> {recur.output = "h_n"}) attributes {recur.keep_activations} {
  %y, %h = recur.rnn %x init(%h0) captures(%w_ih, %w_hh)
      : (tensor<?x?x16xf32>, tensor<?x32xf32>, tensor<32x16xf32>, tensor<32x32xf32>)
      -> (tensor<?x?x32xf32>, tensor<?x32xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h_prev: tensor<?x32xf32>,
       %wi: tensor<32x16xf32>, %wh: tensor<32x32xf32>):
    %a = recur.linear %xt, %wi : (tensor<?x16xf32>, tensor<32x16xf32>) -> tensor<?x32xf32>
    %b = recur.linear %h_prev, %wh : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
    %s = arith.addf %a, %b : tensor<?x32xf32>
    %h_t = math.tanh %s : tensor<?x32xf32>
    recur.yield %h_t, %h_t : tensor<?x32xf32>, tensor<?x32xf32>
  }
  return %y, %h : tensor<?x?x32xf32>, tensor<?x32xf32>
}

// -----

// A parameter broadcast over the rows (a gain [n], as a layer norm's): its
// per-row contributions are summed over the steps in states the reverse
// loop carries (zero at first), and over the rows after it. The gradient of
// a loop-invariant value computed from parameters (1 - leak) is summed so
// too, and taken back to the parameter once, after the loop.

// CHECK-LABEL: func.func @parameters_per_feature
// CHECK-SAME: %[[LEAK:[^:]*]]: tensor<6xf32> {recur.weight = "leak"}
// CHECK-SAME: -> (tensor<?x?x4xf32> {recur.output = "d_input"}, tensor<?x6xf32> {recur.output = "d_h0"},
// CHECK-SAME: tensor<6x4xf32> {recur.output = "d_w"}, tensor<6x6xf32> {recur.output = "d_u"},
// CHECK-SAME: tensor<6xf32> {recur.output = "d_leak"})
// CHECK: %[[ZEROS1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x6xf32>)
// CHECK: %[[ZEROS2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x6xf32>)
// CHECK: %{{.*}}, %[[FINAL:.*]]:3 = recur.rnn %{{.*}} init(%{{.*}}, %[[ZEROS1]], %[[ZEROS2]]) {{.*}} reverse
// CHECK: ^bb0(%{{[^:]*}}: tensor<?x24xf32>, %{{[^:]*}}: tensor<?x6xf32>, %[[SUMGAIN:[^:]*]]: tensor<?x6xf32>, %[[SUMKEEP:[^:]*]]: tensor<?x6xf32>,
// CHECK: %[[D:.*]]:5 = linalg.generic
// CHECK-DAG: %[[NEXTGAIN:.*]] = arith.addf %[[SUMGAIN]], %[[D]]#2
// CHECK-DAG: %[[NEXTKEEP:.*]] = arith.addf %[[SUMKEEP]], %[[D]]#3
// CHECK: recur.yield %{{.*}}, %{{.*}}, %[[NEXTGAIN]], %[[NEXTKEEP]]
// CHECK: %[[DGAIN:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[ROWS:map[0-9]*]]], iterator_types = ["reduction", "parallel"]} ins(%[[FINAL]]#1 :
// CHECK: %[[DKEEP:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[ROWS]]], iterator_types = ["reduction", "parallel"]} ins(%[[FINAL]]#2 :
// CHECK: %[[DLEAK:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[LEAK]], %[[DKEEP]] :
// CHECK: arith.negf
// CHECK: %[[TOTAL:.*]] = arith.addf %[[DGAIN]], %[[DLEAK]] : tensor<6xf32>
// CHECK: return {{.*}}, %[[TOTAL]]
#identity = affine_map<(d0, d1) -> (d0, d1)>
#feature = affine_map<(d0, d1) -> (d1)>
func.func @parameters_per_feature(%x: tensor<?x?x4xf32> {recur.input = "input"}, %h0: tensor<?x6xf32> {recur.input = "h0"},
                %w: tensor<6x4xf32> {recur.weight = "w"}, %u: tensor<6x6xf32> {recur.weight = "u"},
                %leak: tensor<6xf32> {recur.weight = "leak"})
    -> (tensor<?x?x6xf32> {recur.output = "y"}, tensor<?x6xf32> {recur.output = "h_n"}) attributes {recur.vjp} {
  %y, %h = recur.rnn %x init(%h0) captures(%w, %u, %leak)
      : (tensor<?x?x4xf32>, tensor<?x6xf32>, tensor<6x4xf32>, tensor<6x6xf32>, tensor<6xf32>)
      -> (tensor<?x?x6xf32>, tensor<?x6xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x6xf32>, %wi: tensor<6x4xf32>, %wh: tensor<6x6xf32>, %l: tensor<6xf32>):
    %c0 = arith.constant 0 : index
    %B = tensor.dim %xt, %c0 : tensor<?x4xf32>
    %a = recur.linear %xt, %wi : (tensor<?x4xf32>, tensor<6x4xf32>) -> tensor<?x6xf32>
    %b = recur.linear %hp, %wh : (tensor<?x6xf32>, tensor<6x6xf32>) -> tensor<?x6xf32>
    %e6 = tensor.empty() : tensor<6xf32>
    %keep = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
        ins(%l : tensor<6xf32>) outs(%e6 : tensor<6xf32>) {
    ^bb0(%v: f32, %o: f32):
      %one = arith.constant 1.0 : f32
      %r = arith.subf %one, %v : f32
      linalg.yield %r : f32
    } -> tensor<6xf32>
    %e = tensor.empty(%B) : tensor<?x6xf32>
    %s = linalg.generic {indexing_maps = [#identity, #identity, #feature, #feature, #identity, #identity], iterator_types = ["parallel", "parallel"]}
        ins(%a, %b, %l, %keep, %hp : tensor<?x6xf32>, tensor<?x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<?x6xf32>) outs(%e : tensor<?x6xf32>) {
    ^bb0(%p: f32, %q: f32, %k: f32, %m: f32, %old: f32, %o: f32):
      %t0 = arith.addf %p, %q : f32
      %t1 = math.tanh %t0 : f32
      %t2 = arith.mulf %m, %t1 : f32
      %t3 = arith.mulf %k, %old : f32
      %t4 = arith.addf %t2, %t3 : f32
      linalg.yield %t4 : f32
    } -> tensor<?x6xf32>
    recur.yield %s, %s : tensor<?x6xf32>, tensor<?x6xf32>
  }
  return %y, %h : tensor<?x?x6xf32>, tensor<?x6xf32>
}

// -----

// A packed batch's reverse direction: its backward runs forward, from each
// row's first step, with the same lengths; past a row's length its steps
// give zero.

// CHECK-LABEL: func.func @reverse_with_lengths
// CHECK: recur.rnn %{{.*}} init(%{{.*}}) captures(%{{.*}}) lengths(%[[LENGTHS:[^)]*]]) :
// CHECK-NOT: reverse
// CHECK: recur.yield
func.func @reverse_with_lengths(%x: tensor<?x?x8xf32> {recur.input = "input"}, %lengths: tensor<?xi64> {recur.input = "lengths"},
                 %h0: tensor<?x8xf32> {recur.input = "h0"}, %w_hh: tensor<8x8xf32> {recur.weight = "w_hh"})
    -> (tensor<?x?x8xf32> {recur.output = "y"}, tensor<?x8xf32> {recur.output = "h_n"}) attributes {recur.vjp} {
  %y, %h = recur.rnn %x init(%h0) captures(%w_hh) lengths(%lengths) reverse
      : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>, tensor<?xi64>)
      -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h_prev: tensor<?x8xf32>, %wh: tensor<8x8xf32>):
    %b = recur.linear %h_prev, %wh : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %s = arith.addf %xt, %b : tensor<?x8xf32>
    %h_t = math.tanh %s : tensor<?x8xf32>
    recur.yield %h_t, %h_t : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y, %h : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// A training step through the LSTMs that recur.lstm_grad does not cover (a
// reverse direction, a projection): recur-differentiate takes each as the
// recur.rnn of its cell, keeps its states, and derives the backward from the
// region; the fused step updates every weight, w_hr included.

// CHECK-LABEL: func.func @reverse
// CHECK-NOT: recur.lstm
// CHECK: %[[KEPT:.*]], %{{.*}}:2 = recur.rnn %{{.*}} init({{.*}}) captures({{.*}}) reverse
// CHECK: recur.rnn %{{.*}} init({{.*}}) captures({{.*}}) :
// CHECK-COUNT-4: recur.sgd_update
func.func @reverse(%x: tensor<3x2x5xf32>, %t: tensor<3x2xi64>,
    %w_ih: tensor<28x5xf32> {recur.weight = "w_ih"}, %w_hh: tensor<28x7xf32> {recur.weight = "w_hh"},
    %b: tensor<28xf32> {recur.weight = "b"}, %p: tensor<13x7xf32> {recur.weight = "p"}) -> tensor<f32>
    attributes {recur.train = #recur.sgd<lr = 0.1>} {
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b, %b reverse
      : (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>)
      -> (tensor<3x2x7xf32>, tensor<2x7xf32>, tensor<2x7xf32>)
  %logits = recur.linear %y, %p : (tensor<3x2x7xf32>, tensor<13x7xf32>) -> tensor<3x2x13xf32>
  %loss = recur.cross_entropy %logits, %t : (tensor<3x2x13xf32>, tensor<3x2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// -----

// CHECK-LABEL: func.func @projected
// CHECK-NOT: recur.lstm
// CHECK: recur.rnn %{{.*}} init({{.*}}) captures(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[WHR:[^)]*]]) :
// CHECK: recur.rnn %{{.*}} init({{.*}}) captures({{.*}}) reverse
// CHECK: recur.sgd_update %[[WHR]], %{{.*}} : tensor<3x7xf32>
func.func @projected(%x: tensor<3x2x5xf32>, %t: tensor<3x2xi64>,
    %w_ih: tensor<28x5xf32> {recur.weight = "w_ih"}, %w_hh: tensor<28x3xf32> {recur.weight = "w_hh"},
    %b: tensor<28xf32> {recur.weight = "b"}, %w_hr: tensor<3x7xf32> {recur.weight = "w_hr"},
    %p: tensor<13x3xf32> {recur.weight = "p"}) -> tensor<f32>
    attributes {recur.train = #recur.sgd<lr = 0.1>} {
  %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b, %b proj(%w_hr)
      : (tensor<3x2x5xf32>, tensor<28x5xf32>, tensor<28x3xf32>, tensor<28xf32>, tensor<28xf32>, tensor<3x7xf32>)
      -> (tensor<3x2x3xf32>, tensor<2x3xf32>, tensor<2x7xf32>)
  %logits = recur.linear %y, %p : (tensor<3x2x3xf32>, tensor<13x3xf32>) -> tensor<3x2x13xf32>
  %loss = recur.cross_entropy %logits, %t : (tensor<3x2x13xf32>, tensor<3x2xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The gradient of a product sliced into gates: each gate's gradient is
// inserted into one tensor, zero-filled once, at its columns (which do not
// overlap), not padded with zeros per gate and the padded ones summed.

// CHECK-LABEL: func.func @gates_into_one_gradient
// CHECK: recur.rnn {{.*}} reverse
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[ONE:.*]] = tensor.insert_slice %{{.*}} into %[[ZEROS]][0, 8] [%{{.*}}, 8] [1, 1]
// CHECK-NOT: arith.addf %{{.*}} : tensor<?x16xf32>
// CHECK: %[[BOTH:.*]] = tensor.insert_slice %{{.*}} into %[[ONE]][0, 0] [%{{.*}}, 8] [1, 1]
// CHECK-NOT: arith.addf %{{.*}} : tensor<?x16xf32>
// CHECK: recur.linear %[[BOTH]]
// CHECK: recur.yield
func.func @gates_into_one_gradient(%x: tensor<?x?x4xf32> {recur.input = "input"}, %h0: tensor<?x8xf32> {recur.input = "h0"},
                                   %wh: tensor<16x8xf32> {recur.weight = "w_hh"})
    -> (tensor<?x?x8xf32> {recur.output = "y"}, tensor<?x8xf32> {recur.output = "h_n"}) attributes {recur.vjp} {
  %y, %h = recur.rnn %x init(%h0) captures(%wh)
      : (tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<16x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x8xf32>, %w: tensor<16x8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x4xf32>
    %q = recur.linear %hp, %w : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
    %z = tensor.extract_slice %q[0, 0] [%n, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
    %g = tensor.extract_slice %q[0, 8] [%n, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
    %zt = math.tanh %z : tensor<?x8xf32>
    %gt = math.tanh %g : tensor<?x8xf32>
    %hn = arith.mulf %zt, %gt : tensor<?x8xf32>
    recur.yield %hn, %hn : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y, %h : tensor<?x?x8xf32>, tensor<?x8xf32>
}
