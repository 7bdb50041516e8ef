//===- GpuPasses.td - GPU code generation passes --------------------------===//

#ifndef RECUR_CODEGEN_GPUPASSES_TD
#define RECUR_CODEGEN_GPUPASSES_TD

include "mlir/Pass/PassBase.td"

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
    schedule of a persistent RNN kernel, as its `#recur.stationary_step<precision,
    units = U, block_size, max_lanes>` (set by `recur-gpu-kernel-config`)
    says:

    - a loop over groups of U hidden units of one layer, mapped to blocks
      (L * H / U groups);
    - in it, a loop over the block's `block_size` threads; the group's (unit, batch
      row) iterations, the batch row fastest (so that a warp reads one
      weight element at a time), are shared out among them, each run by
      `lanes` consecutive threads: the most, a power of two up to
      `max_lanes` (32, a warp), that leaves no thread without an iteration,
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

    The slot is a `memref.alloc` in workgroup memory at the
    function's entry, which `recur-gpu-workgroup-attributions` turns into an
    attribution of the kernel. The loops carry their GPU mapping, which
    `recur-gpu-tile-parallel-loops` and `gpu-map-parallel-loops` keep.

    With `precision = tf32` or `bf16` the step's products run on tensor
    cores; each is a sum over K of `a[..., k] * w[row, k]` (an
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
    A step without the attribute is left alone (it reads its weights from
    L2); one whose config does not match it is an error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GpuRowGroups : Pass<"recur-gpu-row-groups", "::mlir::func::FuncOp"> {
  let summary = "Run each group of row ops as a block of threads per row";
  let description = [{
    A traced cell's layer norm is a handful of row ops (a sum over the
    row, a scale, the squared deviations, their sum, the normalization),
    and a cell's tail several more. Mapped like any loop nest, each is a
    kernel of its own, in a time loop one phase of the persistent kernel
    ending in a grid barrier; a reduction gives each row to one thread,
    a chain of dependent ops as long as the row while the rest of the
    grid waits. Here the row ops marked `#recur.gpu_row_group<block_size>`
    (by `recur-gpu-kernel-config`) are grouped as the CPU's
    `recur-vectorize-elementwise` groups them (consecutive ones whose
    operands are read at their own row; a reduction's initializing
    `linalg.fill` folded into it), and each group becomes:

    - a loop over the group's rows, mapped to blocks (in a persistent
      kernel, a grid-stride loop over them);
    - in it, a loop over the block's `block_size` threads that runs the
      members in order, a `gpu.barrier` after each: an elementwise member
      gives thread t the elements t, t + block_size, ... of the row; a
      member on per-row values (`row-scalar`) runs on thread 0; a
      reduction's thread t combines those elements' terms, a butterfly of
      `gpu.shuffle xor` combines each warp's, the warps' results meet in a
      shared-memory buffer between two barriers and a second butterfly
      combines them, and thread 0 writes the row's result.

    The shared-memory buffer (a float per warp and reduction) is a
    `memref.alloc` in workgroup memory at the function's entry, which
    `recur-gpu-workgroup-attributions` turns into an attribution of the
    kernel. The loops carry their GPU mapping, which the later passes
    keep. Runs on buffers, before `convert-linalg-to-parallel-loops`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
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

def GpuKernelConfig : Pass<"recur-gpu-kernel-config", "::mlir::func::FuncOp"> {
  let summary = "Choose each GEMM's and fused step's GPU kernel and attach it as a lowering config";
  let description = [{
    The GPU's decisions, made in one place from the target's options and
    the ops, in the style of IREE's `KernelConfig`: the lowering passes
    read the attributes and decide nothing.

    - Each GEMM outside a time loop (as `recur-gpu-tiled-gemms` takes them:
      `c[m..., n...] += a[m..., k] * b[n..., k]` on f32 buffers) gets a
      `#recur.gpu_gemm`: SIMT tiles at `precision=fp32`, tensor-core warp
      tiles at `tf32` or `bf16`. A GEMM inside a time loop is part of the
      step, which `recur-gpu-persistent-kernels` runs.
    - Each fused step (`recur.unit_step`) whose weights are function
      arguments gets a `#recur.stationary_step`: U, the largest power of two
      up to `max-units` that divides every layer's gate tile and whose
      shared-memory slot (and, on tensor cores, buffer of sums) fits in
      `shared-memory-bytes`. At `tf32` or `bf16` the products take the
      tensor cores where each is a sum over K in whole tiles of 16 and U is
      a multiple of 4; otherwise SIMT FMAs.

    - Each row op (an elementwise op or a reduction along the last
      dimension, as the CPU's `recur-vectorize-elementwise` takes them) of
      a group of such ops that share rows and hold a reduction of at least
      32 terms (a warp's worth) or of a run-time length gets a
      `#recur.gpu_row_group` of `block-size` threads; other row ops keep a
      thread per element (or per row, for a short reduction), as fast.

    Every op left without a config, or with SIMT where tensor cores were
    asked for, gets a missed remark saying why. Runs on buffers, before
    `recur-gpu-tiled-gemms`.
  }];
  let options = [
    Option<"precision", "precision", "::mlir::recur::Precision",
           /*default=*/"::mlir::recur::Precision::fp32",
           "The products' precision: fp32 (SIMT FMAs), tf32 or bf16 (tensor "
           "cores: operands rounded, sums in f32)", "RECUR_PRECISION_VALUES">,
    Option<"tiledGemms", "tiled-gemms", "bool", /*default=*/"true",
           "Give GEMMs outside time loops a tiled kernel (otherwise a "
           "thread per output)">,
    Option<"stationaryWeights", "stationary-weights", "bool",
           /*default=*/"true",
           "Give fused steps blocks that keep their weights in shared memory "
           "(otherwise read from L2 at every step)">,
    Option<"rowGroups", "row-groups", "bool", /*default=*/"true",
           "Give groups of row ops with a reduction a block of threads per "
           "row (otherwise a thread per element or row)">,
    Option<"tileM", "tile-m", "int64_t", /*default=*/"128",
           "GEMMs: output rows per block">,
    Option<"tileN", "tile-n", "int64_t", /*default=*/"128",
           "GEMMs: output columns per block">,
    Option<"tileK", "tile-k", "int64_t", /*default=*/"8",
           "GEMMs, fp32: the k-slice staged in shared memory per iteration">,
    Option<"threadTileM", "thread-tile-m", "int64_t", /*default=*/"8",
           "GEMMs, fp32: output rows per thread">,
    Option<"threadTileN", "thread-tile-n", "int64_t", /*default=*/"8",
           "GEMMs, fp32: output columns per thread">,
    Option<"mmaTileK", "mma-tile-k", "int64_t", /*default=*/"16",
           "GEMMs, tf32/bf16: the k-slice staged in shared memory per "
           "iteration">,
    Option<"warpTileM", "warp-tile-m", "int64_t", /*default=*/"64",
           "GEMMs, tf32/bf16: output rows per warp (a multiple of 16)">,
    Option<"warpTileN", "warp-tile-n", "int64_t", /*default=*/"32",
           "GEMMs, tf32/bf16: output columns per warp (a multiple of 8)">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Fused steps and row groups: threads per block">,
    Option<"maxUnits", "max-units", "int64_t", /*default=*/"8",
           "Fused steps: most hidden units per block (on tensor cores at "
           "least the units whose gate rows fill 3/4 of an MMA tile: 16 for "
           "a one-gate RNN)">,
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t",
           /*default=*/"49152",
           "Fused steps: most shared memory for a block's weights (48 KiB: "
           "the static limit)">,
    Option<"maxLanes", "max-lanes", "int64_t", /*default=*/"32",
           "Fused steps: most threads that share one iteration's sums over "
           "K (1: none)">,
  ];
  // The sizes of the shared-memory buffers it fits are workgroup memrefs.
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::recur::RecurDialect"];
}

def GpuTiledGemms : Pass<"recur-gpu-tiled-gemms", "::mlir::func::FuncOp"> {
  let summary = "Run each GEMM outside a time loop as a shared-memory, register-tiled kernel";
  let description = [{
    Mapped like any loop nest, a GEMM gets one thread per output element,
    whose reduction loop reads both operands from global memory and
    accumulates in the output. Here each f32 `linalg.generic` on buffers that
    computes `c[m..., n...] += a[m..., k] * b[n..., k]` (a contraction without
    batch dimensions; m and n any number of loop dimensions, k innermost in
    both operands: the input projections and the vocabulary projection) and
    carries a `#recur.gpu_gemm<precision, tile = [M, N, K], ...>` (set by
    `recur-gpu-kernel-config`) becomes a `gpu.launch`. With `precision =
    fp32` it is of the classic SIMT form:

    - block (x, y) computes the M x N tile of output rows x * M and columns
      y * N;
    - k advances by slices of K: each thread loads 1, 2 or 4
      consecutive k of one row of each operand's slice (one vector load where
      the layout, K and the buffer's ownership guarantee alignment; zeros past
      K), stores them transposed into shared memory, `[k][row]`, and, after a
      `gpu.barrier`, loads its part of the next slice while it multiplies the
      current one;
    - each thread keeps `thread_tile[0]` vectors of `thread_tile[1]`
      accumulators in registers and reads both fragments of each k from
      shared memory as vectors (`vector.fma` on broadcasts);
    - at the end, each thread adds its sums to the output elements inside
      the bounds: c is read and written once.

    With `precision = tf32` or `bf16` the kernel uses the tensor cores
    (`nvgpu.mma.sync`; PyTorch's `allow_tf32`, or a bf16 model's GEMMs):

    - the block's M x N tile is split among warps, each computing a
      `warp_tile` of outputs as 16 x 8 tiles, with f32 accumulators in
      registers (the PTX fragment layout);
    - k advances by slices of K; each thread loads parts of up to
      4 consecutive k as above, rounds them to the operands' type (tf32: to
      nearest, ties away, as `cvt.rna.tf32.f32`; bf16: to nearest even) and
      stores them row-major, `[row][k]`, with rows padded by 16 bytes so
      that a warp's fragment loads hit 32 different banks;
    - for each k-step of the slice (8 for tf32, 16 for bf16) each warp
      loads its fragments, 32 bits per register, and issues one
      `nvgpu.mma.sync` (`m16n8k8` tf32, `m16n8k16` bf16) per 16 x 8 tile;
    - the sums are added to c as in the SIMT kernel.

    A GEMM the config does not match is an error. Runs before the loop nests
    are converted to parallel loops.
  }];
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


#endif // RECUR_CODEGEN_GPUPASSES_TD
