// RUN: recur-opt %s -split-input-file --recur-sort-by-length | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-sort-by-length --remarks-filter-missed=recur-sort-by-length -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: recur-opt %s -split-input-file --recur-sort-by-length="project-active-rows=false" | FileCheck %s --check-prefix=GPU-ROWS

// Rows are ranked by length, longest first, ties by row (B x B compares),
// and the row at each rank found from the ranks. The recurrence runs on
// its input's rows ([T, B, I] as [T*B, I], row t*B + order[b] at (t, b)),
// its state's and its lengths in that order, marked `sorted`; y and the
// final state are gathered back by rank.
// CHECK-LABEL: func.func @one_layer
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x7xf32>, %[[H0:[^:]*]]: tensor<?x7xf32>, %[[L:[^:]*]]: tensor<?xi64>)
// CHECK: %[[RANK:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[L]], %[[L]] : tensor<?xi64>, tensor<?xi64>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: arith.cmpi sgt
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi ult, %[[J]], %[[I]] : index
// CHECK: %[[ORDER:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[RANK]], %[[RANK]] : tensor<?xi64>, tensor<?xi64>)
// CHECK: %[[LS:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<?x1xi64> into tensor<?xi64>
// CHECK: %[[XROWS:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<?x?x7xf32> into tensor<?x7xf32>
// CHECK: %[[XIDS:.*]] = linalg.generic {{.*}} ins(%[[ORDER]] : tensor<?xi64>) outs(%{{.*}} : tensor<?x?xi64>)
// CHECK: arith.muli
// CHECK: %[[XS:.*]] = linalg.generic {{.*}} ins(%[[XIDS]] : tensor<?x?xi64>) outs(%{{.*}} : tensor<?x?x7xf32>)
// CHECK: tensor.extract %[[XROWS]]
// CHECK: %[[HS:.*]] = linalg.generic {{.*}} ins(%[[ORDER]] : tensor<?xi64>) outs(%{{.*}} : tensor<?x7xf32>)
// CHECK: tensor.extract %[[H0]]
// CHECK: %[[YS:.*]], %[[HN:.*]] = recur.rnn %[[XS]] init(%[[HS]]) lengths(%[[LS]]) sorted reverse
// CHECK: %[[YROWS:.*]] = tensor.collapse_shape %[[YS]]
// CHECK: %[[YIDS:.*]] = linalg.generic {{.*}} ins(%[[RANK]] : tensor<?xi64>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[YIDS]] : tensor<?x?xi64>)
// CHECK: tensor.extract %[[YROWS]]
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[RANK]] : tensor<?xi64>)
// CHECK: tensor.extract %[[HN]]
// CHECK: return %[[Y]], %[[H]]
func.func @one_layer(%x: tensor<?x?x7xf32>, %h0: tensor<?x7xf32>, %lengths: tensor<?xi64>)
    -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  %y, %h = recur.rnn %x init(%h0) lengths(%lengths) reverse
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.addf %xt, %hp : tensor<?x7xf32>
    %ht = math.tanh %s : tensor<?x7xf32>
    recur.yield %ht, %ht : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y, %h : tensor<?x?x7xf32>, tensor<?x7xf32>
}

// -----

// Two layers with the same lengths: the order is computed once, the second
// layer reads the first one's rows in order as they are, and only the last
// y is gathered back (the first one's restored y is left unused). The
// first layer's input comes from an embedding: its ids are sorted, not the
// rows it gathers.
// CHECK-LABEL: func.func @stack
// CHECK-SAME: (%[[TABLE:[^:]*]]: tensor<11x7xf32>, %[[TOKENS:[^:]*]]: tensor<?x?xi64>, %[[H0:[^:]*]]: tensor<?x7xf32>, %[[L:[^:]*]]: tensor<?xi64>)
// CHECK-COUNT-2: iterator_types = ["parallel", "reduction"]
// CHECK-NOT: iterator_types = ["parallel", "reduction"]
// CHECK: %[[IDS:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<?x?x1xi64> into tensor<?x?xi64>
// CHECK: %[[X:.*]] = recur.embedding %[[TABLE]][%[[IDS]]]
// CHECK: %[[Y0:.*]], %{{.*}} = recur.rnn %[[X]] init(%{{.*}}) lengths(%[[LS:.*]]) sorted
// CHECK: %[[Y1:.*]], %{{.*}} = recur.rnn %[[Y0]] init(%{{.*}}) lengths(%[[LS]]) sorted
// CHECK-NOT: recur.rnn
// CHECK: tensor.collapse_shape %[[Y1]]
func.func @stack(%table: tensor<11x7xf32>, %tokens: tensor<?x?xi64>, %h0: tensor<?x7xf32>, %lengths: tensor<?xi64>)
    -> tensor<?x?x7xf32> {
  %x = recur.embedding %table[%tokens] : (tensor<11x7xf32>, tensor<?x?xi64>) -> tensor<?x?x7xf32>
  %y0, %h_0 = recur.rnn %x init(%h0) lengths(%lengths)
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.addf %xt, %hp : tensor<?x7xf32>
    recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
  }
  %y1, %h_1 = recur.rnn %y0 init(%h0) lengths(%lengths)
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.mulf %xt, %hp : tensor<?x7xf32>
    recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y1 : tensor<?x?x7xf32>
}

// -----

// A cell compiled for one batch size cannot run on fewer rows: left as it
// is, masked, with a remark. Without lengths, and already sorted, there is
// nothing to do.
// CHECK-LABEL: func.func @left_alone
// CHECK: recur.rnn %{{.*}} init(%{{.*}}) lengths(%{{.*}}) :
// CHECK: recur.rnn %{{.*}} init(%{{.*}}) :
// CHECK: recur.rnn %{{.*}} init(%{{.*}}) lengths(%{{.*}}) sorted :
// CHECK-NOT: linalg.generic
// REMARK: remark: [Missed] every step runs all rows, masked | Category:recur-sort-by-length | Reason="the cell's batch is static"
func.func @left_alone(%x: tensor<5x3x7xf32>, %h0: tensor<3x7xf32>, %lengths: tensor<3xi64>,
                      %xd: tensor<?x?x7xf32>, %hd: tensor<?x7xf32>, %ld: tensor<?xi64>)
    -> (tensor<5x3x7xf32>, tensor<?x?x7xf32>, tensor<?x?x7xf32>) {
  %y, %h = recur.rnn %x init(%h0) lengths(%lengths)
      : (tensor<5x3x7xf32>, tensor<3x7xf32>, tensor<3xi64>) -> (tensor<5x3x7xf32>, tensor<3x7xf32>) {
  ^bb0(%xt: tensor<3x7xf32>, %hp: tensor<3x7xf32>):
    %s = arith.addf %xt, %hp : tensor<3x7xf32>
    recur.yield %s, %s : tensor<3x7xf32>, tensor<3x7xf32>
  }
  %y1, %h1 = recur.rnn %xd init(%hd)
      : (tensor<?x?x7xf32>, tensor<?x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.addf %xt, %hp : tensor<?x7xf32>
    recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
  }
  %y2, %h2 = recur.rnn %xd init(%hd) lengths(%ld) sorted
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.addf %xt, %hp : tensor<?x7xf32>
    recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y, %y1, %y2 : tensor<5x3x7xf32>, tensor<?x?x7xf32>, tensor<?x?x7xf32>
}

// -----

// An LM's output layer reads the last layer's y: its product runs step by
// step on the sorted rows, the active ones and one past them (a padded row
// of zeros, whose product is the bias), and each row of the step gathers
// the product of its rank, or the padded row's past its length
// (min(rank, active)). The gather of y back into the rows' order is left
// unused (canonicalization erases it).
// CHECK-LABEL: func.func @projection
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x7xf32>, %[[H0:[^:]*]]: tensor<?x7xf32>, %[[L:[^:]*]]: tensor<?xi64>, %[[W:[^:]*]]: tensor<11x7xf32>, %[[BIAS:[^:]*]]: tensor<11xf32>)
// CHECK: %[[RANK:.*]] = linalg.generic {{.*}} ins(%[[L]], %[[L]] :
// CHECK: %[[YS:.*]], %{{.*}} = recur.rnn {{.*}} sorted
// CHECK: %[[ACTIVE:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK: %[[LOGITS:.*]] = scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<?x?x11xf32>)
// CHECK: %[[COUNT:.*]] = tensor.extract %[[ACTIVE]][%[[T]]]
// CHECK: %[[N:.*]] = arith.minui %{{.*}}, %[[B:.*]] : index
// CHECK: %[[N1:.*]] = arith.addi %[[N]], %c1
// CHECK: %[[ROWS:.*]] = arith.minui %[[N1]], %[[B]] : index
// CHECK: %[[YT:.*]] = tensor.extract_slice %[[YS]][%[[T]], 0, 0] [1, %[[ROWS]], 7] [1, 1, 1]
// CHECK: %[[P:.*]] = recur.linear %[[YT]], %[[W]] bias(%[[BIAS]]) : (tensor<?x7xf32>, tensor<11x7xf32>, tensor<11xf32>) -> tensor<?x11xf32>
// CHECK: %[[LAST:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[IDS:.*]] = linalg.generic {{.*}} ins(%[[RANK]] : tensor<?xi64>)
// CHECK: arith.minsi %{{.*}}, %[[LAST]] : i64
// CHECK: %[[STEP:.*]] = tensor.extract_slice %[[ACC]][%[[T]], 0, 0] [1, %{{.*}}, 11] [1, 1, 1]
// CHECK: %[[GATHERED:.*]] = linalg.generic {{.*}} ins(%[[IDS]] : tensor<?xi64>) outs(%[[STEP]] : tensor<?x11xf32>)
// CHECK: tensor.extract %[[P]]
// CHECK: tensor.insert_slice %[[GATHERED]] into %[[ACC]][%[[T]], 0, 0]
// CHECK-NOT: recur.linear
// CHECK: return %[[LOGITS]]
// Without project-active-rows (the GPU's): one GEMM in the rows' order,
// of y gathered back, adding to the bias the products of the tokens (t <
// lengths[b]) only, marked recur.active_rows with the tokens before each
// step and the order by length, by which the kernel walks the tokens.
// GPU-ROWS-LABEL: func.func @projection
// GPU-ROWS-SAME: (%{{[^:]*}}: tensor<?x?x7xf32>, %{{[^:]*}}: tensor<?x7xf32>, %[[L:[^:]*]]: tensor<?xi64>, %[[W:[^:]*]]: tensor<11x7xf32>, %[[BIAS:[^:]*]]: tensor<11xf32>)
// GPU-ROWS: %[[RANK:.*]] = linalg.generic {{.*}} ins(%[[L]], %[[L]] :
// GPU-ROWS: %[[ORDER:.*]] = linalg.generic {{.*}} ins(%[[RANK]], %[[RANK]] :
// GPU-ROWS: recur.rnn {{.*}} sorted
// GPU-ROWS: %[[WITHBIAS:.*]] = linalg.generic {{.*}} ins(%[[BIAS]] : tensor<11xf32>)
// GPU-ROWS: %[[BEFORE:.*]] = linalg.generic {{.*}} ins(%[[L]] : tensor<?xi64>)
// GPU-ROWS: arith.minsi
// GPU-ROWS: %[[LOGITS:.*]] = linalg.generic {{.*}} ins(%{{[^,]*}}, %[[W]], %[[L]], %[[BEFORE]], %[[ORDER]] : tensor<?x?x7xf32>, tensor<11x7xf32>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) outs(%[[WITHBIAS]] : tensor<?x?x11xf32>) attrs = {recur.active_rows}
// GPU-ROWS: arith.cmpi slt
// GPU-ROWS: arith.select
// GPU-ROWS-NOT: recur.linear
// GPU-ROWS: return %[[LOGITS]]
func.func @projection(%x: tensor<?x?x7xf32>, %h0: tensor<?x7xf32>, %lengths: tensor<?xi64>,
                      %w: tensor<11x7xf32>, %b: tensor<11xf32>) -> tensor<?x?x11xf32> {
  %y, %h = recur.rnn %x init(%h0) lengths(%lengths)
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.addf %xt, %hp : tensor<?x7xf32>
    recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
  }
  %logits = recur.linear %y, %w bias(%b) : (tensor<?x?x7xf32>, tensor<11x7xf32>, tensor<11xf32>) -> tensor<?x?x11xf32>
  return %logits : tensor<?x?x11xf32>
}

// -----

// A bidirectional layer: both directions run on the sorted rows; the next
// layer, and the output layer, read the concatenation of their sorted y's
// (a tensor.concat of the sorted rows), not the rows gathered back.
// CHECK-LABEL: func.func @bidirectional
// CHECK: %[[F:.*]], %{{.*}} = recur.rnn {{.*}} sorted :
// CHECK: %[[R:.*]], %{{.*}} = recur.rnn {{.*}} sorted reverse :
// CHECK: %[[BOTH:.*]] = tensor.concat dim(2) %[[F]], %[[R]] : (tensor<?x?x7xf32>, tensor<?x?x7xf32>) -> tensor<?x?x14xf32>
// CHECK: %[[NEXT:.*]], %{{.*}} = recur.rnn %[[BOTH]] {{.*}} sorted :
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[NEXT]]
// CHECK: recur.linear
func.func @bidirectional(%x: tensor<?x?x7xf32>, %h0: tensor<?x7xf32>, %h1: tensor<?x14xf32>,
                         %lengths: tensor<?xi64>, %w: tensor<11x14xf32>) -> tensor<?x?x11xf32> {
  %f, %hf = recur.rnn %x init(%h0) lengths(%lengths)
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.addf %xt, %hp : tensor<?x7xf32>
    recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
  }
  %r, %hr = recur.rnn %x init(%h0) lengths(%lengths) reverse
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.mulf %xt, %hp : tensor<?x7xf32>
    recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
  }
  %both = tensor.concat dim(2) %f, %r : (tensor<?x?x7xf32>, tensor<?x?x7xf32>) -> tensor<?x?x14xf32>
  %y, %h = recur.rnn %both init(%h1) lengths(%lengths)
      : (tensor<?x?x14xf32>, tensor<?x14xf32>, tensor<?xi64>) -> (tensor<?x?x14xf32>, tensor<?x14xf32>) {
  ^bb0(%xt: tensor<?x14xf32>, %hp: tensor<?x14xf32>):
    %s = arith.addf %xt, %hp : tensor<?x14xf32>
    recur.yield %s, %s : tensor<?x14xf32>, tensor<?x14xf32>
  }
  %logits = recur.linear %y, %w : (tensor<?x?x14xf32>, tensor<11x14xf32>) -> tensor<?x?x11xf32>
  return %logits : tensor<?x?x11xf32>
}

// -----

// Lengths of a narrower type are ranked and counted in i64 (the sorted
// recurrence takes them so), and a capture with a row per batch row (a
// dynamic leading dimension) keeps the recurrence masked, with a remark.
// CHECK-LABEL: func.func @narrow_lengths_and_row_captures
// CHECK: %[[WIDE:.*]] = arith.extsi %{{.*}} : tensor<?xi32> to tensor<?xi64>
// CHECK: recur.rnn {{.*}} lengths(%{{.*}}) sorted : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>)
// CHECK: recur.rnn {{.*}} captures(%{{.*}}) lengths(%{{.*}}) :
// REMARK: remark: [Missed] every step runs all rows, masked | Category:recur-sort-by-length | Reason="a capture has a dynamic leading dimension (a value per row, which the order would have to follow)"
func.func @narrow_lengths_and_row_captures(%x: tensor<?x?x7xf32>, %h0: tensor<?x7xf32>,
    %lengths: tensor<?xi32>, %context: tensor<?x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x?x7xf32>) {
  %y, %h = recur.rnn %x init(%h0) lengths(%lengths)
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.addf %xt, %hp : tensor<?x7xf32>
    recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
  }
  %y2, %h2 = recur.rnn %x init(%h0) captures(%context) lengths(%lengths)
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?x7xf32>, tensor<?xi32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>, %c: tensor<?x7xf32>):
    %s = arith.addf %xt, %c : tensor<?x7xf32>
    recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return %y, %y2 : tensor<?x?x7xf32>, tensor<?x?x7xf32>
}

// -----

// The output layer takes the order of the recurrence it reads, not that of
// another one with the same lengths in a nested region.
// CHECK-LABEL: func.func @order_of_the_reader
// CHECK: %[[RANK:.*]] = linalg.generic {{.*}} ins(%[[L:.*]], %[[L]] :
// CHECK: scf.if
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%[[RANK]] : tensor<?xi64>)
func.func @order_of_the_reader(%x: tensor<?x?x7xf32>, %h0: tensor<?x7xf32>, %lengths: tensor<?xi64>,
                               %w: tensor<11x7xf32>, %c: i1) -> tensor<?x?x11xf32> {
  %y, %h = recur.rnn %x init(%h0) lengths(%lengths)
      : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
    %s = arith.addf %xt, %hp : tensor<?x7xf32>
    recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
  }
  scf.if %c {
    %y2, %h2 = recur.rnn %x init(%h0) lengths(%lengths)
        : (tensor<?x?x7xf32>, tensor<?x7xf32>, tensor<?xi64>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>) {
    ^bb0(%xt: tensor<?x7xf32>, %hp: tensor<?x7xf32>):
      %s = arith.mulf %xt, %hp : tensor<?x7xf32>
      recur.yield %s, %s : tensor<?x7xf32>, tensor<?x7xf32>
    }
  }
  %logits = recur.linear %y, %w : (tensor<?x?x7xf32>, tensor<11x7xf32>) -> tensor<?x?x11xf32>
  return %logits : tensor<?x?x11xf32>
}
