// RUN: recur-opt %s -split-input-file --recur-fuse-cell-pointwise | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A traced cell: the sum of the products (plus a bias) is only sliced into
// two gates, so it is split into one sum per gate on the products' and the
// bias's slices; each gate's sum, read by one op, is fused into it; the new
// state is one loop nest.
// CHECK-LABEL: func.func @gates
// CHECK: recur.rnn
// CHECK: %[[P:.*]] = recur.linear
// CHECK: %[[Q:.*]] = recur.linear
// CHECK-DAG: tensor.extract_slice %[[P]][0, 0] [%{{.*}}, 8] [1, 1]
// CHECK-DAG: tensor.extract_slice %[[P]][0, 8] [%{{.*}}, 8] [1, 1]
// CHECK-DAG: tensor.extract_slice %[[Q]][0, 0] [%{{.*}}, 8] [1, 1]
// CHECK-DAG: tensor.extract_slice %[[Q]][0, 8] [%{{.*}}, 8] [1, 1]
// CHECK-DAG: tensor.extract_slice %{{.*}}[0] [8] [1] : tensor<16xf32> to tensor<8xf32>
// CHECK-DAG: tensor.extract_slice %{{.*}}[8] [8] [1] : tensor<16xf32> to tensor<8xf32>
// CHECK: %[[H:.*]] = linalg.generic
// CHECK-DAG: math.exp
// CHECK-DAG: math.tanh
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: recur.yield %[[H]], %[[H]]
func.func @gates(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %wi: tensor<16x4xf32>, %wh: tensor<16x8xf32>,
                 %b: tensor<16xf32>) -> tensor<?x?x8xf32> {
  %y, %h = recur.rnn %x init(%h0) captures(%wi, %wh, %b)
      : (tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<16x4xf32>, tensor<16x8xf32>, tensor<16xf32>)
      -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x8xf32>, %a: tensor<16x4xf32>, %c: tensor<16x8xf32>, %bias: tensor<16xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x4xf32>
    %p = recur.linear %xt, %a : (tensor<?x4xf32>, tensor<16x4xf32>) -> tensor<?x16xf32>
    %q = recur.linear %hp, %c : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
    %e = tensor.empty(%n) : tensor<?x16xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #col, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %q, %bias : tensor<?x16xf32>, tensor<?x16xf32>, tensor<16xf32>) outs(%e : tensor<?x16xf32>) {
    ^bb0(%u: f32, %v: f32, %w: f32, %o: f32):
      %t = arith.addf %u, %v : f32
      %t2 = arith.addf %t, %w : f32
      linalg.yield %t2 : f32
    } -> tensor<?x16xf32>
    %z = tensor.extract_slice %s[0, 0] [%n, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
    %g = tensor.extract_slice %s[0, 8] [%n, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
    %e1 = tensor.empty(%n) : tensor<?x8xf32>
    %zs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%z : tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
    ^bb0(%u: f32, %o: f32):
      %one = arith.constant 1.0 : f32
      %m = arith.negf %u : f32
      %ex = math.exp %m : f32
      %d = arith.addf %one, %ex : f32
      %r = arith.divf %one, %d : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    %e2 = tensor.empty(%n) : tensor<?x8xf32>
    %gt = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%g : tensor<?x8xf32>) outs(%e2 : tensor<?x8xf32>) {
    ^bb0(%u: f32, %o: f32):
      %r = math.tanh %u : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    %e3 = tensor.empty(%n) : tensor<?x8xf32>
    %hn = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%zs, %gt, %hp : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) outs(%e3 : tensor<?x8xf32>) {
    ^bb0(%u: f32, %v: f32, %w: f32, %o: f32):
      %one = arith.constant 1.0 : f32
      %k = arith.subf %one, %u : f32
      %a1 = arith.mulf %k, %v : f32
      %a2 = arith.mulf %u, %w : f32
      %r = arith.addf %a1, %a2 : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    recur.yield %hn, %hn : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y : tensor<?x?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A value read by two ops (here by a nest and as the new state) is fused
// into its first reader, which writes it too: the exp runs once. Not split:
// a value read whole besides its slice (split, its columns would be
// computed twice). Nothing outside a recur.rnn cell is touched.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.generic
// CHECK: recur.rnn
// CHECK: %[[A:.*]]:2 = linalg.generic
// CHECK: %[[EX:.*]] = math.exp
// CHECK-NOT: math.exp
// CHECK: %[[SUM:.*]] = arith.addf %[[EX]],
// CHECK: linalg.yield %[[EX]], %[[SUM]]
// CHECK-NOT: linalg.generic
// CHECK: %[[S:.*]] = tensor.extract_slice %[[A]]#1[0, 0]
// CHECK: %[[H:.*]] = tensor.insert_slice %[[S]] into %[[A]]#1[0, 4]
// CHECK: recur.yield %[[H]], %[[A]]#0
func.func @kept(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>, %v: tensor<4x8xf32>) -> (tensor<?x?x8xf32>, tensor<4x8xf32>) {
  %ev = tensor.empty() : tensor<4x8xf32>
  %v1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<4x8xf32>) outs(%ev : tensor<4x8xf32>) {
  ^bb0(%u: f32, %o: f32):
    %r = math.exp %u : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %v2 = tensor.extract_slice %v1[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> to tensor<4x8xf32>
  %y, %h = recur.rnn %x init(%h0)
      : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %hp: tensor<?x8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x8xf32>
    %e = tensor.empty(%n) : tensor<?x8xf32>
    %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xt : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) {
    ^bb0(%u: f32, %o: f32):
      %r = math.exp %u : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    %e1 = tensor.empty(%n) : tensor<?x8xf32>
    %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%ex, %hp : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
    ^bb0(%u: f32, %w: f32, %o: f32):
      %r = arith.addf %u, %w : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    %s = tensor.extract_slice %a[0, 0] [%n, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
    %h2 = tensor.insert_slice %s into %a[0, 4] [%n, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
    recur.yield %h2, %ex : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y, %v2 : tensor<?x?x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Not split: the body reads its column index, which a slice's generic would
// count from the slice's first column.
// CHECK-LABEL: func.func @reads_its_index
// CHECK: %[[G:.*]] = linalg.generic
// CHECK: linalg.index 1
// CHECK: tensor.extract_slice %[[G]][0, 8]
func.func @reads_its_index(%x: tensor<?x?x16xf32>, %h0: tensor<?x8xf32>) -> tensor<?x?x8xf32> {
  %y, %h = recur.rnn %x init(%h0)
      : (tensor<?x?x16xf32>, tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %hp: tensor<?x8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x16xf32>
    %e = tensor.empty(%n) : tensor<?x16xf32>
    %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xt : tensor<?x16xf32>) outs(%e : tensor<?x16xf32>) {
    ^bb0(%u: f32, %o: f32):
      %j = linalg.index 1 : index
      %i = arith.index_cast %j : index to i32
      %f = arith.sitofp %i : i32 to f32
      %r = arith.addf %u, %f : f32
      linalg.yield %r : f32
    } -> tensor<?x16xf32>
    %s = tensor.extract_slice %g[0, 8] [%n, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
    recur.yield %s, %s : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y : tensor<?x?x8xf32>
}

// -----

// A gradient assembled from its gates' (recur-differentiate's form): the
// inserted slices cover the zero-filled tensor, so the fill goes and the
// inserts start from its empty tensor. Where they leave columns uncovered
// (@partly_covered), the zeros stay.
// CHECK-LABEL: func.func @covered
// CHECK: recur.rnn
// CHECK: %[[EMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<?x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[ONE:.*]] = tensor.insert_slice %{{.*}} into %[[EMPTY]][0, 8]
// CHECK: tensor.insert_slice %{{.*}} into %[[ONE]][0, 0]
func.func @covered(%x: tensor<?x?x8xf32>, %h0: tensor<?x16xf32>) -> tensor<?x?x16xf32> {
  %y, %h = recur.rnn %x init(%h0) : (tensor<?x?x8xf32>, tensor<?x16xf32>) -> (tensor<?x?x16xf32>, tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %hp: tensor<?x16xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x8xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty(%n) : tensor<?x16xf32>
    %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
    %a = math.tanh %xt : tensor<?x8xf32>
    %one = tensor.insert_slice %a into %zeros[0, 8] [%n, 8] [1, 1] : tensor<?x8xf32> into tensor<?x16xf32>
    %both = tensor.insert_slice %xt into %one[0, 0] [%n, 8] [1, 1] : tensor<?x8xf32> into tensor<?x16xf32>
    recur.yield %both, %both : tensor<?x16xf32>, tensor<?x16xf32>
  }
  return %y : tensor<?x?x16xf32>
}

// CHECK-LABEL: func.func @partly_covered
// CHECK: recur.rnn
// CHECK: %[[ZEROS:.*]] = linalg.fill
// CHECK: tensor.insert_slice %{{.*}} into %[[ZEROS]][0, 8]
func.func @partly_covered(%x: tensor<?x?x8xf32>, %h0: tensor<?x24xf32>) -> tensor<?x?x24xf32> {
  %y, %h = recur.rnn %x init(%h0) : (tensor<?x?x8xf32>, tensor<?x24xf32>) -> (tensor<?x?x24xf32>, tensor<?x24xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %hp: tensor<?x24xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %xt, %c0 : tensor<?x8xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty(%n) : tensor<?x24xf32>
    %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<?x24xf32>) -> tensor<?x24xf32>
    %one = tensor.insert_slice %xt into %zeros[0, 8] [%n, 8] [1, 1] : tensor<?x8xf32> into tensor<?x24xf32>
    %both = tensor.insert_slice %xt into %one[0, 0] [%n, 8] [1, 1] : tensor<?x8xf32> into tensor<?x24xf32>
    recur.yield %both, %both : tensor<?x24xf32>, tensor<?x24xf32>
  }
  return %y : tensor<?x?x24xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A layer norm as recur.compile_rnn traces it: a mean kept as [B, 1]
// (mean(keepdim=True)) and two reductions started from one zero fill (CSE
// merged theirs). The [B, 1] op becomes a [B] one, its reshapes gone, and
// fuses into what reads it; each reduction gets a fill of its own (it then
// writes in place, not into a copy); the per-row values are read whole by
// the gate slices' ops, not through slices of them.
// CHECK-LABEL: func.func @layer_norm_of_gates
// CHECK: ^bb0(%{{[^:]*}}: tensor<?x4xf32>, %[[H:[^:]*]]: tensor<?x4xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[Z1:.*]] = linalg.fill
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[H]] : tensor<?x4xf32>) outs(%[[Z1]] : tensor<?xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[SUM]] : tensor<?xf32>)
// CHECK: %[[Z2:.*]] = linalg.fill
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[H]], %[[MEAN]] : tensor<?x4xf32>, tensor<?xf32>) outs(%[[Z2]] : tensor<?xf32>)
// CHECK-NOT: tensor.extract_slice %[[MEAN]]
// CHECK-NOT: tensor.extract_slice %[[SQ]]
// CHECK: %[[G0:.*]] = tensor.extract_slice %[[H]][0, 0] [%{{.*}}, 2] [1, 1]
// CHECK: %[[G1:.*]] = tensor.extract_slice %[[H]][0, 2] [%{{.*}}, 2] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[G0]], %[[MEAN]], %[[SQ]], %[[G1]] : tensor<?x2xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x2xf32>)
func.func @layer_norm_of_gates(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>) -> tensor<?x?x2xf32> {
  %y, %h = recur.rnn %x init(%h0) : (tensor<?x?x4xf32>, tensor<?x4xf32>) -> (tensor<?x?x2xf32>, tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x4xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %hp, %c0 : tensor<?x4xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty(%n) : tensor<?xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%hp : tensor<?x4xf32>) outs(%z : tensor<?xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    %sum1 = tensor.expand_shape %sum [[0, 1]] output_shape [%n, 1] : tensor<?xf32> into tensor<?x1xf32>
    %e1 = tensor.empty(%n) : tensor<?x1xf32>
    %mean1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%sum1 : tensor<?x1xf32>) outs(%e1 : tensor<?x1xf32>) {
    ^bb0(%a: f32, %o: f32):
      %quarter = arith.constant 0.25 : f32
      %m = arith.mulf %a, %quarter : f32
      linalg.yield %m : f32
    } -> tensor<?x1xf32>
    %mean = tensor.collapse_shape %mean1 [[0, 1]] : tensor<?x1xf32> into tensor<?xf32>
    %sq = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
        ins(%hp, %mean : tensor<?x4xf32>, tensor<?xf32>) outs(%z : tensor<?xf32>) {
    ^bb0(%a: f32, %m: f32, %o: f32):
      %d = arith.subf %a, %m : f32
      %d2 = arith.mulf %d, %d : f32
      %s = arith.addf %d2, %o : f32
      linalg.yield %s : f32
    } -> tensor<?xf32>
    %e2 = tensor.empty(%n) : tensor<?x4xf32>
    %norm = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%hp, %mean, %sq : tensor<?x4xf32>, tensor<?xf32>, tensor<?xf32>) outs(%e2 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %m: f32, %v: f32, %o: f32):
      %d = arith.subf %a, %m : f32
      %r = math.rsqrt %v : f32
      %t = arith.mulf %d, %r : f32
      linalg.yield %t : f32
    } -> tensor<?x4xf32>
    %g0 = tensor.extract_slice %norm[0, 0] [%n, 2] [1, 1] : tensor<?x4xf32> to tensor<?x2xf32>
    %g1 = tensor.extract_slice %norm[0, 2] [%n, 2] [1, 1] : tensor<?x4xf32> to tensor<?x2xf32>
    %out = arith.mulf %g0, %g1 : tensor<?x2xf32>
    %hn = tensor.concat dim(1) %out, %out : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x4xf32>
    recur.yield %out, %hn : tensor<?x2xf32>, tensor<?x4xf32>
  }
  return %y : tensor<?x?x2xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// An sLSTM's stabiliser m = max(f + m0, i), read by both exponential gates
// and carried as state, and the gates, each read by the two state updates:
// the tail is one nest writing h, m, c and n, each value computed once,
// each input read once.
// CHECK-LABEL: func.func @read_by_several
// CHECK: recur.rnn
// CHECK: %[[T:.*]]:4 = linalg.generic {{.*}} ins(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}} :
// CHECK-COUNT-1: arith.maximumf
// CHECK-COUNT-2: math.exp
// CHECK-NOT: math.exp
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: recur.yield %[[T]]#{{[0-9]}}, %[[T]]#{{[0-9]}}, %[[T]]#{{[0-9]}}, %[[T]]#{{[0-9]}} :
func.func @read_by_several(%x: tensor<?x?x8xf32>, %m0: tensor<?x4xf32>, %c0: tensor<?x4xf32>, %n0: tensor<?x4xf32>) -> tensor<?x?x4xf32> {
  %y, %m, %c, %n = recur.rnn %x init(%m0, %c0, %n0)
      : (tensor<?x?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %mp: tensor<?x4xf32>, %cp: tensor<?x4xf32>, %np: tensor<?x4xf32>):
    %zero = arith.constant 0 : index
    %b = tensor.dim %xt, %zero : tensor<?x8xf32>
    %i = tensor.extract_slice %xt[0, 0] [%b, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
    %f = tensor.extract_slice %xt[0, 4] [%b, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
    %e0 = tensor.empty(%b) : tensor<?x4xf32>
    %mn = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%f, %mp, %i : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) outs(%e0 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %p: f32, %q: f32, %o: f32):
      %s = arith.addf %a, %p : f32
      %r = arith.maximumf %s, %q : f32
      linalg.yield %r : f32
    } -> tensor<?x4xf32>
    %e1 = tensor.empty(%b) : tensor<?x4xf32>
    %ig = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%i, %mn : tensor<?x4xf32>, tensor<?x4xf32>) outs(%e1 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %p: f32, %o: f32):
      %s = arith.subf %a, %p : f32
      %r = math.exp %s : f32
      linalg.yield %r : f32
    } -> tensor<?x4xf32>
    %e2 = tensor.empty(%b) : tensor<?x4xf32>
    %fg = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%f, %mp, %mn : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) outs(%e2 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %p: f32, %q: f32, %o: f32):
      %s = arith.addf %a, %p : f32
      %d = arith.subf %s, %q : f32
      %r = math.exp %d : f32
      linalg.yield %r : f32
    } -> tensor<?x4xf32>
    %e3 = tensor.empty(%b) : tensor<?x4xf32>
    %cn = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%fg, %cp, %ig : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) outs(%e3 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %p: f32, %q: f32, %o: f32):
      %s = arith.mulf %a, %p : f32
      %r = arith.addf %s, %q : f32
      linalg.yield %r : f32
    } -> tensor<?x4xf32>
    %e4 = tensor.empty(%b) : tensor<?x4xf32>
    %nn = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%fg, %np, %ig : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) outs(%e4 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %p: f32, %q: f32, %o: f32):
      %s = arith.mulf %a, %p : f32
      %r = arith.addf %s, %q : f32
      linalg.yield %r : f32
    } -> tensor<?x4xf32>
    %e5 = tensor.empty(%b) : tensor<?x4xf32>
    %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%cn, %nn : tensor<?x4xf32>, tensor<?x4xf32>) outs(%e5 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %p: f32, %o: f32):
      %r = arith.divf %a, %p : f32
      linalg.yield %r : f32
    } -> tensor<?x4xf32>
    recur.yield %h, %mn, %cn, %nn : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
  }
  return %y : tensor<?x?x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Not fused: a value whose first reader is a reduction (a layer norm's
// sum over the row) stays a nest of its own, read by the sum and the
// normalisation; a reduction's nest writes one value per row, not the row.
// CHECK-LABEL: func.func @read_by_a_reduction_first
// CHECK: recur.rnn
// CHECK: %[[EX:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: ins(%[[EX]] :
// CHECK: %[[H:.*]] = linalg.generic
// CHECK-SAME: ins(%[[EX]], %[[SUM]] :
// CHECK: recur.yield %[[H]], %[[H]]
func.func @read_by_a_reduction_first(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>) -> tensor<?x?x8xf32> {
  %y, %hn = recur.rnn %x init(%h0)
      : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %hp: tensor<?x8xf32>):
    %zero = arith.constant 0 : index
    %b = tensor.dim %xt, %zero : tensor<?x8xf32>
    %e0 = tensor.empty(%b) : tensor<?x8xf32>
    %ex = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xt, %hp : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e0 : tensor<?x8xf32>) {
    ^bb0(%a: f32, %p: f32, %o: f32):
      %s = arith.addf %a, %p : f32
      %r = math.exp %s : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    %f0 = arith.constant 0.0 : f32
    %e1 = tensor.empty(%b) : tensor<?xf32>
    %z = linalg.fill ins(%f0 : f32) outs(%e1 : tensor<?xf32>) -> tensor<?xf32>
    %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%ex : tensor<?x8xf32>) outs(%z : tensor<?xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.addf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<?xf32>
    %e2 = tensor.empty(%b) : tensor<?x8xf32>
    %h = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%ex, %sum : tensor<?x8xf32>, tensor<?xf32>) outs(%e2 : tensor<?x8xf32>) {
    ^bb0(%a: f32, %p: f32, %o: f32):
      %r = arith.divf %a, %p : f32
      linalg.yield %r : f32
    } -> tensor<?x8xf32>
    recur.yield %h, %h : tensor<?x8xf32>, tensor<?x8xf32>
  }
  return %y : tensor<?x?x8xf32>
}
