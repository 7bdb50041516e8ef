// RUN: recur-opt %s -split-input-file --recur-fold-embedding-projection | FileCheck %s
// RUN: recur-opt %s -split-input-file --recur-fold-embedding-projection=max-elements=300 | FileCheck %s --check-prefix=SMALL

// Layer 0's hoisted projection of an embedding: the whole table is
// projected (weights only) and the run gathers rows of it. The bias may be
// computed from weights (the sum of an LSTM's two).
// CHECK-LABEL: func.func @projected_embedding(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<?x?xi64> {recur.input = "tokens"}, %[[TABLE:[^:]*]]: tensor<11x4xf32> {recur.weight = "embedding.weight"}, %[[W:[^:]*]]: tensor<32x4xf32> {recur.weight = "w_ih"}, %[[B1:[^:]*]]: tensor<32xf32> {recur.weight = "b_ih"}, %[[B2:[^:]*]]: tensor<32xf32> {recur.weight = "b_hh"})
// CHECK: %[[BIAS:.*]] = arith.addf %[[B1]], %[[B2]]
// CHECK: %[[PROJ:.*]] = recur.linear %[[TABLE]], %[[W]] bias(%[[BIAS]]) : (tensor<11x4xf32>, tensor<32x4xf32>, tensor<32xf32>) -> tensor<11x32xf32>
// CHECK: %[[GATES:.*]] = recur.embedding %[[PROJ]][%[[IDS]]] : (tensor<11x32xf32>, tensor<?x?xi64>) -> tensor<?x?x32xf32>
// CHECK-NOT: recur.linear
// CHECK: return %[[GATES]]
// The limit: 11 x 32 = 352 elements > 300, nothing changes.
// SMALL-LABEL: func.func @projected_embedding(
// SMALL: recur.embedding %{{.*}}[%{{.*}}] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
// SMALL: recur.linear %{{.*}} : (tensor<?x?x4xf32>, tensor<32x4xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
func.func @projected_embedding(%ids: tensor<?x?xi64> {recur.input = "tokens"},
    %table: tensor<11x4xf32> {recur.weight = "embedding.weight"},
    %w: tensor<32x4xf32> {recur.weight = "w_ih"},
    %b1: tensor<32xf32> {recur.weight = "b_ih"}, %b2: tensor<32xf32> {recur.weight = "b_hh"})
    -> tensor<?x?x32xf32> {
  %bias = arith.addf %b1, %b2 : tensor<32xf32>
  %x = recur.embedding %table[%ids] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %gates = recur.linear %x, %w bias(%bias) : (tensor<?x?x4xf32>, tensor<32x4xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  return %gates : tensor<?x?x32xf32>
}

// -----

// Left alone: a weight that is an input (the table would be computed per
// run), and an embedding that is also used elsewhere.
// CHECK-LABEL: func.func @not_weights(
// CHECK: recur.embedding %{{.*}} : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
// CHECK: recur.linear
// CHECK: recur.embedding %{{.*}} : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
// CHECK: recur.linear
func.func @not_weights(%ids: tensor<?x?xi64> {recur.input = "tokens"},
    %table: tensor<11x4xf32> {recur.weight = "embedding.weight"},
    %w: tensor<32x4xf32> {recur.input = "w"},
    %w2: tensor<32x4xf32> {recur.weight = "w2"})
    -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x4xf32>) {
  %x = recur.embedding %table[%ids] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %a = recur.linear %x, %w : (tensor<?x?x4xf32>, tensor<32x4xf32>) -> tensor<?x?x32xf32>
  %x2 = recur.embedding %table[%ids] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %b = recur.linear %x2, %w2 : (tensor<?x?x4xf32>, tensor<32x4xf32>) -> tensor<?x?x32xf32>
  return %a, %b, %x2 : tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x4xf32>
}

// -----

// Reads of the embedding's T or B (a GRU layer's zero h0 takes B from its
// input, recur-generalize-cells) do not stop the fold: they read the ids'.
// CHECK-LABEL: func.func @batch_size_read
// CHECK-SAME: (%[[IDS:[^:]*]]: tensor<?x?xi64>
// CHECK: %[[B:.*]] = tensor.dim %[[IDS]], %c1 : tensor<?x?xi64>
// CHECK: recur.embedding
// CHECK-NOT: recur.linear
// CHECK: return %{{.*}}, %[[B]]
func.func @batch_size_read(%ids: tensor<?x?xi64> {recur.input = "tokens"},
    %table: tensor<11x4xf32> {recur.weight = "embedding.weight"},
    %w: tensor<32x4xf32> {recur.weight = "w_ih"}) -> (tensor<?x?x32xf32>, index) {
  %c1 = arith.constant 1 : index
  %x = recur.embedding %table[%ids] : (tensor<11x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %batch = tensor.dim %x, %c1 : tensor<?x?x4xf32>
  %gates = recur.linear %x, %w : (tensor<?x?x4xf32>, tensor<32x4xf32>) -> tensor<?x?x32xf32>
  return %gates, %batch : tensor<?x?x32xf32>, index
}
