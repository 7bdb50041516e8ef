// RUN: recur-opt %s -split-input-file -verify-diagnostics

func.func @gru_weight_rows(%x: tensor<?x?x5xf32>, %wi: tensor<20x5xf32>, %wh: tensor<21x7xf32>) {
  // expected-error @below {{operand 'w_ih' dimension 0 (3*H) must be a multiple of 3, got 20}}
  %y, %h = recur.gru %x, %wi, %wh
      : (tensor<?x?x5xf32>, tensor<20x5xf32>, tensor<21x7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  return
}

// -----

func.func @rnn_one_bias(%x: tensor<?x?x5xf32>, %wi: tensor<7x5xf32>, %wh: tensor<7x7xf32>, %b: tensor<7xf32>) {
  // expected-error @below {{takes both biases b_ih and b_hh or neither}}
  %y, %h = "recur.rnn_tanh"(%x, %wi, %wh, %b) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>}
      : (tensor<?x?x5xf32>, tensor<7x5xf32>, tensor<7x7xf32>, tensor<7xf32>) -> (tensor<?x?x7xf32>, tensor<?x7xf32>)
  return
}

// -----

func.func @cell_arity(%x: tensor<4x2x5xf32>, %h0: tensor<2x7xf32>) {
  // expected-error @below {{cell takes 1 arguments; expected 2: x_t, the 1 states and the 0 captures}}
  %y, %h = recur.rnn %x init(%h0) : (tensor<4x2x5xf32>, tensor<2x7xf32>) -> (tensor<4x2x7xf32>, tensor<2x7xf32>) {
  ^bb0(%xt: tensor<2x5xf32>):
    %e = tensor.empty() : tensor<2x7xf32>
    recur.yield %e, %e : tensor<2x7xf32>, tensor<2x7xf32>
  }
  return
}

// -----

func.func @state_batch(%x: tensor<4x2x5xf32>, %h0: tensor<3x7xf32>) {
  // expected-error @below {{expects state 0 to be a [B, n] tensor with the input's B and a static n, got 'tensor<3x7xf32>'}}
  %y, %h = recur.rnn %x init(%h0) : (tensor<4x2x5xf32>, tensor<3x7xf32>) -> (tensor<4x2x7xf32>, tensor<3x7xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<3x7xf32>):
    recur.yield %h, %h : tensor<3x7xf32>, tensor<3x7xf32>
  }
  return
}

// -----

func.func @yield_count(%x: tensor<4x2x5xf32>, %h0: tensor<2x7xf32>) {
  %y, %h = recur.rnn %x init(%h0) : (tensor<4x2x5xf32>, tensor<2x7xf32>) -> (tensor<4x2x7xf32>, tensor<2x7xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x7xf32>):
    // expected-error @below {{yields 1 values; the cell yields y_t and its 1 states}}
    recur.yield %h : tensor<2x7xf32>
  }
  return
}

// -----

func.func @state_type(%x: tensor<4x2x5xf32>, %h0: tensor<2x7xf32>) {
  %y, %h = recur.rnn %x init(%h0) : (tensor<4x2x5xf32>, tensor<2x7xf32>) -> (tensor<4x2x5xf32>, tensor<2x7xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x7xf32>):
    // expected-error @below {{yields state 0 of type 'tensor<2x5xf32>'; the cell takes it as 'tensor<2x7xf32>'}}
    recur.yield %xt, %xt : tensor<2x5xf32>, tensor<2x5xf32>
  }
  return
}

// -----

func.func @side_effect(%x: tensor<4x2x5xf32>, %h0: tensor<2x7xf32>) {
  %y, %h = recur.rnn %x init(%h0) : (tensor<4x2x5xf32>, tensor<2x7xf32>) -> (tensor<4x2x7xf32>, tensor<2x7xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x7xf32>):
    // expected-error @below {{has side effects, which a recurrence cell may not have}}
    %m = memref.alloc() : memref<2x7xf32>
    recur.yield %h, %h : tensor<2x7xf32>, tensor<2x7xf32>
  }
  return
}

// -----

func.func @argument_more_static(%x: tensor<4x?x5xf32>, %h0: tensor<?x7xf32>) {
  // expected-error @below {{cell's x_t has type 'tensor<2x5xf32>'; the input's step is 'tensor<?x5xf32>' (a cell argument may be less static than what it stands for, not more)}}
  %y, %h = recur.rnn %x init(%h0) : (tensor<4x?x5xf32>, tensor<?x7xf32>) -> (tensor<4x?x7xf32>, tensor<?x7xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<?x7xf32>):
    recur.yield %h, %h : tensor<?x7xf32>, tensor<?x7xf32>
  }
  return
}

// -----

func.func @output_batch(%x: tensor<4x2x5xf32>, %h0: tensor<2x7xf32>) {
  %y, %h = recur.rnn %x init(%h0) : (tensor<4x2x5xf32>, tensor<2x7xf32>) -> (tensor<4x2x7xf32>, tensor<2x7xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x7xf32>):
    %e = tensor.empty() : tensor<3x7xf32>
    // expected-error @below {{yields y_t of type 'tensor<3x7xf32>', which the result y 'tensor<4x2x7xf32>' does not stack}}
    recur.yield %e, %h : tensor<3x7xf32>, tensor<2x7xf32>
  }
  return
}

// -----

func.func @state_against_init(%x: tensor<4x2x5xf32>, %h0: tensor<2x7xf32>) {
  %y, %h = recur.rnn %x init(%h0) : (tensor<4x2x5xf32>, tensor<2x7xf32>) -> (tensor<4x2x7xf32>, tensor<2x7xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %h: tensor<?x7xf32>):
    %e = tensor.empty() : tensor<3x7xf32>
    // expected-error @below {{yields state 0 of type 'tensor<3x7xf32>'; the cell takes it as 'tensor<?x7xf32>' and starts from 'tensor<2x7xf32>'}}
    recur.yield %h, %e : tensor<?x7xf32>, tensor<3x7xf32>
  }
  return
}

// -----

func.func @wavefront_counts(%x: tensor<4x2x5xf32>, %h0: tensor<2x5xf32>, %h1: tensor<2x5xf32>) {
  // expected-error @below {{state_counts must be counts that sum to the 2 operands}}
  %y, %s:2 = recur.rnn_wavefront %x init(%h0, %h1) states [1, 2] captures [0, 0]
      : (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }, {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }
  return
}

// -----

func.func @wavefront_one_layer(%x: tensor<4x2x5xf32>, %h0: tensor<2x5xf32>) {
  // expected-error @below {{has 1 layers; a wavefront stacks at least 2}}
  %y, %s = recur.rnn_wavefront %x init(%h0) states [1] captures [0]
      : (tensor<4x2x5xf32>, tensor<2x5xf32>) -> (tensor<4x2x5xf32>, tensor<2x5xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }
  return
}

// -----

// Layer 1's first argument is layer 0's y_t ([2, 5]), not the input's x_t.
func.func @wavefront_input_row(%x: tensor<4x2x3xf32>, %h0: tensor<2x5xf32>, %h1: tensor<2x5xf32>) {
  // expected-error @below {{layer 1's cell's input row has type 'tensor<2x3xf32>'; layer 0's y_t is 'tensor<2x5xf32>'}}
  %y, %s:2 = recur.rnn_wavefront %x init(%h0, %h1) states [1, 1] captures [0, 0]
      : (tensor<4x2x3xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  ^bb0(%xt: tensor<2x3xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }, {
  ^bb0(%xt: tensor<2x3xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }
  return
}

// -----

func.func @wavefront_layer_arity(%x: tensor<4x2x5xf32>, %h0: tensor<2x5xf32>, %h1: tensor<2x5xf32>, %w: tensor<5x5xf32>) {
  // expected-error @below {{layer 1's cell takes 2 arguments; expected 3: input row, the 1 states and the 1 captures}}
  %y, %s:2 = recur.rnn_wavefront %x init(%h0, %h1) captures(%w) states [1, 1] captures [0, 1]
      : (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<5x5xf32>) -> (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }, {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }
  return
}

// -----

func.func @lengths_type(%x: tensor<4x2x5xf32>, %wi: tensor<21x5xf32>, %wh: tensor<21x7xf32>, %lengths: tensor<3xi64>) {
  // expected-error @below {{expects lengths to be a [B] tensor of integers with the input's B, got 'tensor<3xi64>'}}
  %y, %h = recur.gru %x, %wi, %wh lengths(%lengths)
      : (tensor<4x2x5xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<3xi64>) -> (tensor<4x2x7xf32>, tensor<2x7xf32>)
  return
}

// -----

func.func @lengths_floats(%x: tensor<4x2x5xf32>, %h0: tensor<2x5xf32>, %lengths: tensor<2xf32>) {
  // expected-error @below {{expects lengths to be a [B] tensor of integers with the input's B, got 'tensor<2xf32>'}}
  %y, %h = recur.rnn %x init(%h0) lengths(%lengths) : (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2xf32>) -> (tensor<4x2x5xf32>, tensor<2x5xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }
  return
}

// -----

func.func @wavefront_count_entries(%x: tensor<4x2x5xf32>, %h0: tensor<2x5xf32>, %h1: tensor<2x5xf32>) {
  // expected-error @below {{capture_counts has 1 entries for 2 layers}}
  %y, %s:2 = recur.rnn_wavefront %x init(%h0, %h1) states [1, 1] captures [0]
      : (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }, {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }
  return
}

// -----

// The last layer yields 5 columns; y claims 6.
func.func @wavefront_y(%x: tensor<4x2x5xf32>, %h0: tensor<2x5xf32>, %h1: tensor<2x5xf32>) {
  // expected-error @below {{has y of type 'tensor<4x2x6xf32>', which the last layer's y_t 'tensor<2x5xf32>' does not stack ([T, B, Y])}}
  %y, %s:2 = recur.rnn_wavefront %x init(%h0, %h1) states [1, 1] captures [0, 0]
      : (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<4x2x6xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }, {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x5xf32>):
    recur.yield %h, %h : tensor<2x5xf32>, tensor<2x5xf32>
  }
  return
}

// -----

func.func @sorted_without_lengths(%x: tensor<?x?x5xf32>, %h0: tensor<?x5xf32>) -> tensor<?x?x5xf32> {
  // expected-error @+1 {{'recur.rnn' op is marked lengths_sorted but takes no lengths}}
  %y, %h = recur.rnn %x init(%h0) {lengths_sorted}
      : (tensor<?x?x5xf32>, tensor<?x5xf32>) -> (tensor<?x?x5xf32>, tensor<?x5xf32>) {
  ^bb0(%xt: tensor<?x5xf32>, %hp: tensor<?x5xf32>):
    recur.yield %xt, %hp : tensor<?x5xf32>, tensor<?x5xf32>
  }
  return %y : tensor<?x?x5xf32>
}
