// RUN: recur-opt %s --convert-recur-to-linalg | FileCheck %s
// RUN: recur-opt %s --convert-recur-to-linalg="active-row-products=false" | FileCheck %s --check-prefix=TOKENS

// A recur.rnn is a time loop (never unrolled) carrying y and the state: the
// body is the cell, on step t's rows of x (T-1-i in reverse); y_t goes into
// row t of y and the new state into the previous state's tensor, so that
// one buffer per state is carried.
// CHECK-LABEL: func.func @rnn
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>, %[[H0:[^:]*]]: tensor<?x7xf32>, %[[W:[^:]*]]: tensor<7x5xf32>)
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[Y0:.*]] = tensor.empty(%[[T]], %[[B]]) : tensor<?x?x7xf32>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %[[T]] step %{{.*}} iter_args(%[[Y:.*]] = %[[Y0]], %[[H:.*]] = %[[H0]]) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
// CHECK: %[[LAST:.*]] = arith.subi %[[T]], %{{.*}}
// CHECK: %[[STEP:.*]] = arith.subi %[[LAST]], %[[I]]
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[X]][%[[STEP]], 0, 0] [1, %[[B]], 5] [1, 1, 1] : tensor<?x?x5xf32> to tensor<?x5xf32>
// CHECK: %[[P:.*]] = linalg.generic
// CHECK-SAME: ins(%[[XT]], %[[W]] :
// CHECK: %[[S:.*]] = arith.addf %[[P]], %[[H]] : tensor<?x7xf32>
// CHECK: %[[HT:.*]] = math.tanh %[[S]]
// CHECK: %[[YT:.*]] = tensor.insert_slice %[[HT]] into %[[Y]][%[[STEP]], 0, 0] [1, %[[B]], 7] [1, 1, 1]
// CHECK: %[[HN:.*]] = linalg.copy ins(%[[HT]] : tensor<?x7xf32>) outs(%[[H]] : tensor<?x7xf32>)
// CHECK: scf.yield %[[YT]], %[[HN]]
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1
func.func @rnn(%x: tensor<?x?x5xf32>, %h0: tensor<?x7xf32>, %w: tensor<7x5xf32>)
    -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  %y, %h = recur.rnn %x init(%h0) captures(%w) reverse
      : (tensor<?x?x5xf32>, tensor<?x7xf32>, tensor<7x5xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %hp: tensor<?x7xf32>, %wt: tensor<7x5xf32>):
    %p = recur.linear %xt, %wt : (tensor<?x5xf32>, tensor<7x5xf32>) -> tensor<?x7xf32>
    %s = arith.addf %p, %hp : tensor<?x7xf32>
    %ht = math.tanh %s : tensor<?x7xf32>
    recur.yield %ht, %ht : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y, %h : tensor<?x?x7xf32>, tensor<?x7xf32>
}

// A static input with cell arguments less static than it (after
// recur-specialize-shapes): x_t and y_t are cast at the cell's boundary.
// CHECK-LABEL: func.func @static_input
// CHECK: scf.for
// CHECK: %[[XT:.*]] = tensor.extract_slice %{{.*}} : tensor<4x3x5xf32> to tensor<3x5xf32>
// CHECK: %[[XD:.*]] = tensor.cast %[[XT]] : tensor<3x5xf32> to tensor<?x5xf32>
// CHECK: %[[HT:.*]] = math.tanh
// CHECK: %[[YT:.*]] = tensor.cast %[[HT]] : tensor<?x7xf32> to tensor<3x7xf32>
// CHECK: tensor.insert_slice %[[YT]]
func.func @static_input(%x: tensor<4x3x5xf32>, %h0: tensor<?x7xf32>, %w: tensor<7x5xf32>) -> tensor<4x3x7xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%w)
      : (tensor<4x3x5xf32>, tensor<?x7xf32>, tensor<7x5xf32>) -> (tensor<4x3x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %hp: tensor<?x7xf32>, %wt: tensor<7x5xf32>):
    %p = recur.linear %xt, %wt : (tensor<?x5xf32>, tensor<7x5xf32>) -> tensor<?x7xf32>
    %s = arith.addf %p, %hp : tensor<?x7xf32>
    %ht = math.tanh %s : tensor<?x7xf32>
    recur.yield %ht, %ht : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y : tensor<4x3x7xf32>
}

// A recur.rnn_wavefront: one loop over the T + L - 1 diagonals s carrying y,
// each layer's state and the y_t of every layer but the last. Layer l has a
// step (t = s - l) when l <= s < T + l; the last layer goes first, so that it
// reads layer 0's y_t of the diagonal before (the carried row) before layer
// 0 writes the next one over it.
// CHECK-LABEL: func.func @rnn_wavefront
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>, %[[H0:[^:]*]]: tensor<?x7xf32>, %[[H1:[^:]*]]: tensor<?x3xf32>, %[[W0:[^:]*]]: tensor<7x5xf32>, %[[W1:[^:]*]]: tensor<3x7xf32>)
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[Y0:.*]] = tensor.empty(%[[T]], %[[B]]) : tensor<?x?x3xf32>
// CHECK: %[[ROW0:.*]] = tensor.empty(%[[B]]) : tensor<?x7xf32>
// CHECK: %[[DIAGONALS:.*]] = arith.addi %[[T]], %c1
// CHECK: %[[LOOP:.*]]:4 = scf.for %[[S:.*]] = %{{.*}} to %[[DIAGONALS]] step %{{.*}} iter_args(%[[Y:.*]] = %[[Y0]], %[[HA:.*]] = %[[H0]], %[[HB:.*]] = %[[H1]], %[[ROW:.*]] = %[[ROW0]])
// CHECK: %[[FROM1:.*]] = arith.cmpi uge, %[[S]], %c1
// CHECK: %[[UNTIL1:.*]] = arith.cmpi ult, %[[S]],
// CHECK: %[[ACTIVE1:.*]] = arith.andi %[[FROM1]], %[[UNTIL1]]
// CHECK: %[[LAYER1:.*]]:2 = scf.if %[[ACTIVE1]] -> (tensor<?x3xf32>, tensor<?x?x3xf32>) {
// CHECK: %[[T1:.*]] = arith.subi %[[S]], %c1
// CHECK: linalg.generic {{.*}} ins(%[[ROW]], %[[W1]] :
// CHECK: %[[N1:.*]] = math.tanh
// CHECK: %[[C1:.*]] = linalg.copy ins(%[[N1]] : tensor<?x3xf32>) outs(%[[HB]] : tensor<?x3xf32>)
// CHECK: %[[YT:.*]] = tensor.insert_slice %[[N1]] into %[[Y]][%[[T1]], 0, 0] [1, %[[B]], 3]
// CHECK: scf.yield %[[C1]], %[[YT]]
// CHECK: } else {
// CHECK: scf.yield %[[HB]], %[[Y]]
// CHECK: %[[LAYER0:.*]]:2 = scf.if %{{.*}} -> (tensor<?x7xf32>, tensor<?x7xf32>) {
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[X]][%{{.*}}, 0, 0] [1, %[[B]], 5]
// CHECK: linalg.generic {{.*}} ins(%[[XT]], %[[W0]] :
// CHECK: %[[N0:.*]] = math.tanh
// CHECK: %[[C0:.*]] = linalg.copy ins(%[[N0]] : tensor<?x7xf32>) outs(%[[HA]] : tensor<?x7xf32>)
// CHECK: %[[R0:.*]] = linalg.copy ins(%[[N0]] : tensor<?x7xf32>) outs(%[[ROW]] : tensor<?x7xf32>)
// CHECK: scf.yield %[[C0]], %[[R0]]
// CHECK: } else {
// CHECK: scf.yield %[[HA]], %[[ROW]]
// CHECK: scf.yield %[[LAYER1]]#1, %[[LAYER0]]#0, %[[LAYER1]]#0, %[[LAYER0]]#1
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2
func.func @rnn_wavefront(%x: tensor<?x?x5xf32>, %h0: tensor<?x7xf32>, %h1: tensor<?x3xf32>,
    %w0: tensor<7x5xf32>, %w1: tensor<3x7xf32>)
    -> (tensor<?x?x3xf32>, tensor<?x7xf32>, tensor<?x3xf32>) {
  %y, %s:2 = recur.rnn_wavefront %x init(%h0, %h1) captures(%w0, %w1)
      states [1, 1] captures [1, 1]
      : (tensor<?x?x5xf32>, tensor<?x7xf32>, tensor<?x3xf32>, tensor<7x5xf32>, tensor<3x7xf32>)
      -> (tensor<?x?x3xf32>, tensor<?x7xf32>, tensor<?x3xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %h: tensor<?x7xf32>, %wt: tensor<7x5xf32>):
    %p = recur.linear %xt, %wt : (tensor<?x5xf32>, tensor<7x5xf32>) -> tensor<?x7xf32>
    %sum = arith.addf %p, %h : tensor<?x7xf32>
    %hn = math.tanh %sum : tensor<?x7xf32>
    recur.yield %hn, %hn : tensor<?x7xf32>, tensor<?x7xf32>
  }, {
  ^bb0(%in: tensor<?x7xf32>, %h: tensor<?x3xf32>, %wt: tensor<3x7xf32>):
    %p = recur.linear %in, %wt : (tensor<?x7xf32>, tensor<3x7xf32>) -> tensor<?x3xf32>
    %sum = arith.addf %p, %h : tensor<?x3xf32>
    %hn = math.tanh %sum : tensor<?x3xf32>
    recur.yield %hn, %hn : tensor<?x3xf32>, tensor<?x3xf32>
  }
  return %y, %s#0, %s#1 : tensor<?x?x3xf32>, tensor<?x7xf32>, tensor<?x3xf32>
}

// With lengths, a row past its length keeps its state and outputs zeros:
// after the cell, y_t is selected against zero and the new state against
// the carried one (written over it), by t < lengths[b].
// CHECK-LABEL: func.func @rnn_lengths
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>, %[[H0:[^:]*]]: tensor<?x5xf32>, %[[L:[^:]*]]: tensor<?xi64>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[Y:.*]] = %{{.*}}, %[[H:.*]] = %[[H0]])
// CHECK: %[[HT:.*]] = math.tanh
// CHECK: %[[T64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[YT:.*]] = linalg.generic {{.*}} ins(%[[HT]], %[[L]] : tensor<?x5xf32>, tensor<?xi64>) outs(%{{.*}} : tensor<?x5xf32>)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[LEN:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[ACTIVE:.*]] = arith.cmpi slt, %[[T64]], %[[LEN]] : i64
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.select %[[ACTIVE]], %[[V]], %[[ZERO]] : f32
// CHECK: tensor.insert_slice %[[YT]] into %[[Y]]
// CHECK: %[[HN:.*]] = linalg.generic {{.*}} ins(%[[HT]], %[[L]] : tensor<?x5xf32>, tensor<?xi64>) outs(%[[H]] : tensor<?x5xf32>)
// CHECK: ^bb0(%[[V2:.*]]: f32, %[[LEN2:.*]]: i64, %[[OLD:.*]]: f32):
// CHECK: %[[ACTIVE2:.*]] = arith.cmpi slt, %{{.*}}, %[[LEN2]] : i64
// CHECK: arith.select %[[ACTIVE2]], %[[V2]], %[[OLD]] : f32
// CHECK-NOT: linalg.copy
// CHECK: scf.yield %{{.*}}, %[[HN]]
func.func @rnn_lengths(%x: tensor<?x?x5xf32>, %h0: tensor<?x5xf32>, %lengths: tensor<?xi64>)
    -> (tensor<?x?x5xf32>, tensor<?x5xf32>) {
  %y, %h = recur.rnn %x init(%h0) lengths(%lengths)
      : (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?xi64>) -> (tensor<?x?x5xf32>, tensor<?x5xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %hp: tensor<?x5xf32>):
    %s = arith.addf %xt, %hp : tensor<?x5xf32>
    %ht = math.tanh %s : tensor<?x5xf32>
    recur.yield %ht, %ht : tensor<?x5xf32>, tensor<?x5xf32>
  }
  return %y, %h : tensor<?x?x5xf32>, tensor<?x5xf32>
}

// A wavefront with lengths (its rows sorted by them): each layer's step
// runs on the rows active at its own time t = s - l, read from its input
// row (x_t, or the layer before's carried y_t, written for those rows at the
// diagonal before) and its state, and written back into them; the last
// layer's y_t rows past them are zeros.
// CHECK-LABEL: func.func @rnn_wavefront_sorted
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>, %{{[^:]*}}: tensor<?x7xf32>, %{{[^:]*}}: tensor<?x3xf32>, %{{[^:]*}}: tensor<7x5xf32>, %{{[^:]*}}: tensor<3x7xf32>, %[[L:[^:]*]]: tensor<?xi64>)
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[ACTIVE:.*]] = linalg.generic {{.*}} ins(%[[L]] : tensor<?xi64>)
// CHECK: scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[Y:.*]] = %{{.*}}, %[[HA:.*]] = %{{.*}}, %[[HB:.*]] = %{{.*}}, %[[ROW:.*]] = %{{.*}})
// CHECK: scf.if
// CHECK: %[[T1:.*]] = arith.subi %[[S]], %c1
// CHECK: tensor.extract %[[ACTIVE]][%[[T1]]]
// CHECK: %[[N1:.*]] = arith.minui %{{.*}}, %[[B]] : index
// CHECK: %[[IN1:.*]] = tensor.extract_slice %[[ROW]][0, 0] [%[[N1]], 7] [1, 1]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[HB]][0, 0] [%[[N1]], 3] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[IN1]], %{{.*}} :
// CHECK: %[[OUT1:.*]] = math.tanh
// CHECK: %[[NEW1:.*]] = tensor.insert_slice %[[OUT1]] into %[[HB]][0, 0] [%[[N1]], 3]
// CHECK: %[[Y1:.*]] = tensor.insert_slice %[[OUT1]] into %[[Y]][%[[T1]], 0, 0] [1, %[[N1]], 3]
// CHECK: linalg.fill
// CHECK: %[[Y2:.*]] = tensor.insert_slice %{{.*}} into %[[Y1]][%[[T1]], %[[N1]], 0]
// CHECK: scf.yield %[[NEW1]], %[[Y2]]
// CHECK: scf.if
// CHECK: %[[T0:.*]] = arith.subi %[[S]], %c0
// CHECK: tensor.extract %[[ACTIVE]][%[[T0]]]
// CHECK: %[[N0:.*]] = arith.minui %{{.*}}, %[[B]] : index
// CHECK: tensor.extract_slice %[[X]][%[[T0]], 0, 0] [1, %[[N0]], 5] [1, 1, 1]
// CHECK: %[[OUT0:.*]] = math.tanh
// CHECK: %[[NEW0:.*]] = tensor.insert_slice %[[OUT0]] into %[[HA]][0, 0] [%[[N0]], 7]
// CHECK: %[[ROW0:.*]] = tensor.insert_slice %[[OUT0]] into %[[ROW]][0, 0] [%[[N0]], 7]
// CHECK: scf.yield %[[NEW0]], %[[ROW0]]
func.func @rnn_wavefront_sorted(%x: tensor<?x?x5xf32>, %h0: tensor<?x7xf32>, %h1: tensor<?x3xf32>,
    %w0: tensor<7x5xf32>, %w1: tensor<3x7xf32>, %lengths: tensor<?xi64>)
    -> (tensor<?x?x3xf32>, tensor<?x7xf32>, tensor<?x3xf32>) {
  %y, %s:2 = recur.rnn_wavefront %x init(%h0, %h1) captures(%w0, %w1) lengths(%lengths)
      states [1, 1] captures [1, 1]
      : (tensor<?x?x5xf32>, tensor<?x7xf32>, tensor<?x3xf32>, tensor<7x5xf32>, tensor<3x7xf32>, tensor<?xi64>)
      -> (tensor<?x?x3xf32>, tensor<?x7xf32>, tensor<?x3xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %h: tensor<?x7xf32>, %wt: tensor<7x5xf32>):
    %p = recur.linear %xt, %wt : (tensor<?x5xf32>, tensor<7x5xf32>) -> tensor<?x7xf32>
    %sum = arith.addf %p, %h : tensor<?x7xf32>
    %hn = math.tanh %sum : tensor<?x7xf32>
    recur.yield %hn, %hn : tensor<?x7xf32>, tensor<?x7xf32>
  }, {
  ^bb0(%in: tensor<?x7xf32>, %h: tensor<?x3xf32>, %wt: tensor<3x7xf32>):
    %p = recur.linear %in, %wt : (tensor<?x7xf32>, tensor<3x7xf32>) -> tensor<?x3xf32>
    %sum = arith.addf %p, %h : tensor<?x3xf32>
    %hn = math.tanh %sum : tensor<?x3xf32>
    recur.yield %hn, %hn : tensor<?x3xf32>, tensor<?x3xf32>
  }
  return %y, %s#0, %s#1 : tensor<?x?x3xf32>, tensor<?x7xf32>, tensor<?x3xf32>
}

// With lengths `sorted` (recur-sort-by-length), the rows with a step at
// time t are the first active[t] = #{b : t < lengths[b]}: the hoisted
// product computes only those rows at each step (one GEMM each, written in
// place; the others stay unset, never read), and the step runs the cell on
// them, writes its new state over theirs, y_t into them and zeros into the
// rest. The row count is min(active[t], B): the bound of the step's
// buffers (recur-allocate-at-bound).
// CHECK-LABEL: func.func @rnn_sorted
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>, %[[W:[^:]*]]: tensor<7x5xf32>, %[[BIAS:[^:]*]]: tensor<7xf32>, %[[H0:[^:]*]]: tensor<?x7xf32>, %[[L:[^:]*]]: tensor<?xi64>)
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[ACTIVE:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[L]] : tensor<?xi64>)
// CHECK: arith.cmpi slt
// CHECK: %[[P:.*]] = scf.for %[[S:.*]] = %{{.*}} to %[[T]] step %{{.*}} iter_args(%[[PA:.*]] = %{{.*}}) -> (tensor<?x?x7xf32>)
// CHECK: %[[COUNT:.*]] = tensor.extract %[[ACTIVE]][%[[S]]]
// CHECK: %[[COUNTI:.*]] = arith.index_cast %[[COUNT]]
// CHECK: %[[N:.*]] = arith.minui %[[COUNTI]], %[[B]] : index
// CHECK: %[[XS:.*]] = tensor.extract_slice %[[X]][%[[S]], 0, 0] [1, %[[N]], 5] [1, 1, 1] : tensor<?x?x5xf32> to tensor<?x5xf32>
// CHECK: %[[PS:.*]] = tensor.extract_slice %[[PA]][%[[S]], 0, 0] [1, %[[N]], 7] [1, 1, 1]
// CHECK: %[[WITHBIAS:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<7xf32>) outs(%[[PS]] : tensor<?x7xf32>)
// CHECK: %[[PRODUCT:.*]] = linalg.generic {{.*}} ins(%[[XS]], %[[W]] : tensor<?x5xf32>, tensor<7x5xf32>) outs(%[[WITHBIAS]] : tensor<?x7xf32>)
// CHECK: tensor.insert_slice %[[PRODUCT]] into %[[PA]][%[[S]], 0, 0] [1, %[[N]], 7]
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[Y:.*]] = %{{.*}}, %[[H:.*]] = %[[H0]])
// CHECK: %[[M:.*]] = arith.minui %{{.*}}, %[[B2:.*]] : index
// CHECK: %[[XT:.*]] = tensor.extract_slice %[[P]][%[[I]], 0, 0] [1, %[[M]], 7] [1, 1, 1] : tensor<?x?x7xf32> to tensor<?x7xf32>
// CHECK: %[[HP:.*]] = tensor.extract_slice %[[H]][0, 0] [%[[M]], 7] [1, 1] : tensor<?x7xf32> to tensor<?x7xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[XT]], %[[HP]] : tensor<?x7xf32>
// CHECK: %[[HT:.*]] = math.tanh %[[SUM]] : tensor<?x7xf32>
// CHECK: %[[Y1:.*]] = tensor.insert_slice %[[HT]] into %[[Y]][%[[I]], 0, 0] [1, %[[M]], 7]
// CHECK: %[[DONE:.*]] = arith.subi %[[B2]], %[[M]] : index
// CHECK: %[[PAD:.*]] = tensor.extract_slice %[[Y1]][%[[I]], %[[M]], 0] [1, %[[DONE]], 7]
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[PAD]] : tensor<?x7xf32>)
// CHECK: %[[Y2:.*]] = tensor.insert_slice %[[ZEROS]] into %[[Y1]][%[[I]], %[[M]], 0] [1, %[[DONE]], 7]
// CHECK: %[[HN:.*]] = tensor.insert_slice %[[HT]] into %[[H]][0, 0] [%[[M]], 7] [1, 1]
// CHECK: scf.yield %[[Y2]], %[[HN]]
// Without active-row-products (the GPU's), the hoisted product is one GEMM
// over [T, B] that adds to the rows with t < lengths[b] only, marked
// recur.active_rows with the tokens before each step (sum_b min(len_b, t)),
// by which the GPU's kernel numbers the tokens.
// TOKENS-LABEL: func.func @rnn_sorted
// TOKENS-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf32>, %[[W:[^:]*]]: tensor<7x5xf32>, %[[BIAS:[^:]*]]: tensor<7xf32>, %{{[^:]*}}: tensor<?x7xf32>, %[[L:[^:]*]]: tensor<?xi64>)
// TOKENS: %[[WITHBIAS:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<7xf32>)
// TOKENS: %[[BEFORE:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[L]] : tensor<?xi64>)
// TOKENS: %[[T:.*]] = linalg.index 0
// TOKENS: %[[TI:.*]] = arith.index_cast %[[T]]
// TOKENS: %[[TOKENS:.*]] = arith.minsi %{{.*}}, %[[TI]]
// TOKENS: arith.addi %{{.*}}, %[[TOKENS]]
// TOKENS: %[[P:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[X]], %[[W]], %[[L]], %[[BEFORE]] : {{.*}}) outs(%[[WITHBIAS]] : tensor<?x?x7xf32>) attrs = {recur.active_rows}
// TOKENS: ^bb0(%[[XV:.*]]: f32, %[[WV:.*]]: f32, %[[LENGTH:.*]]: i64, %{{.*}}: i64, %[[ACC:.*]]: f32):
// TOKENS: %[[STEP:.*]] = linalg.index 0
// TOKENS: %[[STEPI:.*]] = arith.index_cast %[[STEP]]
// TOKENS: %[[ACTIVE:.*]] = arith.cmpi slt, %[[STEPI]], %[[LENGTH]]
// TOKENS: %[[PRODUCT:.*]] = arith.mulf %[[XV]], %[[WV]]
// TOKENS: %[[SUM:.*]] = arith.addf %[[ACC]], %[[PRODUCT]]
// TOKENS: arith.select %[[ACTIVE]], %[[SUM]], %[[ACC]]
// TOKENS: scf.for {{.*}} iter_args
// TOKENS: tensor.extract_slice %[[P]]
func.func @rnn_sorted(%x: tensor<?x?x5xf32>, %w: tensor<7x5xf32>, %b: tensor<7xf32>, %h0: tensor<?x7xf32>, %lengths: tensor<?xi64>)
    -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  %p = recur.linear %x, %w bias(%b) : (tensor<?x?x5xf32>, tensor<7x5xf32>, tensor<7xf32>) -> tensor<?x?x7xf32>
  %y, %h = recur.rnn %p init(%h0) lengths(%lengths) sorted
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.addf %xt, %hp : tensor<?x7xf32>
    %ht = math.tanh %s : tensor<?x7xf32>
    recur.yield %ht, %ht : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y, %h : tensor<?x?x7xf32>, tensor<?x7xf32>
}
