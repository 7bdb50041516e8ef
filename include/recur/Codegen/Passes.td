//===- Passes.td - Target code generation passes -------------------------===//
//
// Passes on bufferized (linalg, scf, memref) IR that prepare it for a target:
// the CPU and the GPU pipelines in lib/Pipelines run them after
// convert-recur-to-linalg and bufferization.
//

#ifndef RECUR_CODEGEN_PASSES_TD
#define RECUR_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerCopiesToLinalg : Pass<"recur-lower-copies-to-linalg"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    Upstream lowers a `memref.copy` between non-identity layouts (e.g. storing
    `h_t` into the `t`-th slice of an LSTM's output sequence) to a call of
    `memrefCopy` from MLIR's C runner-utils library. A compiled model must not
    depend on MLIR libraries, so copies become `linalg.copy`, which lowers to
    plain (parallel) loops with everything else.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MarkWritableArguments : Pass<"recur-mark-writable-arguments",
                                 "::mlir::func::FuncOp"> {
  let summary = "Tell bufferization which model arguments it may write";
  let description = [{
    Runs right before one-shot bufferization (the first stage of
    `recur-bufferize`). Model inputs, weights and derived tensors
    (`recur.input`, `recur.weight`, `recur.derived`) belong to the caller:
    they get `bufferization.writable = false`, so bufferization copies
    rather than updates them in place. The weights a training step updates
    (named by a result's `recur.update`) are the exception: they are
    writable, so the update is written over the bound weight
    (`recur-update-weights-in-place` then checks that it was).
  }];
}

def UpdateWeightsInPlace : Pass<"recur-update-weights-in-place",
                                "::mlir::func::FuncOp"> {
  let summary = "Drop a training step's weight-update results, written in place";
  let description = [{
    Runs right after one-shot bufferization. A training step returns each
    updated weight as a result with `recur.update = "name"`; the lowering
    writes the update into the buffer of the weight argument of that name
    (`recur-mark-writable-arguments` makes those arguments writable), so each such
    result must be that very argument's buffer. The pass checks it and
    removes the result: the bound weight has changed, and no copy is made.
    An update that bufferization could not do in place is an error (it
    would be a copy per step, and the bound weight would not change).
  }];
}

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
  }];
  let options = [
    Option<"tile", "tile", "int64_t", /*default=*/"64",
           "Panel width: the CPU register tile's columns">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
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
    generics writes; then they stay separate loops.

    A copy of one of an elementwise generic's outputs that follows it into a
    buffer of its own (the LSTM step's h into `y[t]`) is folded in: the loop
    writes that buffer too, which saves a pass over the output and, on the
    CPU, a parallel loop (a fork and a barrier) per step.

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

//===----------------------------------------------------------------------===//
// GPU preparation: every loop nest becomes a kernel, every buffer lives on the
// device (recur-lower-to-cuda).
//===----------------------------------------------------------------------===//

def AddUnitParallelDims : Pass<"recur-add-unit-parallel-dims"> {
  let summary = "Give linalg.generic ops without a parallel loop a unit parallel one";
  let description = [{
    A full reduction (e.g. the mean of `recur.cross_entropy`) or a 0-d
    elementwise op has no parallel loop, so `convert-linalg-to-parallel-loops`
    leaves it as host loops that would read device memory. This pass expands
    each 0-d output into a `memref<1xT>` view and prepends a parallel loop of
    extent 1, which maps to a one-thread kernel. Runs on buffers, after
    `linalg-generalize-named-ops`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def CollapseParallelLoops : Pass<"recur-collapse-parallel-loops"> {
  let summary = "Collapse every outermost scf.parallel into one dimension";
  let description = [{
    One linear iteration space per kernel: after tiling by the block size, the
    innermost (contiguous) dimension varies fastest across the threads of a
    warp, so loads and stores of row-major buffers coalesce, and every loop
    nest gets the same block shape whatever its rank.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def GpuStationaryWeights : Pass<"recur-gpu-stationary-weights", "::mlir::func::FuncOp"> {
  let summary = "Run each fused LSTM step as blocks that own groups of hidden units, their weights in shared memory";
  let description = [{
    Mapped like any loop nest, a fused step (the `linalg.generic` that
    `convert-recur-to-linalg` marks `recur.unit_step`: one iteration per
    batch row, hidden unit and, in a wavefront, layer) gives each block 256
    consecutive iterations, which read the recurrent weights from L2 at
    every step, a row once per batch row. Here the step becomes the
    schedule of a persistent RNN kernel:

    - a loop over groups of U hidden units of one layer, mapped to blocks
      (L * H / U groups);
    - in it, a loop over the block's threads; the group's (unit, batch
      row) iterations, the batch row fastest (so that a warp reads one
      weight element at a time), are shared out among them, each run by
      `lanes` consecutive threads: the most, a power of two up to
      `max-lanes` (32, a warp), that leaves no thread without an iteration,
      so 32 at batch 1 and 1 from batch 64 at U = 4. The lanes split the
      body's sums over K (`scf.for` loops that carry f32 values each
      accumulated by one `arith.addf`, under conditions the same for the
      whole block): each takes every lanes-th term, and a butterfly of
      `gpu.shuffle xor` gives every lane the total; a loop that only seeds
      the next sum (a layer's `w_ih` then `w_hh` product) passes its partial
      sums on. The first lane stores the results. Every thread makes the
      same number of trips (those past the last iteration repeat it and
      store nothing), so that whole warps reach the shuffles;
    - first, between two `gpu.barrier`s, the block copies the four gate rows
      of its U units of every weight the step reads (the `[4H, K]` function
      arguments loaded in the body: `w_hh`, and in a wavefront `w_ih` of
      layers after the first) into a shared-memory slot of `4U` rows, and
      the body reads them from there. The copy is an `scf.if` marked
      `recur.stage_weights`: `recur-gpu-persistent-kernels` runs it once
      before the time loop when every block owns one group.

    U is the largest power of two up to `max-units` that divides every
    layer's gate tile and whose slot fits in `shared-memory-bytes`; a step
    whose weights do not fit even for one unit is left alone (it reads them
    from L2). The slot is a `memref.alloc` in workgroup memory at the
    function's entry, which `recur-gpu-workgroup-attributions` turns into an
    attribution of the kernel. The loops carry their GPU mapping, which
    `recur-gpu-tile-parallel-loops` and `gpu-map-parallel-loops` keep.

    With `precision=tf32` or `bf16` the step's products run on tensor
    cores, where each is a sum over K of `a[..., k] * w[row, k]` (an
    `scf.for` from 0 to a multiple of 16 whose body is the activation's
    load and, per carried sum, a weight's load, a multiply and an add;
    every weight load in such a loop) and U is a multiple of 4 (4U slot
    rows: an MMA's 16). The slot then holds the weights rounded to the
    operand type (tf32 in f32, or bf16), in rows padded for bank-conflict
    free 16- or 8-byte loads. The block takes its batch rows by chunks of 8
    per warp: per chunk, each product its layer has is computed with
    `nvgpu.mma.sync` (m16n8k8 tf32, m16n8k16 bf16; slot rows as M, batch
    rows as N, each lane loading 4 consecutive k of its rows of both
    operands per 16 k, a permutation of k that both operands share) into a
    shared-memory buffer of sums; after a barrier each thread runs one
    (unit, batch row) iteration of the chunk, each product's loop replaced
    by its initial values plus the sums; a second barrier ends the chunk.
    Steps that do not qualify keep the SIMT schedule.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
    Option<"maxUnits", "max-units", "int64_t", /*default=*/"8",
           "Most hidden units per block">,
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t",
           /*default=*/"49152",
           "Most shared memory for a block's weights (48 KiB: the static limit)">,
    Option<"maxLanes", "max-lanes", "int64_t", /*default=*/"32",
           "Most threads that share one iteration's sums over K (1: none)">,
    Option<"precision", "precision", "::mlir::recur::Precision",
           /*default=*/"::mlir::recur::Precision::fp32",
           "The products' precision: fp32 (SIMT FMAs), tf32 or bf16 (tensor "
           "cores)", "RECUR_PRECISION_VALUES">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuTileParallelLoops : Pass<"recur-gpu-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Tile each innermost scf.parallel by the block size, except loops already mapped to the GPU";
  let description = [{
    `scf-parallel-loop-tiling` with one tile size and no min/max bounds (a
    guard in the body instead), for the loops that `gpu-map-parallel-loops`
    will map: the tile loop to blocks, the loop inside to threads. Loops
    that already carry a GPU mapping (`recur-gpu-stationary-weights`' block
    and thread loops), and loops nested in them, are left as they are.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def GpuWorkgroupAttributions : Pass<"recur-gpu-workgroup-attributions", "::mlir::func::FuncOp"> {
  let summary = "Make each host-level workgroup-memory buffer a workgroup attribution of the kernels using it";
  let description = [{
    A pass before `gpu.launch` exists cannot declare a kernel's shared
    memory; it allocates it in the host function instead (`memref.alloc` in
    `#gpu.address_space<workgroup>`). Here each such buffer becomes a
    workgroup attribution of every `gpu.launch` that uses it, and the
    allocation (and any deallocation) goes. A use outside a kernel is an
    error.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GpuPersistentKernels : Pass<"recur-gpu-persistent-kernels", "::mlir::func::FuncOp"> {
  let summary = "Run each serial loop of parallel loops as one persistent kernel with a grid barrier";
  let description = [{
    Mapped one by one, a time loop of parallel loops launches a kernel per
    parallel loop per step (three per wavefront step of a fused LSTM stack).
    Here a serial loop that `recur-persistent-parallel-loops` would give an
    OpenMP team (parallel loops, and otherwise only value computations and
    `scf.for`/`scf.if` around them) becomes one `gpu.launch`: every block runs
    the serial loop; each outermost parallel loop, tiled for `block-size`
    threads, becomes a grid-stride loop over its tiles (block b takes tiles
    b, b + grid, ...; thread t runs iteration t of each); after it, a grid
    barrier generated in IR makes every block's writes visible to all:

    - the block's threads meet (`gpu.barrier`);
    - thread 0 arrives at a device-wide counter (`llvm.atomicrmw add`,
      acq_rel at device scope) and, unless it arrived last, polls a
      generation word (acquire loads) until it changes; the last to arrive
      resets the counter and increments the generation (release);
    - the block's threads meet again.

    The counters are a small buffer allocated and zeroed before the launch.
    The kernel is named `recur_persistent_<function>_<n>`: the runtime
    launches such kernels cooperatively with at most as many blocks as the
    device holds at once, so the barrier cannot deadlock. The grid asked for
    is the tile count of the largest parallel loop whose bounds are defined
    before the serial loop (after hoisting its invariant code); any smaller
    grid computes the same result.

    Runs on tiled loops (after `recur-gpu-tile-parallel-loops`), before
    `gpu-map-parallel-loops`, which maps the loops left over. Loops that do
    not qualify keep their kernel per parallel loop per step.

    ```mlir
    // before                              // after
    scf.for %t = ... {                     gpu.launch blocks(%b, ...) in (%g = %tiles, ...)
      scf.parallel (%i) = (%lb) to (%ub)              threads(%x, ...) in (%n = 256, ...) {
          step (%s) {                        scf.for %t = ... {
        scf.parallel (%j) = (0) to (256)       scf.for %i = %lb + %b * %s to %ub step %s * %g {
            step (1) {                           ... (%j = %x)
          ...                                  }
        }                                      <grid barrier>
      }                                      }
    }                                        gpu.terminator
                                           }
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block: the extent of the tiled loops' inner loop">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def GpuLibraryGemms : Pass<"recur-gpu-library-gemms", "::mlir::ModuleOp"> {
  let summary = "Run each GEMM outside a time loop as a call to cuBLASLt";
  let description = [{
    `recur-compile --gemm=cublaslt`: each f32 `linalg.generic` on buffers
    that computes `c[m..., n...] += a[m..., k] * b[n..., k]` outside a loop
    (the GEMMs `recur-gpu-tiled-gemms` would generate kernels for: the
    vocabulary projection, the prologue's input projections) becomes a host
    call to `recur_gpu_matmul` (`recur/runtime.h`), which the runtime binds
    like the `mgpu*` functions and runs with cuBLASLt on the model's stream.
    The call passes row-major matrices: each operand's row dimensions
    collapsed into one (rows, leading dimension, device address from the
    buffer's strided metadata) and `precision` as a `RecurGemmPrecision`.

    A GEMM qualifies when a's and b's row dimensions come in c's order, c
    has its m dimensions before its n dimensions, k and c's innermost
    dimension have unit stride, and each group of row dimensions is
    guaranteed collapsible (`memref.collapse_shape`'s rule). Any other GEMM
    is left to `recur-gpu-tiled-gemms`, as is every GEMM inside a loop: the
    recurrence's products stay generated code (DESIGN.md).
  }];
  let options = [
    Option<"precision", "precision", "::mlir::recur::Precision",
           /*default=*/"::mlir::recur::Precision::fp32",
           "The products' precision: fp32, tf32 or bf16 (cuBLASLt compute "
           "types 32F, 32F_FAST_TF32, 32F_FAST_16BF)", "RECUR_PRECISION_VALUES">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def GpuTiledGemms : Pass<"recur-gpu-tiled-gemms", "::mlir::func::FuncOp"> {
  let summary = "Run each GEMM outside a time loop as a shared-memory, register-tiled kernel";
  let description = [{
    Mapped like any loop nest, a GEMM gets one thread per output element,
    whose reduction loop reads both operands from global memory and
    accumulates in the output. Here each f32 `linalg.generic` on buffers that
    computes `c[m..., n...] += a[m..., k] * b[n..., k]` (a contraction without
    batch dimensions; m and n any number of loop dimensions, k innermost in
    both operands: the input projections and the vocabulary projection)
    becomes a `gpu.launch` of the classic SIMT form:

    - block (x, y) computes the `tile-m` x `tile-n` tile of output rows
      x * tile-m and columns y * tile-n;
    - k advances by slices of `tile-k`: each thread loads 1, 2 or 4
      consecutive k of one row of each operand's slice (one vector load where
      the layout, K and the buffer's ownership guarantee alignment; zeros past
      K), stores them transposed into shared memory, `[k][row]`, and, after a
      `gpu.barrier`, loads its part of the next slice while it multiplies the
      current one;
    - each thread keeps `thread-tile-m` vectors of `thread-tile-n`
      accumulators in registers and reads both fragments of each k from
      shared memory as vectors (`vector.fma` on broadcasts);
    - at the end, each thread adds its sums to the output elements inside
      the bounds: c is read and written once.

    With `precision=tf32` or `bf16` the kernel uses the tensor cores
    (`nvgpu.mma.sync`; PyTorch's `allow_tf32`, or a bf16 model's GEMMs):

    - the block's `tile-m` x `tile-n` tile is split among warps, each
      computing `warp-tile-m` x `warp-tile-n` outputs as 16 x 8 tiles, with
      f32 accumulators in registers (the PTX fragment layout);
    - k advances by slices of `mma-tile-k`; each thread loads parts of up to
      4 consecutive k as above, rounds them to the operands' type (tf32: to
      nearest, ties away, as `cvt.rna.tf32.f32`; bf16: to nearest even) and
      stores them row-major, `[row][k]`, with rows padded by 16 bytes so
      that a warp's fragment loads hit 32 different banks;
    - for each k-step of the slice (8 for tf32, 16 for bf16) each warp
      loads its fragments, 32 bits per register, and issues one
      `nvgpu.mma.sync` (`m16n8k8` tf32, `m16n8k16` bf16) per 16 x 8 tile;
    - the sums are added to c as in the SIMT kernel.

    A GEMM inside a loop is left alone: in a time loop it is part of the
    step, which `recur-gpu-persistent-kernels` runs. Runs before the loop
    nests are converted to parallel loops.
  }];
  let options = [
    Option<"tileM", "tile-m", "int64_t", /*default=*/"128",
           "Output rows per block">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"128",
           "Output columns per block">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"8",
           "The k-slice staged in shared memory per iteration">,
    Option<"threadTileM", "thread-tile-m", "int64_t", /*default=*/"8",
           "Output rows per thread">,
    Option<"threadTileN", "thread-tile-n", "int64_t", /*default=*/"8",
           "Output columns per thread">,
    Option<"precision", "precision", "::mlir::recur::Precision",
           /*default=*/"::mlir::recur::Precision::fp32",
           "The products' precision: fp32 (the SIMT kernel), tf32 or bf16 "
           "(tensor cores: operands rounded, sums in f32)", "RECUR_PRECISION_VALUES">,
    Option<"mmaTileK", "mma-tile-k", "int64_t", /*default=*/"16",
           "tf32/bf16: the k-slice staged in shared memory per iteration">,
    Option<"warpTileM", "warp-tile-m", "int64_t", /*default=*/"64",
           "tf32/bf16: output rows per warp (a multiple of 16)">,
    Option<"warpTileN", "warp-tile-n", "int64_t", /*default=*/"32",
           "tf32/bf16: output columns per warp (a multiple of 8)">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuBf16MmaToNVVM : Pass<"recur-gpu-bf16-mma-to-nvvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower bf16 nvgpu.mma.sync to nvvm.mma.sync";
  let description = [{
    LLVM 22's `convert-nvgpu-to-nvvm` rejects an `nvgpu.mma.sync` on bf16
    operands ("failed to deduce operand PTX types"), although NVVM and PTX
    have `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`. This pass,
    run before it, lowers those ops as upstream lowers f16 ones: each row
    of the A (`vector<4x2xbf16>`) and B (`vector<2x2xbf16>`) fragments is
    bitcast to one i32 register, the four f32 sums are passed and returned
    as scalars (`vector<2x2xf32>` again for the rest of the kernel). Other
    MMAs are left to upstream.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuAlignWorkgroupMemory : Pass<"recur-gpu-align-workgroup-memory", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Align every kernel's shared-memory buffers to 16 bytes";
  let description = [{
    Kernels read shared memory as 16-byte vectors (`recur-gpu-tiled-gemms`'s
    fragments), which needs 16-byte aligned buffers. A `gpu.launch` cannot
    say so: its workgroup attributions carry no attributes, and their
    outlined buffers become globals aligned to the element type. After
    `gpu-kernel-outlining`, this pass gives each `gpu.func` workgroup
    attribution without an alignment `llvm.align = 16`, which the NVVM
    lowering puts on the global.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def GpuPersistentRegisterBudget : Pass<"recur-gpu-persistent-register-budget", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Give persistent kernels an explicit register budget (.maxnreg)";
  let description = [{
    Without a budget, ptxas (-O3) holds a kernel of 256 threads to 64
    registers and spills what does not fit: the persistent LSTM kernel with
    its weights in shared memory spilled 20 bytes so. Each persistent
    kernel (`recur_persistent_*`) gets `nvvm.maxnreg` = `max-registers`;
    ptxas then uses what the kernel needs, up to that. Fewer registers let
    more blocks share a multiprocessor, which a cooperative grid needs; the
    runtime sizes the grid from the occupancy the cubin actually has.
  }];
  let options = [
    Option<"maxRegisters", "max-registers", "int64_t", /*default=*/"128",
           "Most registers per thread of a persistent kernel">,
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def GpuEmulateLaunches : Pass<"recur-gpu-emulate-launches", "::mlir::ModuleOp"> {
  let summary = "Run each gpu.launch on the CPU: a block as an OpenMP team, one thread per GPU thread";
  let description = [{
    For testing the generated kernels where there is no GPU: each
    `gpu.launch` (before outlining, on host buffers) becomes host code that
    runs the same body with real threads.

    - A block is an `omp.parallel` team of as many threads as the block has
      (1-D blocks only); the thread's number in the team gives its
      `gpu.thread_id x`, and `gpu.barrier` becomes `omp.barrier`.
    - Blocks run one after another (loops over z, y, x), each with its own
      copy of the workgroup buffers, allocated on the stack in the default
      memory space. Private buffers are allocated per thread.
    - A persistent kernel (`recur_persistent_*`, whose blocks meet at a grid
      barrier) runs its blocks at once instead: an outer team with a thread
      per block, each running its block as a nested team with its own
      workgroup buffers, with at most `max-persistent-blocks` blocks (the
      kernel computes the same result on any grid, and the runtime caps the
      grid too). A polling loop (an `scf.while` whose condition reads an
      atomic) calls `sched_yield` at each poll: the teams have many more
      threads than the CPU has cores.
    - A `gpu.shuffle` (xor only) is an exchange through a per-block buffer
      of a value per thread: each thread stores its value, and after a
      barrier loads its partner's; a second barrier keeps the buffer until
      all have read.
    - An `nvgpu.mma.sync` (m16n8k8 on tf32, m16n8k16 on bf16 or f16, f32
      sums) likewise: each thread stores its A and B fragments, and after a
      barrier computes its four sums from its warp's fragments in PTX's
      layouts (f32 fused multiply-adds in k order; a tf32 operand's low 13
      bits dropped, as the tensor cores ignore them). Shuffles and MMAs
      must be reached by every thread of the block, like a barrier.
    - `gpu.memset` becomes `linalg.fill`.

    `recur-compile --target=cuda-emulator` compiles a model this way: the
    CUDA pipeline's kernels, run by the CPU runtime.
  }];
  let options = [
    Option<"maxPersistentBlocks", "max-persistent-blocks", "int64_t",
           /*default=*/"2",
           "The most blocks a persistent kernel's emulation runs at once">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::omp::OpenMPDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuDeviceMemory : Pass<"recur-gpu-device-memory", "::mlir::func::FuncOp"> {
  let summary = "Allocate host-side buffers on the device; reject host accesses to them";
  let description = [{
    After `convert-parallel-loops-to-gpu` all computation sits in `gpu.launch`
    bodies and the host function only orchestrates. Its `memref.alloc` and
    `memref.dealloc` become `gpu.alloc` and `gpu.dealloc`, so the model's
    temporaries and outputs live in device memory (the runtime passes device
    pointers for inputs and weights too). A `memref.load`/`memref.store` left
    on the host on such a buffer would dereference a device pointer on the CPU:
    it is reported as an error instead. Kernels must not be handed host
    addresses either: a constant global a kernel reads (`memref.get_global`,
    with any views on it) is cloned into the launch, so that outlining gives
    the kernel module its own copy, and host scratch (`memref.alloca`) used
    by a kernel is an error.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // RECUR_CODEGEN_PASSES_TD
