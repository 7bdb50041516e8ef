// RUN: recur-opt %s -split-input-file --recur-differentiate -verify-diagnostics

// expected-error @below {{a training step returns one value, the loss (a rank-0 tensor); @two_results returns 'tensor<f32>', 'tensor<f32>'}}
func.func @two_results(%loss: tensor<f32>) -> (tensor<f32>, tensor<f32>)
    attributes {recur.train = #recur.sgd<lr = 0.1>} {
  return %loss, %loss : tensor<f32>, tensor<f32>
}

// -----

// expected-error @below {{training steps are compiled in f32 only, got a 'bf16' argument (recur-gen --train --dtype f32)}}
func.func @bf16(%w: tensor<4xbf16> {recur.weight = "w"}, %loss: tensor<f32>) -> tensor<f32>
    attributes {recur.train = #recur.sgd<lr = 0.1>} {
  return %loss : tensor<f32>
}

// -----

func.func @no_rule(%x: tensor<4x7xf32>, %t: tensor<4xi64>, %w: tensor<13x7xf32> {recur.weight = "w"}) -> tensor<f32>
    attributes {recur.train = #recur.sgd<lr = 0.1>} {
  %logits = recur.linear %x, %w : (tensor<4x7xf32>, tensor<13x7xf32>) -> tensor<4x13xf32>
  // expected-error @below {{'recur.log_softmax' op is on the path from the weights to the loss, and recur-differentiate has no gradient rule for it}}
  %lp = recur.log_softmax %logits : tensor<4x13xf32> -> tensor<4x13xf32>
  %loss = recur.cross_entropy %lp, %t : (tensor<4x13xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// expected-error @below {{the loss depends on no weight: nothing to train}}
func.func @no_weights(%logits: tensor<4x13xf32>, %t: tensor<4xi64>) -> tensor<f32>
    attributes {recur.train = #recur.sgd<lr = 0.1>} {
  %loss = recur.cross_entropy %logits, %t : (tensor<4x13xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// expected-error @below {{gradients are compiled in f32 only, got a 'bf16' argument 'w'}}
func.func @vjp_bf16(%w: tensor<4xbf16> {recur.weight = "w"}) -> (tensor<4xbf16> {recur.output = "y"})
    attributes {recur.vjp} {
  return %w : tensor<4xbf16>
}

// -----

func.func @vjp_no_rule(%x: tensor<4x7xf32> {recur.input = "x"}) -> (tensor<4x7xf32> {recur.output = "y"})
    attributes {recur.vjp} {
  // expected-error @below {{'recur.log_softmax' op is on the path from the arguments to the results, and recur-differentiate has no gradient rule for it}}
  %y = recur.log_softmax %x : tensor<4x7xf32> -> tensor<4x7xf32>
  return %y : tensor<4x7xf32>
}

// -----

// A recurrence's cell: a product whose weight is per-step data (here the
// state itself) has no weight gradient after the loop.
func.func @cell_weight_per_step(%x: tensor<?x6x6xf32> {recur.input = "input"}, %h0: tensor<6x6xf32> {recur.input = "h0"})
    -> (tensor<?x6x6xf32> {recur.output = "y"}) attributes {recur.vjp} {
  %y, %h = recur.rnn %x init(%h0)
      : (tensor<?x6x6xf32>, tensor<6x6xf32>) -> (tensor<?x6x6xf32>, tensor<6x6xf32>) {
  ^bb0(%xt: tensor<6x6xf32>, %hp: tensor<6x6xf32>):
    // expected-error @below {{'recur.linear' op multiplies by a weight that changes from step to step, which recur-differentiate cannot differentiate}}
    %p = recur.linear %xt, %hp : (tensor<6x6xf32>, tensor<6x6xf32>) -> tensor<6x6xf32>
    recur.yield %p, %p : tensor<6x6xf32>, tensor<6x6xf32>
  }
  return %y : tensor<?x6x6xf32>
}

// -----

func.func @cell_max_reduction(%x: tensor<?x?x4xf32> {recur.input = "input"}, %h0: tensor<?x4xf32> {recur.input = "h0"})
    -> (tensor<?x?x4xf32> {recur.output = "y"}) attributes {recur.vjp} {
  %y, %h = recur.rnn %x init(%h0)
      : (tensor<?x?x4xf32>, tensor<?x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x4xf32>):
    %c0 = arith.constant 0 : index
    %B = tensor.dim %xt, %c0 : tensor<?x4xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty(%B) : tensor<?xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
    // expected-error @below {{'linalg.generic' op is a reduction other than a sum, which recur-differentiate cannot differentiate}}
    %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
        ins(%hp : tensor<?x4xf32>) outs(%init : tensor<?xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %o : f32
      linalg.yield %r : f32
    } -> tensor<?xf32>
    %e2 = tensor.empty(%B) : tensor<?x4xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%xt, %m : tensor<?x4xf32>, tensor<?xf32>) outs(%e2 : tensor<?x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.subf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<?x4xf32>
    recur.yield %s, %s : tensor<?x4xf32>, tensor<?x4xf32>
  }
  return %y : tensor<?x?x4xf32>
}

// -----

func.func @cell_op_without_rule(%x: tensor<?x?x4xf32> {recur.input = "input"}, %h0: tensor<?x4xf32> {recur.input = "h0"})
    -> (tensor<?x?x4xf32> {recur.output = "y"}) attributes {recur.vjp} {
  %y, %h = recur.rnn %x init(%h0)
      : (tensor<?x?x4xf32>, tensor<?x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %hp: tensor<?x4xf32>):
    %s = arith.addf %xt, %hp : tensor<?x4xf32>
    // expected-error @below {{'math.sin' op computes 'math.sin', which recur-differentiate has no gradient rule for}}
    %h_t = math.sin %s : tensor<?x4xf32>
    recur.yield %h_t, %h_t : tensor<?x4xf32>, tensor<?x4xf32>
  }
  return %y : tensor<?x?x4xf32>
}

// -----

// A parameter read one value per row ([B] through (d0, d1) -> (d0)) has no
// rule: its per-step gradient is neither a feature vector nor a [B, n] row.
func.func @cell_parameter_per_row(%x: tensor<?x3x4xf32> {recur.input = "input"}, %h0: tensor<3x4xf32> {recur.input = "h0"},
                                  %scale: tensor<3xf32> {recur.weight = "scale"})
    -> (tensor<?x3x4xf32> {recur.output = "y"}) attributes {recur.vjp} {
  %y, %h = recur.rnn %x init(%h0) captures(%scale)
      : (tensor<?x3x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> (tensor<?x3x4xf32>, tensor<3x4xf32>) {
  ^bb0(%xt: tensor<3x4xf32>, %hp: tensor<3x4xf32>, %s: tensor<3xf32>):
    %e = tensor.empty() : tensor<3x4xf32>
    // expected-error @below {{'linalg.generic' op reads a parameter through affine_map<(d0, d1) -> (d0)>, which recur-differentiate cannot differentiate (a parameter is a [n] vector over the features or one per row)}}
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%xt, %hp, %s : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>) outs(%e : tensor<3x4xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %t = arith.addf %a, %b : f32
      %u = arith.mulf %t, %c : f32
      linalg.yield %u : f32
    } -> tensor<3x4xf32>
    recur.yield %r, %r : tensor<3x4xf32>, tensor<3x4xf32>
  }
  return %y : tensor<?x3x4xf32>
}
