//===- CpuPasses.td - CPU code generation passes --------------------------===//

#ifndef RECUR_CODEGEN_CPUPASSES_TD
#define RECUR_CODEGEN_CPUPASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// CPU (recur-lower-loops-to-llvm)
//===----------------------------------------------------------------------===//

def OutlineParallelLoops : Pass<"recur-outline-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Move every outermost parallel region into a function of its own";
  let description = [{
    The OpenMP translation to LLVM IR outlines each `omp.parallel` region
    with LLVM's CodeExtractor, which analyses the whole enclosing function
    every time. A deep stack (one time loop per layer, a few parallel loops
    in each) made that quadratic in the number of layers: 100 layers took
    23 s to compile. Each outermost parallel loop becomes a private function
    called in its place (values from above are arguments; constants are
    cloned, so bounds stay static), internal and never inlined (LLVM's
    optimizer and code generator are superlinear in a function's size too),
    and compile time grows linearly with depth. The regions are the
    outermost `scf.parallel` loops and the `omp.parallel` teams that
    `recur-persistent-parallel-loops` put around time loops. Loops that
    differ only in the values they use (a stack's layers of one shape) call
    one function: it is lowered and compiled once, and the passes after this
    one (`recur-approximate-math`, the LLVM conversions, LLVM's optimizer and
    code generator) do a layer's work once for the whole stack (a 200-layer
    stack compiled in 283 s, now 39 s).

    ```mlir
    // before                           // after
    scf.for %t = ... {                  scf.for %t = ... {
      scf.parallel (%i) = ... {           func.call @forward_parallel(%buf)
        ...                             }
      }                                 func.func private @forward_parallel(...)
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def PersistentParallelLoops : Pass<"recur-persistent-parallel-loops"> {
  let summary = "Run each serial loop of parallel loops in one OpenMP team";
  let description = [{
    Upstream's `convert-scf-to-openmp` makes every `scf.parallel` an
    `omp.parallel` of its own: a time loop forks and joins the thread team at
    every step, twice for a step split in two. Here a serial loop whose body
    holds parallel loops and otherwise only computes values (index
    arithmetic, subviews, `scf.if`/`scf.for` around such ops) is wrapped in
    one `omp.parallel`: every thread runs the serial loop, and each outermost
    parallel loop in it becomes an `omp.wsloop`, whose implicit barrier is
    the step's one synchronization. The worksharing loop's default schedule
    is static, so a thread gets the same share of a step's iterations (e.g.
    the same weight panels) at every step: its slice of W_hh stays in its
    cache across the whole sequence.

    A loop is left alone when anything outside its parallel loops reads or
    writes memory or calls a function (every thread would run it, racing
    with the others' worksharing loops), when it has results, or when a
    parallel loop has reductions or stack allocations. The outermost
    qualifying loop is taken; the pass runs on the CPU pipeline with
    `openmp=true`, before `recur-outline-parallel-loops`.

    ```mlir
    // before                           // after
    scf.for %t = ... {                  omp.parallel {
      scf.parallel (%i) = ... {           scf.for %t = ... {
        ...                                 omp.wsloop {
      }                                       omp.loop_nest (%i) : index = ... {
    }                                           ...
                                              }
                                            }
                                          }
                                          omp.terminator
                                        }
    ```
  }];
  let dependentDialects = ["::mlir::omp::OpenMPDialect"];
}

def PackGemmOperands : Pass<"recur-pack-gemm-operands",
                             "::mlir::func::FuncOp"> {
  let summary = "Put a training step's backward GEMMs in the forms of the CPU GEMM kernels";
  let description = [{
    Runs on tensors, before bufferization, in the CPU pipeline (fusion
    levels above `none`). The backward of a training step multiplies by
    weights that change at every run and reduces over the rows of every
    step, in three contraction forms:

    ```
    C[d..., n] += A[d..., k] * W[n, k]     // x · wᵀ with an unpacked weight
    C[d..., k] += A[d..., n] * W[n, k]     // input gradients: d · w
    C[n, k]    += A[d..., n] * X[d..., k]  // weight gradients: dᵀ · x
    ```

    `recur-vectorize-packed-matmuls` reads its second operand in panels of
    `t` = `tile` columns (the register tile's), either packed, `P[c floordiv
    t, r, c mod t]`, or in place from a `[r, c]` matrix, whose panel rows are
    pieces of its rows. So:
    - x · wᵀ becomes `C[..., c] += A[..., r] * P[c floordiv t, r, c mod
      t]` with W packed into panels of its rows (zero past the edge) by a
      `linalg.generic`, outside the loops it is invariant in;
    - d · w is already in the in-place form (the reverse time loop's
      `dgates_t · w_hh` reads w_hh as it is) and is left alone;
    - dᵀ · x has its rows collapsed into one dimension and becomes `C[n, c]
      += A'[r, n] * X'[r, c]`: the kernel reads A' transposed in place (a
      tile's rows of C are consecutive elements of a row of A') and X' in
      place. Nothing is copied: a transposed copy and packs of the
      activations had cost 18% of the reference LM's training step.

    Weights must have static shapes; the rows (T x B) may be dynamic.

    Each contraction in the kernels' form gets a `#recur.panel_gemm` with
    its layout (`packed` or `in_place`) and `tile`: that, not the loop
    nest's shape, is what `recur-vectorize-packed-matmuls` takes. With
    `pack=false` (`--fusion=none`, which packs nothing) only the
    contractions already in that form (d · w, and dᵀ · x over one leading
    dimension) get one.
  }];
  let options = [
    Option<"tile", "tile", "int64_t", /*default=*/"64",
           "Panel width: the CPU register tile's columns">,
    Option<"pack", "pack", "bool", /*default=*/"true",
           "Rewrite x · wᵀ and dᵀ · x into the kernels' form (false: only "
           "mark the contractions already in it)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::recur::RecurDialect",
                           "::mlir::tensor::TensorDialect"];
}

def VectorizePackedMatmuls : Pass<"recur-vectorize-packed-matmuls"> {
  let summary = "Register-tiled, vectorized CPU kernels for the GEMMs of packed weights";
  let description = [{
    Replaces each bufferized contraction that reads a weight packed by
    `recur.pack_panels` (the lowering of `recur.linear` after
    `recur-pack-weights`):

    ```
    C[d..., n] += A[d..., k] * W[n floordiv t, k, n mod t]
    C[m, n]    += A[k, m]      * W[n floordiv t, k, n mod t]  // A transposed
    C[d..., n] += A[d..., k] * W[k, n]                        // W in place
    ```

    with a kernel built from vector ops. The second form is the weight
    gradient of `recur-pack-gemm-operands`: A read in place, each step's
    broadcast elements of a tile's rows consecutive in memory. In the third,
    W is not packed: the panels of t columns (the register tile's, from
    `vector-width` and `vector-registers`) are read from W's rows in place,
    masked at the edge of N. The leading dimensions of A and C
    are one row index m. A parallel loop runs over blocks of rows (sized so
    that a block of A stays in the core's L2 cache) and panels of `t`
    columns. In each block, a register tile of `rows` x `t` outputs, `t` /
    `vector-width` vectors per row (`rows`: as many as the accumulators fit
    in `vector-registers`, up to 6), starts from what C was set to right
    before (a broadcast bias, a copy into a freshly allocated C: the
    separate LSTM step's gates, or the fused step's transpose of its input
    gates; that write is then left out) or from C, and stays in registers
    for the whole K loop. There each step loads one row
    of the panel (contiguous in the packed layout), broadcasts one element
    of A per row, and issues `rows` x `t` / `vector-width` `vector.fma`.
    The tile is stored once, masked at the edge of N; the rows left over at
    the end of a block (fewer than `rows`) take one tile of their own height
    (an `scf.index_switch` over the heights).

    A deep product, whose panel (K x t) holds more than `block-floats` or
    whose K is dynamic (the gradients' K = T x B, the vocabulary's 10001),
    would have every tile
    stream its panel over all of K from memory, since the panel no longer
    stays in cache for the next tile. There K runs in chunks of 256: a
    parallel loop over blocks of 8 tiles of rows, in each, for each chunk,
    for each panel, the block's tiles accumulate the chunk into C (the first
    chunk from what C was set to, the others from C). A panel's chunk is
    then read from cache by all tiles of the block, and the block's rows of
    A for the chunk stay in cache across the panels. With fewer than 16
    blocks (a GEMV) the parallel loop is over blocks and panels. A dynamic
    K (an in-place W with dynamic rows) runs its whole chunks in a loop and
    then the rest, every chunk from C; what set C stays a separate op.

    The fused LSTM step (`recur.lstm_recurrence ... cell<fused>` on a w_hh
    packed in panels of the four gates of K units) is that contraction
    between a `linalg.transpose` that puts each unit's input gates side by
    side in C and the cell, an elementwise generic that reads C as
    `[d..., H/K, 4, K]`. When every buffer the cell writes is an allocation
    no tile reads, the cell runs on the tile's accumulators (its body on
    vectors), its outputs (and a copy of h into y[t] that follows) are
    stored from there, and C, which nothing else reads, is not stored.

    bf16 products (the CPU's `precision=bf16`: A bf16 and W packed in bf16
    pairs of k, `recur.pack_panels ... pairs`, the sums f32) run the same
    kernels over pairs of k: per pair each row broadcasts its two elements
    of A as one 32-bit word and each vector of the tile takes one
    `x86vector.avx512.dot` (`vdpbf16ps`) with a panel row of 2 x
    `vector-width` bf16, with `bf16-dot`; without it, the kernel widens both
    halves of the pairs to f32 and issues two FMAs (for CPUs without
    AVX512-BF16). With `bf16-dot`, when C is an allocation of its own that
    the next op only rounds to bf16 (a bf16 model's logits), the tiles are
    rounded and stored there instead: C is never written, nor read again.

    Contractions of other shapes, and panels that are not a whole number of
    vectors, are left to the loop lowering.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector register">,
    Option<"vectorRegisters", "vector-registers", "int64_t", /*default=*/"32",
           "Vector registers of the target: the register tile has as many "
           "rows as its accumulators fit, up to 6">,
    Option<"blockFloats", "block-floats", "int64_t", /*default=*/"65536",
           "Elements of A per block of rows (the L2 share of one block)">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "bf16 products by AVX512-BF16 dot products "
           "(x86vector.avx512.dot); false: by widening to f32">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::x86vector::X86VectorDialect"];
}

def VectorizeElementwise : Pass<"recur-vectorize-elementwise"> {
  let summary = "Elementwise, row-reduction and column-sum linalg.generic ops on buffers as loops over vectors";
  let description = [{
    A `linalg.generic` on f32 buffers whose loops are all parallel but
    possibly the last, which may reduce, and whose operands are each read
    either at every loop index or once per row (the leading loops), with a
    body of elementwise arith and math ops, becomes a parallel loop over the
    rows and, along the last dimension, a loop over vectors of
    `vector-width` lanes whose body is the generic's body on vectors; the
    last, partial vector is masked. This covers the LSTM cell of the
    separate schedule and the row statistics of `log_softmax` and
    `cross_entropy`. LLVM's loop vectorizer gives up on such loops (too many
    buffers that might alias, or a reduction through memory), which left the
    cell's five transcendentals per element and the softmax's exp scalar; as
    vector ops they are also what `recur-approximate-math` expands into
    vector polynomials.

    A reduction (`out = combine(out, value)` with combine one of addf, mulf,
    maximumf, minimumf, maxnumf, minnumf) keeps one vector accumulator per
    row, started from the combiner's neutral element, masks the lanes past
    the end in the last vector, and reduces across lanes once per row onto
    the output's value; a `linalg.fill` of that output right before it (with
    nothing reading the buffer in between) becomes that starting value.

    Consecutive such generics over the same rows (each shares a buffer, in
    the same role, with an earlier one; only ops without memory effects or
    allocations in between) run in one parallel loop, one after another per
    row: the maximum, the sum of exponentials, its log and the normalization
    of a log-softmax read a row from memory once and then from cache. Every
    access is to the row's own elements, so this is the same computation,
    unless two operands are different views of a buffer that one of the
    generics writes; then they stay separate loops, and a missed remark on
    the generic that could not join says so (a cell's tail inside a time
    loop pays a loop and a barrier per step for each).

    A copy of one of an elementwise generic's outputs that follows it into a
    buffer of its own (the LSTM step's h into `y[t]`) is folded in: the loop
    writes that buffer too, which saves a pass over the output and, on the
    CPU, a parallel loop (a fork and a barrier) per step. After a group of
    several generics (a cell's tail with a layer norm) the copies that
    follow it are folded in the same way, each into an allocation of its
    own, or into one that the group reads only at the elements it writes and
    only up to the generic that writes the copy's source (the recurrence's
    carried state: each row runs the generics in order): the tail of a
    layer-norm LSTM's step, its statistics, gates, new state and the copies
    into `y[t]` and the state, is one parallel loop.

    The body may also read the loops' indices (`linalg.index`) and per-row
    i64 inputs, and compare them as integers: the cross-entropy gradient's
    one-hot, `column == target[row]`, compares a vector of the columns with
    the row's target broadcast.

    An embedding lookup (the lowering of `recur.embedding`: `out[rows..., j]
    = table[index_cast(ids[rows...]), j]`) becomes a parallel loop over the
    rows that loads each row's id once and copies the table row in vectors.

    A sum over the rows of each column, `out[n] += in[d..., n]` (a bias
    gradient), becomes a parallel loop over chunks of 8 vectors of columns;
    each chunk walks down the rows with its sums in registers, reading a
    contiguous piece of every row (the loop lowering walked a single column
    down the rows, a cache line per element). Each inner row loop sums from
    zero and adds its sums to the outer ones (blocked summation: rounding
    error that grows with T + B rather than T x B). A `linalg.fill` of the
    output right before becomes the starting value, as for reductions.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector register">,
    Option<"bf16Vectors", "bf16-vectors", "bool", /*default=*/"false",
           "Run conversions between f32 and bf16 buffers on vectors (targets "
           "with AVX512-BF16; elsewhere LLVM may lower bf16 vectors through "
           "libgcc's __truncsfbf2, which Debian 12 lacks)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def ApproximateMath : Pass<"recur-approximate-math"> {
  let summary = "Replace f32 exp, log, tanh and friends by inline polynomial approximations";
  let description = [{
    Without it, every `math.exp` and `math.tanh` of the LSTM cell (five per
    hidden unit and step) and of log_softmax becomes a call into libm: a
    function call per element that LLVM can neither inline nor vectorize.
    The math dialect's polynomial approximations (f32; accurate to a few
    ulp, within the numerics suite's 1e-4) replace them with arithmetic that
    LLVM schedules with the rest of the loop and vectorizes where the loop
    vectorizes. Applies to exp, expm1, log, log1p, log2, tanh, erf, erfc,
    sin, cos, atan, atan2, asin, acos and cbrt on f32 scalars and vectors.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def ExpandBf16Conversions : Pass<"recur-expand-bf16-conversions"> {
  let summary = "Expand arith.extf/truncf between f32 and bf16 into integer arithmetic";
  let description = [{
    LLVM lowers an f32 -> bf16 `fptrunc` to a call to `__truncsfbf2` on CPUs
    without AVX512-BF16. That libgcc function is missing from GCC 12's
    libgcc (Debian 12), so a bf16 model compiled for such a CPU would fail
    to load. Upstream's bf16 expansion (`arith-expand{include-bf16}`, without
    the rest of that pass) rewrites each `arith.truncf` to bf16 as integer
    arithmetic that rounds to nearest even and keeps NaNs, and each
    `arith.extf` from bf16 as a shift, on scalars and vectors. Only the
    outputs of a bf16 model (and the CUDA emulator's tensor-core operands)
    are rounded, so the cost is small on every CPU.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}


#endif // RECUR_CODEGEN_CPUPASSES_TD
