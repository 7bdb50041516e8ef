//===- RecurOps.td - recur dialect operations -----------------------------===//

#ifndef RECUR_IR_RECUROPS_TD
#define RECUR_IR_RECUROPS_TD

include "recur/IR/RecurBase.td"
include "recur/IR/RecurLoweringConfigs.td"
include "recur/IR/RecurCellOps.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Operands are declared as any tensor: the verifiers check ranks, shapes and
// element types themselves so that every message names the operand and gives
// the expected and the actual shape or type.

def Recur_EmbeddingOp : Recur_Op<"embedding", [Pure, DeclareOpInterfaceMethods<Recur_Differentiable>]> {
  let summary = "rows of an embedding table gathered by integer ids";
  let description = [{
    `result[d..., e] = table[ids[d...], e]` — PyTorch's `nn.Embedding`. The table
    is `[V, E]` with a static shape; the ids (i64, usually `[T, B]`) may have any
    rank and dynamic sizes; the result has the ids' shape followed by `E`.

    ```mlir
    %x = recur.embedding %table[%tokens]
        : (tensor<10001x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$table, AnyTensor:$ids);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$table, "::mlir::Value":$ids)>];
}

def Recur_LSTMOp : Recur_Op<"lstm", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Recur_Differentiable>]> {
  let summary = "one LSTM layer over a whole sequence";
  let description = [{
    Runs an LSTM layer over `input [T, B, I]`, PyTorch's `nn.LSTM` layer `k`
    with its layout and gate order (i, f, g, o):

    ```
    gates = x_t · w_ihᵀ + b_ih + h_{t-1} · w_hhᵀ + b_hh      // [B, 4H]
    i, f, g, o = σ(gates[0:H]), σ(gates[H:2H]), tanh(gates[2H:3H]), σ(gates[3H:4H])
    c_t = f ⊙ c_{t-1} + i ⊙ g;   h_t = o ⊙ tanh(c_t)
    ```

    Weights: `w_ih [4H, I]`, `w_hh [4H, H]`, `b_ih [4H]`, `b_hh [4H]`, all with
    static shapes. The biases come both or not at all (`nn.LSTM(bias=False)`:
    absent biases are zero). The initial state `h0`, `c0 [B, H]` is optional;
    an absent one is zero (the canonical form drops an explicit zero). Results:
    every step's hidden state `y [T, B, H]`, and the last step's hidden and
    cell state `h_n`, `c_n [B, H]` (h_T and c_T). `T` and `B` may be dynamic.

    `lengths [B]`, optional, gives each row's length, as `recur.rnn`'s does
    (a packed batch); `recur-generalize-cells` writes such a layer as the
    `recur.rnn` of its cell, which takes them.
    `reverse` runs the steps from `t = T-1` down to 0, the backward direction
    of a bidirectional `nn.LSTM`: `y[t]` is still the hidden state after
    reading `x_t`, and `h_n`, `c_n` are those after `x_0`.

    `proj(%w_hr)`, `w_hr [P, H]` with `P < H`, is `nn.LSTM(proj_size=P)`
    (LSTMP): the hidden state is projected every step, `h_t = (o ⊙
    tanh(c_t)) · w_hrᵀ`, so `w_hh` is `[4H, P]`, `h0`, `h_n` are `[B, P]` and
    `y` is `[T, B, P]`; the cell state stays `[B, H]`.

    ```mlir
    %y, %h, %c = recur.lstm %x, %w_ih, %w_hh, %b_ih, %b_hh
        : (tensor<?x?x128xf32>, tensor<1024x128xf32>, tensor<1024x256xf32>,
           tensor<1024xf32>, tensor<1024xf32>)
        -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
    ```
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$w_ih, AnyTensor:$w_hh,
                       Optional<AnyTensor>:$b_ih, Optional<AnyTensor>:$b_hh,
                       Optional<AnyTensor>:$w_hr,
                       Optional<AnyTensor>:$h0, Optional<AnyTensor>:$c0,
                       Optional<AnyTensor>:$lengths, UnitAttr:$reverse);
  let results = (outs AnyTensor:$y, AnyTensor:$h_n, AnyTensor:$c_n);
  let assemblyFormat = [{
    $input `,` $w_ih `,` $w_hh (`,` $b_ih^ `,` $b_hh)? (`proj` `(` $w_hr^ `)`)?
    (`h0` `(` $h0^ `)`)? (`c0` `(` $c0^ `)`)? (`lengths` `(` $lengths^ `)`)?
    (`reverse` $reverse^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$w_ih,
      "::mlir::Value":$w_hh, "::mlir::Value":$b_ih, "::mlir::Value":$b_hh,
      CArg<"::mlir::Value", "{}">:$h0, CArg<"::mlir::Value", "{}">:$c0,
      CArg<"bool", "false">:$reverse, CArg<"::mlir::Value", "{}">:$w_hr,
      CArg<"::mlir::Value", "{}">:$lengths)>];
  let recurClassDeclaration = [{
    /// The hidden size H (of the cell state).
    int64_t getHiddenSize() {
      return ::llvm::cast<::mlir::ShapedType>(getWHh().getType()).getDimSize(0) / 4;
    }
    /// The size of the hidden state h and the output: P with a projection,
    /// else H.
    int64_t getOutputSize() {
      return ::llvm::cast<::mlir::ShapedType>(getWHh().getType()).getDimSize(1);
    }
  }];
}

def Recur_LSTMRecurrenceOp : Recur_Op<"lstm_recurrence",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "the recurrent half of an LSTM layer, over precomputed input gates";
  let description = [{
    What remains of `recur.lstm` once the input projection of every step has
    been computed ahead of the time loop (`recur-hoist-input-projection`):
    `input_gates [T, B, 4H]` holds `x_t · w_ihᵀ + b_ih + b_hh` for every step,
    in PyTorch's gate order (i, f, g, o). Each step then computes

    ```
    gates = input_gates[t] + h_{t-1} · w_hhᵀ                 // [B, 4H]
    i, f, g, o = σ(gates[0:H]), σ(gates[H:2H]), tanh(gates[2H:3H]), σ(gates[3H:4H])
    c_t = f ⊙ c_{t-1} + i ⊙ g;   h_t = o ⊙ tanh(c_t)
    ```

    `w_hh [4H, H]` is static; `h0`, `c0 [B, H]` are optional (absent is
    zero); the results are those of `recur.lstm`: `y [T, B, H]`, `h_n`,
    `c_n [B, H]`. `reverse` runs the steps from `T-1` down to 0, and
    `proj(%w_hr)` projects h every step (`w_hh [4H, P]`; `h0`, `h_n [B, P]`,
    `y [T, B, P]`), as `recur.lstm`'s; a projected recurrence has the
    separate schedule and PyTorch's layout.

    `cell` is the loop schedule of a step, decided by `recur-fuse-lstm-cell`:
    `separate` (the default) computes the `[B, 4H]` gate tensor with one
    contraction and then the cell pointwise; `fused` computes, for each
    hidden unit, its four gate sums and consumes them at once in the cell
    update, so no `[B, 4H]` tensor is ever stored.

    `interleaved(K)` says that `w_hh` is not in PyTorch's layout but gate
    interleaved with tile `K` (`recur.interleave_gates`): the rows of hidden
    units `j` in `[jK, jK + K)` for gates i, f, g, o are adjacent. Only the
    fused schedule reads that layout; `K` divides `H`.

    `w_hh` may also come packed by `recur.pack_panels`, `[ceil(4H / t), H,
    t]`, for the CPU's register-tiled GEMM (`recur-pack-weights`): in
    PyTorch's layout with the separate schedule, and interleaved with
    `t = 4K` with the fused one, so that a panel holds the four gates of `K`
    units (`recur.pack_panels (recur.interleave_gates %w_hh tile(K))
    tile(4K)`). In an f32 recurrence, a bf16 `w_hh` packed in pairs of k
    (`pairs`, H even), `[ceil(4H / t), H / 2, t, 2]`, makes each step's
    product one of bf16 operands (h_{t-1} rounded to bf16), with f32 sums
    and cell, as `recur.linear`'s.

    ```mlir
    %w = recur.interleave_gates %w_hh tile(8) : tensor<1024x256xf32>
    %y, %h, %c = recur.lstm_recurrence %gates, %w interleaved(8) cell<fused>
        : (tensor<?x?x1024xf32>, tensor<1024x256xf32>)
        -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>)
    ```
  }];
  let arguments = (ins AnyTensor:$input_gates, AnyTensor:$w_hh,
                       Optional<AnyTensor>:$w_hr,
                       Optional<AnyTensor>:$h0, Optional<AnyTensor>:$c0,
      OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$gate_tile,
      DefaultValuedAttr<Recur_CellScheduleAttr,
                        "::mlir::recur::CellSchedule::separate">:$cell,
      UnitAttr:$reverse);
  let results = (outs AnyTensor:$y, AnyTensor:$h_n, AnyTensor:$c_n);
  let assemblyFormat = [{
    $input_gates `,` $w_hh (`proj` `(` $w_hr^ `)`)?
    (`h0` `(` $h0^ `)`)? (`c0` `(` $c0^ `)`)?
    (`interleaved` `(` $gate_tile^ `)`)?
    (`cell` `` $cell^)? (`reverse` $reverse^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input_gates,
      "::mlir::Value":$w_hh, CArg<"::mlir::Value", "{}">:$h0,
      CArg<"::mlir::Value", "{}">:$c0,
      CArg<"::mlir::recur::CellSchedule",
           "::mlir::recur::CellSchedule::separate">:$cell,
      CArg<"bool", "false">:$reverse, CArg<"::mlir::Value", "{}">:$w_hr)>];
  let recurClassDeclaration = [{
    /// The hidden size H (of the cell state).
    int64_t getHiddenSize() {
      if (getWHr())
        return ::llvm::cast<::mlir::ShapedType>(getWHr().getType()).getDimSize(1);
      int64_t depth =
          ::llvm::cast<::mlir::ShapedType>(getWHh().getType()).getDimSize(1);
      return isPairPacked(getWHh().getType(), getInputGates().getType())
                 ? 2 * depth
                 : depth;
    }
    /// The size of the hidden state h and the output: P with a projection,
    /// else H.
    int64_t getOutputSize() {
      if (getWHr())
        return ::llvm::cast<::mlir::ShapedType>(getWHr().getType()).getDimSize(0);
      return getHiddenSize();
    }
  }];
}

def Recur_LSTMWavefrontOp : Recur_Op<"lstm_wavefront",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "a stack of L LSTM recurrences run as a wavefront of diagonal steps";
  let description = [{
    The recurrences of an L-layer stack, in which layer l's output sequence
    is layer l+1's input (`recur-wavefront`). Layer 0 reads its precomputed
    `input_gates [T, B, 4H0]`, as `recur.lstm_recurrence` does; a layer
    l ≥ 1 computes its input projection inside the step, from layer l-1's
    hidden state of the same time step:

    ```
    gates_l(t) = bias[l] + h_{l-1}(t) · w_ih[l]ᵀ + h_l(t-1) · w_hh[l]ᵀ
    ```

    Layer l's step t needs layer l-1's step t and its own step t-1 only, so
    the L·T steps run as T+L-1 diagonal steps s, in which layer l computes
    step t = s - l: the steps of one diagonal are independent of each other
    (parallelism across layers, not only across units), and no layer's
    output sequence but the last one's is ever stored.

    Operands, for layers l = 0 … L-1: `w_hh` (L of them, `[4H_l, H_l]`),
    `w_ih` and `bias` (L-1 of them, for layers 1 … L-1: `[4H_l, H_(l-1)]`
    and `[4H_l]`, the sum of the layer's two biases), and optionally `h0`,
    `c0` (none, or one `[B, H_l]` per layer; absent is zero). Results: the
    last layer's `y [T, B, H_(L-1)]`, then `final_states`: every layer's
    `h_n [B, H_l]`, then every layer's `c_n [B, H_l]`.

    `cell` is each step's schedule, as for `recur.lstm_recurrence`.
    `interleaved([K_0, …])` says that `w_hh[l]`, and for l ≥ 1 `w_ih[l]` and
    `bias[l]`, are gate interleaved with tile `K_l` (`recur.interleave_gates`);
    it needs `cell<fused>`.

    ```mlir
    %y, %states:4 = recur.lstm_wavefront %gates0 w_hh(%w0, %w1) w_ih(%u1)
        bias(%b1) interleaved([8, 8]) cell<fused>
        : (tensor<?x?x1024xf32>, tensor<1024x256xf32>, tensor<1024x256xf32>,
           tensor<1024x256xf32>, tensor<1024xf32>)
        -> (tensor<?x?x256xf32>, tensor<?x256xf32>, tensor<?x256xf32>,
            tensor<?x256xf32>, tensor<?x256xf32>)
    ```
  }];
  let arguments = (ins AnyTensor:$input_gates, Variadic<AnyTensor>:$w_hh,
                       Variadic<AnyTensor>:$w_ih, Variadic<AnyTensor>:$bias,
                       Variadic<AnyTensor>:$h0, Variadic<AnyTensor>:$c0,
      OptionalAttr<DenseI64ArrayAttr>:$gate_tiles,
      DefaultValuedAttr<Recur_CellScheduleAttr,
                        "::mlir::recur::CellSchedule::separate">:$cell);
  let results = (outs AnyTensor:$y, Variadic<AnyTensor>:$final_states);
  let assemblyFormat = [{
    $input_gates `w_hh` `(` $w_hh `)` (`w_ih` `(` $w_ih^ `)`)?
    (`bias` `(` $bias^ `)`)? (`h0` `(` $h0^ `)`)? (`c0` `(` $c0^ `)`)?
    (`interleaved` `(` $gate_tiles^ `)`)?
    (`cell` `` $cell^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input_gates,
      "::mlir::ValueRange":$w_hh, "::mlir::ValueRange":$w_ih,
      "::mlir::ValueRange":$bias, "::mlir::ValueRange":$h0,
      "::mlir::ValueRange":$c0, "::mlir::recur::CellSchedule":$cell,
      "::mlir::DenseI64ArrayAttr":$gate_tiles)>];
  let recurClassDeclaration = [{
    /// The number of layers L.
    int64_t getNumLayers() { return getWHh().size(); }
    /// Every layer's h_T and c_T.
    ::mlir::ResultRange getHN() {
      return getFinalStates().take_front(getNumLayers());
    }
    ::mlir::ResultRange getCN() {
      return getFinalStates().drop_front(getNumLayers());
    }
    /// Layer l's hidden size H_l.
    int64_t getHiddenSize(int64_t layer) {
      return ::llvm::cast<::mlir::ShapedType>(getWHh()[layer].getType())
          .getDimSize(1);
    }
  }];
}

def Recur_InterleaveGatesOp : Recur_Op<"interleave_gates",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "gate-interleaved rows of a gate-stacked weight, tile by tile";
  let description = [{
    Reorders the rows of a weight of `gates` stacked gates (`[G H, K]` or
    `[G H]`; an LSTM's four in PyTorch's order i, f, g, o, the default, or
    the G column groups a `recur.rnn` cell slices from a product) so that
    each tile of `tile` hidden units holds its G gates next to each other:

    ```
    result[(j / tile) * G * tile + g * tile + j % tile] = input[g * H + j]
    ```

    With `tile = H` this is the identity; with `tile = 1` the gates of
    every unit are adjacent. `recur-fuse-lstm-cell` interleaves `w_hh` so that
    the loop nest of a fused step reads the gates of the units it updates from
    one contiguous block of rows, and `recur-fuse-cell-step` does the same
    for a `recur.rnn` cell's recurrent product. The weight depends on nothing
    but the model's weights, so `recur-outline-weight-prologue` moves it into
    the prologue the runtime runs once per weight binding.

    ```mlir
    %w = recur.interleave_gates %w_hh tile(8) : tensor<1024x256xf32>
    %u = recur.interleave_gates %w_hh_gru tile(16) gates(3) : tensor<768x256xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$tile,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>,
                                         "4">:$gates);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input `tile` `(` $tile `)` (`gates` `(` $gates^ `)`)? attr-dict `:`
    type($input)
  }];
  let hasVerifier = 1;
}

def Recur_PackPanelsOp : Recur_Op<"pack_panels", [Pure]> {
  let summary = "the rows of a weight in panels of `tile` rows, column by column";
  let description = [{
    Packs a `[N, K]` weight into `[ceil(N / tile), K, tile]`: panel `p` holds
    rows `p * tile` to `p * tile + tile - 1`, stored column by column, and
    rows past `N` are zero:

    ```
    result[p, k, r] = input[p * tile + r, k]   (0 where p * tile + r >= N)
    ```

    A GEMM's register tile of `tile` output columns then reads one
    contiguous run of `tile` weights per step of its K loop. The CPU pipeline
    packs the weights of `recur.linear` this way (`recur-pack-weights`, with
    the tile chosen from the target's vector width); the weight depends on
    nothing but the model's weights, so `recur-outline-weight-prologue` moves
    the packing into the prologue that runs once per weight binding.

    ```mlir
    %p = recur.pack_panels %w tile(64)
        : tensor<10001x256xf32> -> tensor<157x256x64xf32>
    ```

    `pairs` (bf16 only) stores K in pairs of consecutive k, for the
    two-term dot products of bf16 (AVX512-BF16's `vdpbf16ps`): each of the
    `K / 2` rows of a panel holds, for each of its `tile` rows of the input,
    the input's elements at k = 2j and 2j + 1 side by side (K even), so a
    row of pairs is one contiguous run of 2 x `tile` elements:

    ```
    result[p, j, r, s] = input[p * tile + r, 2j + s]   (0 where p * tile + r >= N)
    ```

    ```mlir
    %p = recur.pack_panels %w tile(64) pairs
        : tensor<10001x256xbf16> -> tensor<157x128x64x2xbf16>
    ```
  }];
  let arguments = (ins AnyTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$tile,
                       UnitAttr:$pairs);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input `tile` `(` $tile `)` (`pairs` $pairs^)? attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input, "int64_t":$tile,
      CArg<"bool", "false">:$pairs)>];
}

def Recur_LinearOp : Recur_Op<"linear", [Pure, DeclareOpInterfaceMethods<Recur_Differentiable>]> {
  let summary = "affine map over the last dimension";
  let description = [{
    `result = input · weightᵀ + bias` — PyTorch's `nn.Linear`: `input [..., K]`,
    `weight [N, K]`, optional `bias [N]` (absent is zero; the canonical form
    drops an explicit zero), `result [..., N]`.

    The weight may also come packed by `recur.pack_panels` as
    `[ceil(N / t), K, t]`; N is then the result's last dimension. An f32
    linear may read a bf16 weight packed in pairs of k (`pairs`, K even),
    `[ceil(N / t), K / 2, t, 2]`: its products are then of bf16 operands (the
    input rounded to bf16 to nearest even, as a bf16 GEMM stores its
    activations), its sums f32: the CPU's `precision=bf16`.

    ```mlir
    %logits = recur.linear %y, %w bias(%b)
        : (tensor<?x?x256xf32>, tensor<10001x256xf32>, tensor<10001xf32>)
        -> tensor<?x?x10001xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$weight, Optional<AnyTensor>:$bias);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight,
      CArg<"::mlir::Value", "{}">:$bias)>];
}

def Recur_TransposeOp : Recur_Op<"transpose", [Pure,
    DeclareOpInterfaceMethods<Recur_Differentiable>]> {
  let summary = "permutes a tensor's dimensions";
  let description = [{
    Dimension `k` of the result is dimension `permutation[k]` of the input,
    as in `torch.permute`. Any element type; the result type follows from the
    input's.

    Batch-first models (`nn.LSTM(batch_first=True)`) read `[B, T, ...]`
    tensors, and the LSTM forms are time-major: `recur-gen --batch-first`
    swaps the first two dimensions of the input and of the output with it.
    Two transposes that undo each other fold away.

    ```mlir
    %tm = recur.transpose %x [1, 0, 2] : tensor<?x?x128xf32> -> tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input,
      "::llvm::ArrayRef<int64_t>":$permutation)>];
}

def Recur_LogSoftmaxOp : Recur_Op<"log_softmax", [Pure]> {
  let summary = "log of the softmax over the last dimension";
  let description = [{
    `result[..., j] = input[..., j] - log(Σ_k exp(input[..., k]))`. The result has
    the input's type. `log_softmax` is idempotent, and folds so.

    ```mlir
    %lp = recur.log_softmax %logits : tensor<?x?x10001xf32> -> tensor<?x?x10001xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$input);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input)>];
}

def Recur_CrossEntropyOp : Recur_Op<"cross_entropy", [Pure,
    DeclareOpInterfaceMethods<Recur_Differentiable>]> {
  let summary = "negative log-likelihood of integer targets under logits";
  let description = [{
    `loss[d...] = -log_softmax(logits)[d..., targets[d...]]` — PyTorch's
    `F.cross_entropy` with class scores in the last dimension: `logits [..., C]`,
    `targets [...]` (i64). `reduction` is `mean` (the default) or `sum`, which
    give a rank-0 tensor, or `none`, which gives the per-token losses `[...]`.
    Logits that come from `recur.log_softmax` are replaced by that op's input
    (log_softmax is idempotent).

    ```mlir
    %loss = recur.cross_entropy %logits, %targets
        : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<f32>
    %per_token = recur.cross_entropy %logits, %targets reduction<none>
        : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$logits, AnyTensor:$targets,
      DefaultValuedAttr<Recur_ReductionAttr, "::mlir::recur::Reduction::mean">:$reduction);
  let results = (outs AnyTensor:$loss);
  let assemblyFormat = [{
    $logits `,` $targets (`reduction` `` $reduction^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$logits, "::mlir::Value":$targets,
      CArg<"::mlir::recur::Reduction", "::mlir::recur::Reduction::mean">:$reduction)>];
}

//===----------------------------------------------------------------------===//
// Training: the gradients recur-differentiate builds, and the update
//===----------------------------------------------------------------------===//

def Recur_CrossEntropyGradOp : Recur_Op<"cross_entropy_grad", [Pure]> {
  let summary = "gradient of a cross entropy with respect to its logits";
  let description = [{
    The gradient of `recur.cross_entropy %logits, %targets` (same
    `reduction`) given the gradient `d_loss` of its result:

    ```
    d_logits[d..., c] = (softmax(logits)[d..., c] - (c == targets[d...])) * s[d...]
    ```

    with `s = d_loss / N` for `mean` (N the number of targets), `s = d_loss`
    for `sum` (both rank 0), and `s = d_loss[d...]` for `none`.

    ```mlir
    %d = recur.cross_entropy_grad %logits, %targets, %d_loss
        : (tensor<?x?x10001xf32>, tensor<?x?xi64>, tensor<f32>) -> tensor<?x?x10001xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$logits, AnyTensor:$targets, AnyTensor:$d_loss,
      DefaultValuedAttr<Recur_ReductionAttr, "::mlir::recur::Reduction::mean">:$reduction);
  let results = (outs AnyTensor:$d_logits);
  let assemblyFormat = [{
    $logits `,` $targets `,` $d_loss (`reduction` `` $reduction^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$logits, "::mlir::Value":$targets,
      "::mlir::Value":$d_loss, "::mlir::recur::Reduction":$reduction)>];
}

def Recur_LinearGradOp : Recur_Op<"linear_grad", [Pure]> {
  let summary = "gradients of recur.linear with respect to its input, weight and bias";
  let description = [{
    Given `d_result [..., N]`, the gradient of `recur.linear %input, %weight`
    (`input [..., K]`, `weight [N, K]` in PyTorch's layout):

    ```
    d_input  = d_result · weight                       // [..., K]
    d_weight = Σ over leading dims of d_resultᵀ · input  // [N, K]: one GEMM over all rows
    d_bias   = Σ over leading dims of d_result           // [N]
    ```

    A result without uses is not computed (a model input needs no gradient,
    a linear map without bias none for its bias).

    ```mlir
    %dx, %dw, %db = recur.linear_grad %d_logits, %y, %w
        : (tensor<?x?x10001xf32>, tensor<?x?x256xf32>, tensor<10001x256xf32>)
        -> (tensor<?x?x256xf32>, tensor<10001x256xf32>, tensor<10001xf32>)
    ```
  }];
  let arguments = (ins AnyTensor:$d_result, AnyTensor:$input, AnyTensor:$weight);
  let results = (outs AnyTensor:$d_input, AnyTensor:$d_weight, AnyTensor:$d_bias);
  let assemblyFormat = [{
    $d_result `,` $input `,` $weight attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$d_result, "::mlir::Value":$input,
      "::mlir::Value":$weight)>];
}

def Recur_LSTMGradOp : Recur_Op<"lstm_grad", [Pure, AttrSizedOperandSegments]> {
  let summary = "backward through time of one LSTM layer";
  let description = [{
    Given `d_y [T, B, H]`, the gradient of the loss with respect to the
    output sequence `y` of `recur.lstm %input, %w_ih, %w_hh, %b_ih, %b_hh
    h0(%h0) c0(%c0)`, and optionally `d_h_n`, `d_c_n [B, H]`, the gradients
    with respect to its final state, the gradients with respect to the
    input, the weights and the initial state:

    ```
    dh, dc = d_h_n, d_c_n                     // zero when absent
    for t = T-1 … 0:
      dh += d_y[t]
      dc  = dc + dh ⊙ o_t ⊙ (1 - tanh²(c_t))
      dgates_t = [dc ⊙ g_t ⊙ i_t(1-i_t), dc ⊙ c_{t-1} ⊙ f_t(1-f_t),
                  dc ⊙ i_t ⊙ (1-g_t²),   dh ⊙ tanh(c_t) ⊙ o_t(1-o_t)]
      dh  = dgates_t · w_hh;   dc = dc ⊙ f_t
    d_h0, d_c0 = dh, dc                          // after step 0
    d_input = dgates · w_ih                      // [T, B, I], all steps at once
    d_w_ih  = Σ_t dgates_tᵀ · x_t;   d_w_hh = Σ_t dgates_tᵀ · y_{t-1}
    d_bias  = Σ_t Σ_b dgates_t       // the gradient of b_ih and of b_hh alike
    ```

    with `y_{-1} = h0` and `c_{-1} = c0`. Every optional operand is zero
    when absent: the biases (`nn.LSTM(bias=False)`; `d_bias` is then still
    their gradient), `d_y` (a loss on the final state only), the initial
    state and the final state's gradients.

    `lengths [B]`, as `recur.lstm`'s: the forward ran row b for its first
    `lengths[b]` steps and kept its state after them. Past a row's length
    its steps get no gradient (`d_y` there is ignored: the output is zero,
    whatever the weights) and dh, dc pass to the step before unchanged, so
    `d_h_n`, `d_c_n` reach the row's last step.

    Activations: the op takes the forward's `y` (every step's h, which the
    next layer reads anyway) and recomputes the gates from it, `[x_t, y_(t-1)]
    · [w_ih, w_hh]ᵀ + b`, as one GEMM over all T steps, and the cell states
    by an elementwise scan: the forward keeps no gates, and the backward holds
    5·T·B·H floats of one layer at a time.

    A result without uses is not computed (layer 0 of a model whose input is
    not a weight's needs no `d_input`; a zero initial state no `d_h0`).

    ```mlir
    %dx, %dwi, %dwh, %db, %dh0, %dc0 = recur.lstm_grad %x, %w_ih, %w_hh, %b_ih, %b_hh
        y(%y) d_y(%d_y)
        : (tensor<?x?x128xf32>, tensor<1024x128xf32>, tensor<1024x256xf32>,
           tensor<1024xf32>, tensor<1024xf32>, tensor<?x?x256xf32>, tensor<?x?x256xf32>)
        -> (tensor<?x?x128xf32>, tensor<1024x128xf32>, tensor<1024x256xf32>, tensor<1024xf32>,
            tensor<?x256xf32>, tensor<?x256xf32>)
    ```
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$w_ih, AnyTensor:$w_hh,
                       Optional<AnyTensor>:$b_ih, Optional<AnyTensor>:$b_hh,
                       AnyTensor:$y, Optional<AnyTensor>:$d_y,
                       Optional<AnyTensor>:$h0, Optional<AnyTensor>:$c0,
                       Optional<AnyTensor>:$d_h_n, Optional<AnyTensor>:$d_c_n,
                       Optional<AnyTensor>:$lengths);
  let results = (outs AnyTensor:$d_input, AnyTensor:$d_w_ih, AnyTensor:$d_w_hh,
                      AnyTensor:$d_bias, AnyTensor:$d_h0, AnyTensor:$d_c0);
  let assemblyFormat = [{
    $input `,` $w_ih `,` $w_hh (`,` $b_ih^ `,` $b_hh)? `y` `(` $y `)`
    (`d_y` `(` $d_y^ `)`)? (`h0` `(` $h0^ `)`)? (`c0` `(` $c0^ `)`)?
    (`d_h_n` `(` $d_h_n^ `)`)? (`d_c_n` `(` $d_c_n^ `)`)?
    (`lengths` `(` $lengths^ `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$w_ih,
      "::mlir::Value":$w_hh, "::mlir::Value":$b_ih, "::mlir::Value":$b_hh,
      "::mlir::Value":$y, "::mlir::Value":$d_y,
      CArg<"::mlir::Value", "{}">:$h0, CArg<"::mlir::Value", "{}">:$c0,
      CArg<"::mlir::Value", "{}">:$d_h_n, CArg<"::mlir::Value", "{}">:$d_c_n,
      CArg<"::mlir::Value", "{}">:$lengths)>];
}

def Recur_GRUGradOp : Recur_Op<"gru_grad", [Pure, AttrSizedOperandSegments]> {
  let summary = "backward through time of one GRU layer";
  let description = [{
    Given `d_y [T, B, H]`, the gradient of the loss with respect to the
    output sequence `y` of `recur.gru %input, %w_ih, %w_hh, %b_ih, %b_hh
    h0(%h0)` (PyTorch's gate order r, z, n and its reset gate after the
    recurrent product), and optionally `d_h_n [B, H]`, the gradients with
    respect to the input, the weights, the biases and the initial state:

    ```
    gi_t = x_t · w_ihᵀ + b_ih;  gh_t = y_{t-1} · w_hhᵀ + b_hh   // all steps at once
    dh = d_h_n                                  // zero when absent
    for t = T-1 … 0:
      r, z, n from gi_t, gh_t as the forward computes them
      dh += d_y[t]
      dn = dh ⊙ (1 - z) ⊙ (1 - n²);   dz = dh ⊙ (y_{t-1} - n) ⊙ z(1-z)
      dr = dn ⊙ gh_t[n] ⊙ r(1-r)
      dgi_t = [dr, dz, dn];   dgh_t = [dr, dz, dn ⊙ r]
      dh = dh ⊙ z + dgh_t · w_hh
    d_h0 = dh                                    // after step 0
    d_input = dgi · w_ih;   d_w_ih = Σ_t dgi_tᵀ · x_t;   d_w_hh = Σ_t dgh_tᵀ · y_{t-1}
    d_b_ih = Σ dgi;   d_b_hh = Σ dgh
    ```

    with `y_{-1} = h0`. Optional operands are zero when absent (the biases,
    `d_y`, `h0`, `d_h_n`). `lengths [B]`, as `recur.gru`'s: past a row's
    length its steps get no gradient (`d_y` there is ignored) and dh passes
    to the step before unchanged. Activations: the forward's `y` only; the
    gates are recomputed as two GEMMs over all steps. A result without uses
    is not computed.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$w_ih, AnyTensor:$w_hh,
                       Optional<AnyTensor>:$b_ih, Optional<AnyTensor>:$b_hh,
                       AnyTensor:$y, Optional<AnyTensor>:$d_y,
                       Optional<AnyTensor>:$h0, Optional<AnyTensor>:$d_h_n,
                       Optional<AnyTensor>:$lengths);
  let results = (outs AnyTensor:$d_input, AnyTensor:$d_w_ih, AnyTensor:$d_w_hh,
                      AnyTensor:$d_b_ih, AnyTensor:$d_b_hh, AnyTensor:$d_h0);
  let assemblyFormat = [{
    $input `,` $w_ih `,` $w_hh (`,` $b_ih^ `,` $b_hh)? `y` `(` $y `)`
    (`d_y` `(` $d_y^ `)`)? (`h0` `(` $h0^ `)`)? (`d_h_n` `(` $d_h_n^ `)`)?
    (`lengths` `(` $lengths^ `)`)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$w_ih,
      "::mlir::Value":$w_hh, "::mlir::Value":$b_ih, "::mlir::Value":$b_hh,
      "::mlir::Value":$y, "::mlir::Value":$d_y, "::mlir::Value":$h0,
      "::mlir::Value":$d_h_n, "::mlir::Value":$lengths)>];
}

def Recur_RNNGradOp : Recur_Op<"rnn_grad", [Pure, AttrSizedOperandSegments]> {
  let summary = "backward through time of one Elman RNN layer (tanh or ReLU)";
  let description = [{
    Given `d_y [T, B, H]`, the gradient of the loss with respect to the
    output sequence `y` of `recur.rnn_tanh` (`recur.rnn_relu` with `relu`)
    `%input, %w_ih, %w_hh, %b_ih, %b_hh h0(%h0)`, and optionally `d_h_n`:

    ```
    dh = d_h_n                                   // zero when absent
    for t = T-1 … 0:
      dh += d_y[t]
      da_t = dh ⊙ (1 - y_t²)       (tanh)    or   dh ⊙ (y_t > 0)   (relu)
      dh = da_t · w_hh
    d_h0 = dh
    d_input = da · w_ih;  d_w_ih = Σ_t da_tᵀ · x_t;  d_w_hh = Σ_t da_tᵀ · y_{t-1}
    d_bias = Σ da                    // the gradient of b_ih and of b_hh alike
    ```

    with `y_{-1} = h0`. The derivative of the nonlinearity is read off y, so
    nothing is recomputed. Optional operands are zero when absent;
    `lengths [B]` as `recur.lstm_grad`'s. A result without uses is not
    computed.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$w_ih, AnyTensor:$w_hh,
                       AnyTensor:$y, Optional<AnyTensor>:$d_y,
                       Optional<AnyTensor>:$h0, Optional<AnyTensor>:$d_h_n,
                       Optional<AnyTensor>:$lengths, UnitAttr:$relu);
  let results = (outs AnyTensor:$d_input, AnyTensor:$d_w_ih, AnyTensor:$d_w_hh,
                      AnyTensor:$d_bias, AnyTensor:$d_h0);
  let assemblyFormat = [{
    $input `,` $w_ih `,` $w_hh `y` `(` $y `)` (`d_y` `(` $d_y^ `)`)?
    (`h0` `(` $h0^ `)`)? (`d_h_n` `(` $d_h_n^ `)`)?
    (`lengths` `(` $lengths^ `)`)? (`relu` $relu^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$w_ih,
      "::mlir::Value":$w_hh, "::mlir::Value":$y, "::mlir::Value":$d_y,
      "::mlir::Value":$h0, "::mlir::Value":$d_h_n, "::mlir::Value":$lengths,
      "bool":$relu)>];
}

def Recur_EmbeddingGradOp : Recur_Op<"embedding_grad", [Pure]> {
  let summary = "gradient of an embedding table: rows summed by id";
  let description = [{
    The gradient of `recur.embedding` with respect to its `[V, E]` table,
    given `d_result [d..., E]`: `d_table[v, e] = Σ over d with ids[d] = v of
    d_result[d, e]`; rows no id names are zero. `rows` is V.

    ```mlir
    %d = recur.embedding_grad %d_x[%tokens] rows(10001)
        : (tensor<?x?x128xf32>, tensor<?x?xi64>) -> tensor<10001x128xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$d_result, AnyTensor:$ids,
                       ConfinedAttr<I64Attr, [IntPositive]>:$rows);
  let results = (outs AnyTensor:$d_table);
  let assemblyFormat = [{
    $d_result `[` $ids `]` `rows` `(` $rows `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::Value":$d_result, "::mlir::Value":$ids,
      "int64_t":$rows)>];
}

def Recur_ClipGradNormOp : Recur_Op<"clip_grad_norm", [Pure]> {
  let summary = "gradients scaled together to a global 2-norm of at most max_norm";
  let description = [{
    `torch.nn.utils.clip_grad_norm_`: with `norm` the 2-norm of all the
    gradients' elements together, every gradient is multiplied by
    `min(1, max_norm / (norm + 1e-6))`. Results: `norm` (rank 0, before
    clipping, as PyTorch returns it), then the gradients, each with its
    operand's type.

    ```mlir
    %norm, %g:2 = recur.clip_grad_norm %dw, %db max_norm(2.5e-01)
        : (tensor<1024x256xf32>, tensor<1024xf32>)
        -> (tensor<f32>, tensor<1024x256xf32>, tensor<1024xf32>)
    ```
  }];
  let arguments = (ins Variadic<AnyTensor>:$gradients,
                       ConfinedAttr<F64Attr, [Recur_FinitePositive]>:$max_norm);
  let results = (outs AnyTensor:$norm, Variadic<AnyTensor>:$clipped);
  let assemblyFormat = [{
    $gradients `max_norm` `(` $max_norm `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::ValueRange":$gradients, "double":$max_norm)>];
}

def Recur_SGDUpdateOp : Recur_Op<"sgd_update",
    [Pure, AllTypesMatch<["weight", "gradient", "result"]>]> {
  let summary = "one step of plain SGD: weight - lr * gradient";
  let description = [{
    `torch.optim.SGD` without momentum or weight decay. The compiled
    training step writes the result over the bound weight, in place.

    ```mlir
    %w1 = recur.sgd_update %w, %dw lr(1.0e-01) : tensor<1024x256xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$weight, AnyTensor:$gradient,
                       ConfinedAttr<F64Attr, [Recur_FinitePositive]>:$lr);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $weight `,` $gradient `lr` `(` $lr `)` attr-dict `:` type($weight)
  }];
  let hasVerifier = 1;
}

#endif // RECUR_IR_RECUROPS_TD
