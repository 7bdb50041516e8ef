//===- Passes.td - recur -> recur transformations -------------------------===//
//
// Passes that rewrite recur IR into recur IR: shape specialization and the
// loop-fusion stages (recur-fusion), which both the CPU and the GPU pipelines
// run first. Every fusion decision is an op or an attribute in recur IR, so
// `recur-opt` shows each stage.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_TRANSFORMS_PASSES_TD
#define RECUR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpecializeShapes : Pass<"recur-specialize-shapes", "::mlir::ModuleOp"> {
  let summary = "Fix the dynamic sizes of named model inputs and refine the types that follow";
  let description = [{
    A model generated without `--seq`/`--batch` takes `tokens : tensor<?x?xi64>`.
    This pass gives named inputs (function arguments with a `recur.input`
    attribute) static shapes, e.g. `inputs=tokens=50x128`, then refines the
    result types of every recur op from its operands and updates the function's
    result types. Users that are neither recur ops nor `func.return` keep the
    type they had, through a `tensor.cast`.

    ```
    recur-opt model.mlir --recur-specialize-shapes="inputs=tokens=50x128"
    ```
  }];
  let options = [
    ListOption<"inputs", "inputs", "std::string",
               "Static shapes of named inputs as NAME=D0xD1x..., e.g. tokens=50x128">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def Differentiate : Pass<"recur-differentiate", "::mlir::func::FuncOp"> {
  let summary = "Turn a training step's loss into the backward pass and an SGD update";
  let description = [{
    A function with `recur.train = #recur.sgd<lr = ..., clip_norm = ...>`
    (`recur-gen lstm-lm --train`) returns one value, the loss. This pass
    derives its gradients with respect to every weight (`recur.weight`
    argument) by reverse-mode differentiation over the recur ops: from the
    loss back, each op builds its operands' gradients from its results'
    (the `Differentiable` interface: `recur.cross_entropy_grad`,
    `recur.linear_grad`, `recur.lstm_grad`, `recur.gru_grad`,
    `recur.rnn_grad`, `recur.embedding_grad`), and
    gradients of a value used twice are summed. Then, when `clip_norm` is
    positive, `recur.clip_grad_norm` scales them together, and
    `recur.sgd_update` computes every weight's new value:

    ```mlir
    func.func @forward(...) -> (tensor<f32> {recur.output = "loss"},
        tensor<10001x128xf32> {recur.update = "embedding.weight"}, ...)
    ```

    Each added result carries `recur.update`: the compiled model writes it
    over the bound weight, in place. A weight the loss does not depend on
    gets no gradient and is not updated (as PyTorch's SGD skips parameters
    without one). What is not differentiable yet (an op without a rule, an
    LSTM's projection, a reverse direction, a `recur.rnn` cell region, a
    bf16 model) is an error on the op.

    A function with `recur.vjp` (`recur-gen lstm --vjp`) becomes its
    vector-Jacobian product instead, the backward pass a caller's autograd
    runs: `(args, kept results, d_results) -> d_args`. Every float result
    `r` gets an argument `d_r`, its gradient from whatever loss the caller
    computes, and every float argument `a` (inputs and weights) a result
    `d_a`. The backward reads the forward's results from arguments named
    as those results (the caller kept them from its forward call), and the
    forward ops it then no longer needs are erased: for one LSTM layer only
    `recur.lstm_grad` is left, reading the kept `output`. A result marked
    `recur.kept` (a layer's output sequence that `recur-gen
    --keep-activations` returns for the backward only) gets no `d_`
    argument. The result is marked `recur.backward`.

    ```mlir
    func.func @forward(%input: ..., %h0_l0: ..., %c0_l0: ..., %weights...,
        %output {recur.input = "output"}, %d_output {recur.input = "d_output"},
        %d_h_n_l0 {recur.input = "d_h_n_l0"}, %d_c_n_l0 {recur.input = "d_c_n_l0"})
        -> (... {recur.output = "d_input"}, ... {recur.output = "d_h0_l0"}, ...)
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ComputeInF32 : Pass<"recur-compute-in-f32", "::mlir::func::FuncOp"> {
  let summary = "Run a bf16 or f16 model's ops in f32, its interface unchanged";
  let description = [{
    The lowering computes in f32. A model whose weights, inputs or outputs
    are bf16 or f16 (`recur-gen --dtype bf16`, bound from a PyTorch
    `model.bfloat16().state_dict()`) keeps them so at its interface: each
    such argument is extended to f32 once at the function's entry
    (`arith.extf`), every op in the body computes in f32 (the element type
    of its results becomes f32), and each such result is rounded to its
    declared type at the return (`arith.truncf`, to nearest even). So
    accumulation, the cell state and the activations between layers are
    f32, and fusion sees the same op sequence as in an f32 model; after
    fusion, `recur-outline-weight-prologue` moves the weights' extension
    into the prologue, which runs once per binding.

    A function body with a reduced-precision attribute (a bf16 constant) is
    an error: its value would have to be converted too.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def HoistInputProjection : Pass<"recur-hoist-input-projection"> {
  let summary = "Compute every LSTM layer's input projection for all steps in one GEMM";
  let description = [{
    `x_t · w_ihᵀ + b_ih` does not depend on the recurrence, so it need not be
    computed inside the time loop, one `[B, I] × [I, 4H]` product per step.
    Every `recur.lstm` becomes

    ```mlir
    %bias  = arith.addf %b_ih, %b_hh : tensor<4Hxf32>
    %gates = recur.linear %x, %w_ih bias(%bias)       // [T, B, 4H]: T·B rows at once
    %y, %h, %c = recur.lstm_recurrence %gates, %w_hh ...
    ```

    one large GEMM over all `T·B` rows with both biases folded in (computed
    once; a layer without biases gets a projection without one), and the
    recurrence over the precomputed gates, in the layer's direction
    (`reverse` and a projection `proj` carry over). No `recur.lstm`
    remains.

    A `recur.rnn` whose x_t feeds exactly one `recur.linear` with a
    captured weight (and bias), a GRU's or an RNN's `x_t · w_ihᵀ + b_ih`,
    gets that product of all `T·B` rows before the loop as its input, and
    the cell reads its rows as x_t (reads of x_t's batch size, `tensor.dim`,
    do not count). Any other cell keeps its products per step, with a
    missed remark saying why. A captured bias the cell then adds to those
    rows, in a sum they start (`x·W + h·U + b`, through one pointwise generic
    or a chain of them each read only by the next), moves into the hoisted
    product's bias: the sum is reassociated, `(x·W + b) + h·U`, as an LSTM's
    two biases are summed. A captured `[N]` scale the cell applies to those
    rows first, `(x·W + b) * s`, moves into the product's weight and bias
    (`W`'s rows and `b` times `s`, computed from the weights alone, which
    `recur-outline-weight-prologue` runs once per binding).

    Then what a cell computes from x_t alone, row by row, runs before the
    loop too, on x's `T·B` rows collapsed into one dimension: a layer norm
    of the input product (a layer-norm LSTM's `layernorm_i`), a scale or a
    nonlinearity of it. The ops taken are those that read x_t or what they
    compute from it, not the state, each computing a row from the same row
    of its operands and from captures, constants and the row count
    (`linalg.generic`s parallel along the rows, reductions over features,
    fills, slices and reshapes that keep the rows, `recur.linear`,
    elementwise arith on tensors); they must give the rest of the cell one
    value (not x_t itself), which becomes the recurrence's input
    (`expand(f(collapse(x)))`, a row chain) and the cell's x_t. A product
    that could not be hoisted alone (x_t also read by an op on it) is hoisted
    with the rest this way. Cells of a static batch and recurrences on rows
    sorted by length (whose input product runs per step on the active rows)
    keep theirs. `recur-wavefront` runs a row chain per step again in the
    cell of a layer it joins to a wavefront.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def FoldEmbeddingProjection : Pass<"recur-fold-embedding-projection"> {
  let summary = "Project the embedding table once per binding; gather the projected rows per run";
  let description = [{
    A `recur.linear` whose input is a `recur.embedding` (layer 0's hoisted
    input projection in an LM) computes, for each id, a row of
    `table · wᵀ + b`. When the table, the weight and the bias are weights,
    that product of the whole table is too:

    ```mlir
    %x     = recur.embedding %table[%ids]                  // [T, B, E]
    %gates = recur.linear %x, %w_ih bias(%b)                // [T, B, 4H]: T·B·E·4H FMAs per run
    // becomes
    %proj  = recur.linear %table, %w_ih bias(%b)            // [V, 4H], weights only
    %gates = recur.embedding %proj[%ids]                   // a gather per run
    ```

    `recur-outline-weight-prologue` then computes `%proj` once per weight
    binding (a derived tensor of `V·4H` floats: 41 MB for the reference LM)
    and each run only gathers rows. Sums are the same dot products of length
    E. A table of more than `max-elements` floats is not made (the embedding
    and the GEMM stay). Nor is it in a training step (`recur.train`),
    whose weights change at every run.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 26",
           "Largest projected table, in elements (default 64 Mi: 256 MiB of f32)">,
  ];
}

def GeneralizeCells : Pass<"recur-generalize-cells"> {
  let summary = "Write the named cells (recur.gru, recur.rnn_tanh, recur.rnn_relu) as recur.rnn";
  let description = [{
    As `linalg-generalize-named-ops` does for linalg: each named cell
    becomes the `recur.rnn` of its formulas, so that fusion and lowering
    handle one form. The cell region computes `gi = x_t · w_ihᵀ + b_ih` and
    `gh = h · w_hhᵀ + b_hh` (`recur.linear`), then one pointwise
    `linalg.generic` over `[B, H]` on their gates' columns and h: PyTorch's
    GRU (the reset gate applied to `gh`'s n columns, after the product),
    `tanh(gi + gh)` or `max(0, gi + gh)`. An absent `h0` becomes zeros.

    ```mlir
    %y, %h = recur.rnn %x init(%zeros) captures(%w_ih, %w_hh, %b_ih, %b_hh) : ... {
    ^bb0(%xt: tensor<?x16xf32>, %h_prev: tensor<?x32xf32>, %wi: ..., %wh: ..., %bi: ..., %bh: ...):
      %gi = recur.linear %xt, %wi bias(%bi) : ... -> tensor<?x96xf32>
      %gh = recur.linear %h_prev, %wh bias(%bh) : ... -> tensor<?x96xf32>
      // the gates' columns: tensor.extract_slice
      %h_t = linalg.generic ... { r, z, n; (1 - z) * n + z * h }
      recur.yield %h_t, %h_t : tensor<?x32xf32>, tensor<?x32xf32>
    }
    ```
  }];
  let options = [
    Option<"lstm", "lstm", "bool", /*default=*/"false",
           "Write recur.lstm as recur.rnn too: the state (h, c), one generic "
           "giving c_t and h_t, the projection a product. Off in the "
           "pipelines, whose LSTM stages take recur.lstm; an LSTM with "
           "sequence lengths is written so either way (recur.rnn takes "
           "them)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def SortByLength : Pass<"recur-sort-by-length"> {
  let summary = "Run each recur.rnn with sequence lengths on its rows ordered by length";
  let description = [{
    Orders a packed batch's rows by length, longest first (ties by row, as
    `pack_padded_sequence(enforce_sorted=False)`), so that the rows with a
    step at time t are a prefix: the recurrence runs on its input, state
    and lengths gathered into that order and is marked `sorted`, which
    lets the lowering run each step on the active rows only; y and the
    final states are gathered back into the rows' order. The order is
    computed once per lengths value (B² comparisons). A layer fed by the
    previous one's y with the same lengths (or both directions' y,
    concatenated) takes its rows in order as they are, and an embedding's
    rows are gathered by sorting its ids, so a stack or an LM reorders once
    each way. A `recur.linear` that alone reads the last y (or both
    directions', concatenated: an LM's output layer) runs step by step on
    the active rows of the sorted y and one padded row past them (zeros:
    its product is the bias), and each step's rows gather their products
    in the rows' order while they are in cache: the product's work shrinks
    too.

    ```mlir
    %y, %h = recur.rnn %x init(%h0) lengths(%len) ...
    // becomes
    %ys, %hs = recur.rnn %x_sorted init(%h0_sorted) lengths(%len_sorted) sorted ...
    %y = ... gather of %ys by each row's rank ...
    ```

    A cell whose batch is static (a model compiled for one B) is left as
    it is, with a remark: its steps run every row, masked.

    Without `project-active-rows` (the GPU pipelines), the output layer
    is one GEMM in the rows' own order that adds the products of the
    tokens alone (a `linalg.generic` marked `recur.active_rows`, which
    also takes the tokens before each step and the order by length): one
    tiled GEMM kernel whose blocks walk the tokens, where a loop of
    per-step GEMMs would be plain loop nests in a persistent kernel.
  }];
  let options = [
    Option<"projectActiveRows", "project-active-rows", "bool", "true",
           "An LM's output layer runs step by step on the active rows of "
           "the sorted y (else as one GEMM of the tokens)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseCellPointwise : Pass<"recur-fuse-cell-pointwise"> {
  let summary = "Fuse the pointwise ops of each recur.rnn cell into few loop nests";
  let description = [{
    Inside every `recur.rnn` cell: a pointwise `linalg.generic` whose result
    is only sliced (the gates' chunks) becomes a generic per slice, on its
    operands' slices; then linalg's elementwise fusion fuses each producer
    read by one op only into that op (reductions over features included),
    and a producer read by several into the first of them (not a
    reduction), which then writes the producer's value for the others too:
    computed once still (an sLSTM's stabiliser, read by both exponential
    gates and carried as state). A traced cell's nonlinearities and state
    update then run as one loop nest per gate group instead of one per op,
    their values in registers.
    Elementwise arith on tensors (a derived backward's sums of gradients)
    becomes generics first, so that it fuses too; and a zero fill whose
    every element the `tensor.insert_slice`s into it overwrite (a gradient
    assembled from its gates') is dropped for the empty tensor it filled.

    A layer norm as a cell traces it comes out as few row ops too: a row's
    statistic kept as `[B, 1]` (`mean(keepdim=True)`) becomes the `[B]` it
    is, its reshapes gone (linalg's unit-extent folding); a slice that takes
    all of a value (a per-row statistic under a slice of gate columns) is the
    value; and each reduction starts from a fill of its own (CSE merges a
    traced cell's zero fills, and bufferization would copy a shared one per
    reduction). The row chain that `recur-hoist-input-projection` took out
    of a cell, the recurrence's input computed rowwise from its product, is
    rewritten the same way.

    ```mlir
    %s = linalg.generic {add} ins(%gi, %gh) ...             // [B, 4H]
    %i = tensor.extract_slice %s[0, 0] [%b, H] [1, 1]
    %si = linalg.generic {sigmoid} ins(%i) ...
    // becomes
    %si = linalg.generic {add; sigmoid} ins(%gi[0:H], %gh[0:H]) ...
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseLSTMCell : Pass<"recur-fuse-lstm-cell"> {
  let summary = "Fuse each step's recurrent GEMM with the LSTM cell's pointwise tail";
  let description = [{
    Marks every `recur.lstm_recurrence` without a projection `cell<fused>`:
    the lowering then
    computes, for each (batch row, hidden unit), the four gate sums
    `input_gates[t] + h_{t-1} · w_hhᵀ` of gates i, f, g and o in registers
    and consumes them at once in the cell update. The `[B, 4H]` gate tensor
    is never stored or re-read, and one loop nest per step replaces a
    contraction and a pointwise pass.

    The step reads `w_hh` gate-interleaved (`recur.interleave_gates`, tile
    `K` = the largest power of two up to `gate-tile` that divides H), so the
    four gate rows of a tile of hidden units are one contiguous block. The
    interleaving depends on the weights only: `recur-outline-weight-prologue`
    moves it into the prologue the runtime runs once per weight binding.

    Left alone: `recur.lstm` ops (not hoisted; run
    `recur-hoist-input-projection` first), recurrences already fused,
    projected recurrences (`proj`: the projection follows the cell, so the
    step keeps the separate schedule) and,
    with `whole-tiles-only`, recurrences whose hidden size `gate-tile` does
    not divide. The CPU pipeline sets both: `gate-tile` = its vector width,
    the tile its fused-step kernel is made of; a recurrence it cannot tile
    keeps the separate schedule, whose GEMM is a vector kernel too.
  }];
  let options = [
    Option<"gateTile", "gate-tile", "int64_t", /*default=*/"16",
           "Most hidden units per interleaved tile of w_hh">,
    Option<"wholeTilesOnly", "whole-tiles-only", "bool", /*default=*/"false",
           "Fuse only recurrences whose hidden size gate-tile divides">,
  ];
}

def FuseCellStep : Pass<"recur-fuse-cell-step"> {
  let summary = "Fuse each recur.rnn cell's recurrent product with its pointwise tail: on the CPU's register tile, or as one unit-step loop nest";
  let description = [{
    The LSTM's fused step for any cell. In a `recur.rnn` cell whose product
    with a captured weight, `[B, G H]`, is read only as G column slices of
    H units (the gates) by one pointwise loop nest (what
    `recur-fuse-cell-pointwise` leaves of a GRU's, an RNN's or a peephole
    LSTM's tail), the weight's and bias's rows are gate-interleaved with a
    tile of K units (`recur.interleave_gates tile(K) gates(G)`, once per
    binding) and the tail runs over (row, H / K, K), reading gate g of unit
    qK + l at `[b, q, g, l]` of the product's `[B, H / K, G, K]` view:

    ```mlir
    %gh = recur.linear %h, %w_hh bias(%b_hh)      // [B, 3H]
    %r = tensor.extract_slice %gh[0, 0] [%b, H] [1, 1]  ... z, n
    %h_t = linalg.generic ins(%xr, %xz, %xn, %r, %z, %n, %h) ...
    // becomes
    %gh = recur.linear %h, %w_hh_interleaved bias(%b_hh_interleaved)
    %tiles = tensor.expand_shape %gh ... : [B, 3H] into [B, H/K, 3, K]
    %h_t = linalg.generic ins(%xr', %xz', %xn', %tiles, %tiles, %tiles, %h')
             maps (b, q, l) -> (b, q, l), ..., (b, q, 0, l), (b, q, 1, l), ...
    ```

    `recur-pack-weights` packs the interleaved weight in panels of G K
    rows, and on the CPU `recur-vectorize-packed-matmuls` then applies the
    tail to each register tile's accumulators: the gates are never stored.
    K is the largest multiple of `vector-width` dividing H with G K at most
    `panel-columns` (at least one vector per gate). The tail's other
    operands must be `[B, H]` rows or `[H]` columns (a peephole's weights).
    A cell left alone gets a remark saying why.

    With `vector-width=0` (a target without the CPU's register tile) and
    `unit-steps` (the GPU pipelines), the product and its tail become
    instead one loop nest over the tail's (b, j), marked
    `#recur.unit_step<..., gates = G>`: each iteration sums its unit's G
    gates over k in registers, from the weight's rows g H + j (and the
    bias), then runs the tail's body, as the LSTM's fused step does;
    `recur-gpu-stationary-weights` then gives blocks groups of units with
    their weights on chip. With `vector-width=0` alone every cell is left
    alone, with a remark.

    A product whose gates are reduced over their row (a layer norm over the
    gates), which no register tile holds whole, is left alone on the CPU
    without a remark when everything the cell computes from it is rowwise:
    `recur-vectorize-elementwise` runs that tail as one loop over the rows
    after the product, each row's reductions inside it, and remarks where a
    row op cannot join. With `unit-steps`, such a product alone becomes a
    unit step of one-gate units that writes the sums, so that its weight
    stays on chip; its tail runs apart (a remark says so: its rows span the
    blocks that own the units).

    ```mlir
    %h_t = linalg.generic ins(%xr, %xz, %xn, %h) outs(%e) {
      %r0 = tensor.extract %b_hh[%j] ...
      %r, %z, %n = scf.for %k ... iter_args(%r0, %z0, %n0)  // Σ h[b, k] w[g H + j, k]
      ... the tail's body on %r, %z, %n ...
    } {recur.unit_step = #recur.unit_step<batch = 0, unit = 1, hidden = [H],
                                          gate_tiles = [0], gates = 3>}
    ```
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "The CPU's f32 lanes per vector: K is a multiple of it (0: no "
           "register tile)">,
    Option<"panelColumns", "panel-columns", "int64_t", /*default=*/"64",
           "The GEMM register tile's columns: G K at most this, or G vectors">,
    Option<"unitSteps", "unit-steps", "bool", /*default=*/"false",
           "Without a register tile (vector-width=0): fuse each cell's step "
           "into one recur.unit_step loop nest (the GPU's form) rather than "
           "leave it, with a remark">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def Wavefront : Pass<"recur-wavefront"> {
  let summary = "Run each stack of recurrences as one wavefront of diagonal steps";
  let description = [{
    In a stack, layer l's step t depends on layer l-1's step t and on its
    own step t-1 only. Consecutive recurrences in which one layer's output
    sequence feeds, through its input projection and nothing else, the next
    layer's recurrence

    ```mlir
    %y0, %h0, %c0 = recur.lstm_recurrence %gates0, %w_hh0 ...
    %gates1 = recur.linear %y0, %w_ih1 bias(%b1)
    %y1, %h1, %c1 = recur.lstm_recurrence %gates1, %w_hh1 ...
    ```

    become one `recur.lstm_wavefront`: T+L-1 diagonal steps in which layer
    l computes its step s - l, with its input projection inside the step
    (layer l-1's hidden state of that step is at hand; the `[T, B, 4H]`
    input gates and the `[T, B, H]` output of the inner layers are never
    stored). The steps of a diagonal are independent of each other.

    Fused recurrences stay fused: the input weight and bias of layers ≥ 1
    are gate interleaved (`recur.interleave_gates`) with the layer's tile,
    like its `w_hh`.

    Stacked `recur.rnn` layers (any cell: GRU, Elman, cells traced from
    PyTorch) become one `recur.rnn_wavefront` in the same way: layer l's
    output feeds the next layer, directly or through its hoisted input
    projection and nothing else. The cells move into the wavefront as they
    are; a hoisted projection goes back into its layer's cell, as the
    product of the layer before's `y_t` with a captured weight (and bias),
    so that the `[T, B, N]` projection of the inner layers is never stored;
    so does the row chain after it (what `recur-hoist-input-projection`
    took out of the cell: a layer norm of the projection, rowwise on its
    `T·B` rows), on the product's rows, with the tensors it reads (a layer
    norm's scale) captured after the projection's weight and bias.
    With `unit-steps` (the GPU pipelines, whose `recur-fuse-cell-step`
    makes each cell one `recur.unit_step`) a stack joins only layers whose
    cells are each one unit step of the same hidden size, gates, yields and
    state types, without lengths or a row chain between them, so that the
    conversion runs each diagonal as one unit step over every layer's
    units (one phase of the persistent kernel, as the LSTM's fused
    wavefront), layer l's input product summed in the step; other stacks
    get a remark.

    Left alone: a single recurrence; a layer whose output is also used
    elsewhere, or whose projection has no bias; a layer that runs in
    `reverse` or projects its hidden state (`proj`); and neighbours that differ in their cell schedule, in having
    initial states, or whose states are used before the stack ends.

    With `max-layers` N, a stack of more layers is cut into wavefronts of N
    (the next layer starts the next one): on the GPU each wavefront is one
    persistent kernel whose parameters (each layer's weights, as memref
    descriptors) must fit the 4 KB that PTX allows.
  }];
  let options = [
    Option<"maxLayers", "max-layers", "int64_t", /*default=*/"0",
           "Most layers in one wavefront (0: no limit)">,
    Option<"unitSteps", "unit-steps", "bool", /*default=*/"false",
           "Stack recur.rnn layers only where every cell is one unit step "
           "of one shape (the GPU's fused wavefront; a remark on the rest)">,
  ];
}

def PackWeights : Pass<"recur-pack-weights"> {
  let summary = "Pack the weights of recur.linear into panels for a register-tiled GEMM";
  let description = [{
    Gives every `recur.linear`, and every `recur.lstm_recurrence` with the
    separate cell schedule (whose per-step recurrent GEMM is a GEMM like any
    other), whose weight is a model weight (a `recur.weight` argument) that
    weight packed by `recur.pack_panels` (not the `w_hh` of a projected
    recurrence: its recurrent GEMM has P columns, not H, and reads PyTorch's
    layout):
    `[ceil(N / tile), K, tile]`, so that a register tile of `tile` output
    columns reads one contiguous run of `tile` weights per step of its K
    loop. `recur-outline-weight-prologue`, which runs after it, moves the
    packing into the prologue: it runs once per weight binding.

    In a `recur.rnn` cell, a `recur.linear` whose weight is a captured model
    weight that only products read gets the capture packed, and the cell's
    argument takes the packed type; otherwise a missed remark says why.

    With `gate-tile` = K, the interleaved `w_hh` of every fused recurrence
    with `interleaved(K)` is packed too, in panels of `4K` rows: each panel
    holds the four gates of K hidden units, the register tile of the fused
    step (`recur-vectorize-packed-matmuls` applies the cell to it).

    A model weight is a `recur.weight` argument or its extension to f32
    (`arith.extf`, recur-compute-in-f32's, in a bf16 model).

    With `bf16-pairs` (the CPU's `precision=bf16`), each f32 weight whose
    depth K is even is rounded to bf16 (taken from the bf16 model weight it
    extends, where it does: no rounding then) and packed in pairs of k
    (`recur.pack_panels ... pairs`), so that the op's products are of bf16
    operands (AVX512-BF16 dot products); an odd K keeps f32 panels.

    The CPU pipeline runs it with `tile` = the columns of its GEMM register
    tile and `gate-tile` = its vector width, which depend on the target
    (`recur-compile --cpu`). Zero leaves the weights concerned as they are.
  }];
  let options = [
    Option<"tile", "tile", "int64_t", /*default=*/"0",
           "Rows per panel (0: pack no recur.linear or separate w_hh)">,
    Option<"gateTile", "gate-tile", "int64_t", /*default=*/"0",
           "Pack the w_hh of fused recurrences interleaved with this tile, "
           "in panels of 4 x gate-tile rows (0: none)">,
    Option<"bf16Pairs", "bf16-pairs", "bool", /*default=*/"false",
           "Pack f32 weights with an even K as bf16 pairs of k (bf16 "
           "products)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def OutlineWeightPrologue : Pass<"recur-outline-weight-prologue",
                                 "::mlir::ModuleOp"> {
  let summary = "Move what a model computes from its weights alone into a prologue";
  let description = [{
    Work that reads nothing but weights and constants gives the same result
    in every run: the sum of an LSTM's two biases after
    `recur-hoist-input-projection`, the gate-interleaved `w_hh` of
    `recur-fuse-lstm-cell`. In every function with `recur.weight` arguments,
    such ops move into a new function `@<name>_prepare` that takes the
    weights they read and returns the tensors the rest of the function
    uses. Those become arguments of the function, named by
    `recur.derived = "interleave_gates(weight_hh_l0)"` (what was computed
    from which weights); the function's `recur.prologue` attribute names the
    prologue. The runtime runs the prologue once per weight binding and
    passes its results to every run; users still bind PyTorch's tensors.

    Ops with regions or side effects stay, and so does a function whose
    weights are only read by the rest of its computation. A training step
    (`recur.train`) keeps everything: it updates its weights at every run,
    so what they determine is computed again in each step.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // RECUR_TRANSFORMS_PASSES_TD
