//===- RecurCellOps.td - recurrences of any cell ---------------------------===//
//
// `recur.rnn`, a recurrence whose cell is a region, and the named cells that
// generalise to it (`recur-generalize-cells`), as linalg's named ops do to
// `linalg.generic`: `recur.gru`, `recur.rnn_tanh`, `recur.rnn_relu`.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_IR_RECURCELLOPS_TD
#define RECUR_IR_RECURCELLOPS_TD

include "recur/IR/RecurBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Recur_RNNOp : Recur_Op<"rnn", [AttrSizedOperandSegments, IsolatedFromAbove,
    RecursiveMemoryEffects, SingleBlock,
    DeclareOpInterfaceMethods<Recur_Differentiable>]> {
  let summary = "a recurrence over a sequence whose cell is a region";
  let description = [{
    Runs the cell `body` over the steps of `input [T, B, I]`: at step t the
    block gets `x_t [B, I]`, the state (one value per `init` operand, each a
    `[B, n]` tensor, `init` at the first step) and the `captures` (weights
    and other values every step reads), and yields `y_t [B, Y]` and the new
    state, in `init`'s order and types. Results: every step's `y [T, B, Y]`,
    then the last step's state. `reverse` runs the steps from `t = T-1` down
    to 0 (`y[t]` is still the output after reading `x_t`).

    `lengths [B]` (integers), optional, gives each row's length, with
    PyTorch's meaning for a packed batch: row b runs steps 0 … len_b - 1
    (in `reverse`, len_b - 1 down to 0); its `y` is zero past its length,
    and its final state is the state after its own last step. Each length
    lies in 1 … T; the runtime checks it before a run.

    `sorted` (`lengths_sorted`) promises that `lengths` does not increase from row to
    row, so that the rows with a step at time t are a prefix: the lowering
    then runs each step on those rows only. `recur-sort-by-length` orders
    the rows so and sets it; nothing checks the promise at run time.

    The body holds tensor ops without side effects (`recur`, `linalg`,
    `tensor`, `arith`, `math`): products with a weight (`recur.linear`),
    elementwise math, reductions over the feature dimension, slices and
    concatenations along it. It is isolated from above: what it reads comes
    in as a block argument. A block argument may be less static than its
    operand (after `recur-specialize-shapes`).

    `recur-differentiate` derives its backward from the region: a
    `recur.rnn` running the other way, whose cell recomputes the step from
    the states that entered it (the forward keeps them after y_t:
    `concat(y_t, states...)`) and carries the states' gradients; the
    weights' gradients are GEMMs and sums over all T·B rows after it
    (docs/training.md).

    ```mlir
    // nn.RNN(nonlinearity="tanh") without biases
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
    ```
  }];
  let arguments = (ins AnyTensor:$input, Variadic<AnyTensor>:$init,
                       Variadic<AnyTensor>:$captures,
                       Optional<AnyTensor>:$lengths, UnitAttr:$reverse,
                       UnitAttr:$lengths_sorted);
  let results = (outs AnyTensor:$y, Variadic<AnyTensor>:$final_states);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $input (`init` `(` $init^ `)`)? (`captures` `(` $captures^ `)`)?
    (`lengths` `(` $lengths^ `)`)? (`sorted` $lengths_sorted^)?
    (`reverse` $reverse^)? attr-dict `:`
    functional-type(operands, results) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let recurClassDeclaration = [{
    ::mlir::Block &getCell() { return getBody().front(); }
    /// The cell's block arguments: x_t, the state, the captures.
    ::mlir::BlockArgument getStepInput() { return getCell().getArgument(0); }
    ::mlir::Block::BlockArgListType getStateArguments() {
      return getCell().getArguments().slice(1, getInit().size());
    }
    ::mlir::Block::BlockArgListType getCaptureArguments() {
      return getCell().getArguments().drop_front(1 + getInit().size());
    }
    /// The operand captured as `value`, if `value` is one of the cell's
    /// capture arguments; null otherwise.
    ::mlir::OpOperand *getCapturedOperand(::mlir::Value value) {
      auto argument = ::llvm::dyn_cast<::mlir::BlockArgument>(value);
      unsigned first = 1 + getInit().size();
      if (!argument || argument.getOwner() != &getCell() ||
          argument.getArgNumber() < first)
        return nullptr;
      return &getCapturesMutable()[argument.getArgNumber() - first];
    }
    /// Where y_t ends and the states that entered the step begin, if the
    /// cell yields `concat(y_t, states...)` (it keeps them for its
    /// backward: cloneKeepingStates); nullopt otherwise.
    std::optional<int64_t> getKeptStatesOffset();
    /// A copy of this recurrence, built at `builder`'s point, whose y also
    /// holds, after each step's y_t, the states that entered the step: what
    /// its backward reads instead of running the recurrence again.
    RNNOp cloneKeepingStates(::mlir::OpBuilder &builder);
  }];
}

def Recur_RNNWavefrontOp : Recur_Op<"rnn_wavefront", [AttrSizedOperandSegments,
    IsolatedFromAbove, RecursiveMemoryEffects]> {
  let summary = "a stack of L recurrences of any cells run as a wavefront of diagonal steps";
  let description = [{
    The `recur.rnn` layers of a stack, in which layer l's output sequence is
    layer l+1's input (`recur-wavefront`), as `recur.lstm_wavefront` is for
    LSTM layers. Layer l's step t needs layer l-1's step t and its own step
    t-1 only, so the L·T steps run as T+L-1 diagonal steps s, in which layer
    l computes step t = s - l: the steps of one diagonal are independent of
    each other, and no layer's output sequence but the last one's is ever
    stored.

    Region l is layer l's cell, as in `recur.rnn`: its block takes the
    layer's input row (for layer 0 `x_t [B, I]` of `input [T, B, I]`, for a
    layer l ≥ 1 layer l-1's `y_t`), the layer's `state_counts[l]` states and
    its `capture_counts[l]` captures, and yields the layer's `y_t` and new
    state. `init` and `captures` are the layers' operands one layer after
    the other. Results: the last layer's `y [T, B, Y]`, then every layer's
    final state, in `init`'s order. The layers run forward.

    `lengths [B]` (integers), optional, gives each row's length as
    `recur.rnn`'s does, for every layer, with the rows sorted by it,
    longest first (a stack of `recur.rnn`s marked `sorted`): each layer's
    step runs on the rows with a step at its time only.

    ```mlir
    %y, %h:2 = recur.rnn_wavefront %x init(%h0, %h1) captures(%w0, %u1, %w1)
        states [1, 1] captures [1, 2]
        : (tensor<?x?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>,
           tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>)
        -> (tensor<?x?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
    ^bb0(%xt: tensor<?x32xf32>, %h: tensor<?x32xf32>, %w: tensor<32x32xf32>):
      ...
      recur.yield %h_t, %h_t : tensor<?x32xf32>, tensor<?x32xf32>
    }, {
    ^bb0(%yt: tensor<?x32xf32>, %h: tensor<?x32xf32>, %u: tensor<32x32xf32>,
         %w: tensor<32x32xf32>):
      ...
    }
    ```
  }];
  let arguments = (ins AnyTensor:$input, Variadic<AnyTensor>:$init,
                       Variadic<AnyTensor>:$captures,
                       Optional<AnyTensor>:$lengths,
                       DenseI64ArrayAttr:$state_counts,
                       DenseI64ArrayAttr:$capture_counts);
  let results = (outs AnyTensor:$y, Variadic<AnyTensor>:$final_states);
  let regions = (region VariadicRegion<SizedRegion<1>>:$layers);
  let assemblyFormat = [{
    $input (`init` `(` $init^ `)`)? (`captures` `(` $captures^ `)`)?
    (`lengths` `(` $lengths^ `)`)?
    `states` $state_counts `captures` $capture_counts attr-dict `:`
    functional-type(operands, results) $layers
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let recurClassDeclaration = [{
    int64_t getNumLayers() { return getLayers().size(); }
    ::mlir::Block &getCell(int64_t layer) { return getLayers()[layer].front(); }
    /// Layer `layer`'s initial states and captures (operands), and its
    /// cell's state and capture arguments.
    ::mlir::OperandRange getLayerInit(int64_t layer);
    ::mlir::OperandRange getLayerCaptures(int64_t layer);
    ::mlir::Block::BlockArgListType getStateArguments(int64_t layer);
    ::mlir::Block::BlockArgListType getCaptureArguments(int64_t layer);
    /// Layer `layer`'s final states (results).
    ::mlir::ResultRange getLayerFinalStates(int64_t layer);
    /// The operand captured as `value`, if `value` is a capture argument of
    /// one of the cells; null otherwise.
    ::mlir::OpOperand *getCapturedOperand(::mlir::Value value);
  }];
}

def Recur_YieldOp : Op<Recur_Dialect, "yield", [Pure, Terminator,
    ParentOneOf<["RNNOp", "RNNWavefrontOp"]>]> {
  let summary = "a recurrence cell's output and new state";
  let description = [{
    Ends a `recur.rnn` cell, or a layer's cell in a `recur.rnn_wavefront`:
    `y_t`, then the new state, in the order and types of the layer's `init`.
  }];
  let arguments = (ins Variadic<AnyTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

// nn.GRU's and nn.RNN's layers share operands: weights of G gates, the
// biases both or neither, an optional h0.
class Recur_NamedCellOp<string mnemonic, int gates, string summaryText,
                        string descriptionText>
    : Recur_Op<mnemonic, [Pure, AttrSizedOperandSegments,
                          DeclareOpInterfaceMethods<Recur_Differentiable>]> {
  let summary = summaryText;
  let description = descriptionText # [{

    Weights: `w_ih [}] # gates # [{H, I]`, `w_hh [}] # gates # [{H, H]`, `b_ih`,
    `b_hh [}] # gates # [{H]`, static; the biases come both or not at all
    (absent: zero). `h0 [B, H]` is optional (absent: zero). Results: every
    step's hidden state `y [T, B, H]` and the last one, `h_n [B, H]`. `T` and
    `B` may be dynamic. `reverse` runs the steps from `t = T-1` down to 0, the
    backward direction of a bidirectional layer. `lengths [B]`, optional,
    gives each row's length, as `recur.rnn`'s does (a packed batch).
    `recur-generalize-cells` writes it as a `recur.rnn`.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$w_ih, AnyTensor:$w_hh,
                       Optional<AnyTensor>:$b_ih, Optional<AnyTensor>:$b_hh,
                       Optional<AnyTensor>:$h0, Optional<AnyTensor>:$lengths,
                       UnitAttr:$reverse);
  let results = (outs AnyTensor:$y, AnyTensor:$h_n);
  let assemblyFormat = [{
    $input `,` $w_ih `,` $w_hh (`,` $b_ih^ `,` $b_hh)? (`h0` `(` $h0^ `)`)?
    (`lengths` `(` $lengths^ `)`)? (`reverse` $reverse^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$w_ih,
      "::mlir::Value":$w_hh, "::mlir::Value":$b_ih, "::mlir::Value":$b_hh,
      CArg<"::mlir::Value", "{}">:$h0, CArg<"::mlir::Value", "{}">:$lengths,
      CArg<"bool", "false">:$reverse)>];
  let recurClassDeclaration = [{
    /// The gates of the cell, G: its weights have G * H rows.
    static constexpr int64_t kGates = }] # gates # [{;
    int64_t getHiddenSize() {
      return ::llvm::cast<::mlir::ShapedType>(getWHh().getType()).getDimSize(1);
    }
  }];
}

def Recur_GRUOp : Recur_NamedCellOp<"gru", 3,
    "one GRU layer over a whole sequence", [{
    Runs a GRU layer over `input [T, B, I]`, PyTorch's `nn.GRU` layer `k`
    with its layout and gate order (r, z, n):

    ```
    gi = x_t · w_ihᵀ + b_ih;   gh = h_{t-1} · w_hhᵀ + b_hh          // [B, 3H]
    r = σ(gi[0:H] + gh[0:H]);   z = σ(gi[H:2H] + gh[H:2H])
    n = tanh(gi[2H:3H] + r ⊙ gh[2H:3H])      // the reset gate after the product
    h_t = (1 - z) ⊙ n + z ⊙ h_{t-1}
    ```

    ```mlir
    %y, %h = recur.gru %x, %w_ih, %w_hh, %b_ih, %b_hh
        : (tensor<?x?x16xf32>, tensor<96x16xf32>, tensor<96x32xf32>,
           tensor<96xf32>, tensor<96xf32>) -> (tensor<?x?x32xf32>, tensor<?x32xf32>)
    ```
}]>;

def Recur_RNNTanhOp : Recur_NamedCellOp<"rnn_tanh", 1,
    "one Elman RNN layer with tanh over a whole sequence", [{
    PyTorch's `nn.RNN(nonlinearity="tanh")` layer `k` over `input [T, B, I]`:
    `h_t = tanh(x_t · w_ihᵀ + b_ih + h_{t-1} · w_hhᵀ + b_hh)`.
}]>;

def Recur_RNNReluOp : Recur_NamedCellOp<"rnn_relu", 1,
    "one Elman RNN layer with ReLU over a whole sequence", [{
    PyTorch's `nn.RNN(nonlinearity="relu")` layer `k` over `input [T, B, I]`:
    `h_t = max(0, x_t · w_ihᵀ + b_ih + h_{t-1} · w_hhᵀ + b_hh)`.
}]>;

#endif // RECUR_IR_RECURCELLOPS_TD
