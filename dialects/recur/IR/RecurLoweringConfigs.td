//===- RecurLoweringConfigs.td - decisions code generation reads ----------===//
//
// What the conversion (or a config pass) decides about a loop nest it emits,
// attached to it as a typed attribute, so that code generation reads the
// decision instead of recognising the loop nest's shape. The dialect
// verifies each where it is attached.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_IR_RECURLOWERINGCONFIGS_TD
#define RECUR_IR_RECURLOWERINGCONFIGS_TD

include "recur/IR/RecurBase.td"

def Recur_PanelLayout : I32EnumAttr<"PanelLayout",
    "how a panel GEMM's weight holds its panels", [
      I32EnumAttrCase<"packed", 0>,
      I32EnumAttrCase<"pairs", 1>,
      I32EnumAttrCase<"in_place", 2>]> {
  let cppNamespace = "::mlir::recur";
  let genSpecializedAttr = 0;
}

def Recur_Precision : I32EnumAttr<"Precision",
    "what a model's products multiply in (sums are f32 in every mode)", [
      I32EnumAttrCase<"fp32", 0>,
      I32EnumAttrCase<"tf32", 1>,
      I32EnumAttrCase<"bf16", 2>]> {
  let cppNamespace = "::mlir::recur";
  let genSpecializedAttr = 0;
}

def Recur_UnitStepAttr : AttrDef<Recur_Dialect, "UnitStep"> {
  let mnemonic = "unit_step";
  let summary = "a fused step: one iteration per batch row, hidden unit and layer";
  let description = [{
    On the `linalg.generic` of a fused step (`recur.lstm_recurrence` or
    `recur.lstm_wavefront` with `cell<fused>`, or a `recur.rnn` cell's
    product and tail as `recur-fuse-cell-step` fuses them for a target
    without the CPU's register tile), as `recur.unit_step`: its iterations
    are (batch row, hidden unit[, layer]), each summing the `gates` gates of
    its unit in registers (4 for an LSTM, the default; 3 for a GRU) and
    applying the cell. `batch`, `unit` and `layer` (wavefronts only) name
    those iteration dimensions; `hidden` gives every layer's H;
    `gate_tiles` the tile each layer's weights are gate interleaved with
    (0: PyTorch's layout, gate g of unit j at row g * H + j).
    `recur-gpu-stationary-weights` schedules such a step as blocks that own
    groups of units with their weights on chip.

    ```mlir
    #recur.unit_step<batch = 0, unit = 1, layer = 2, hidden = [8, 8],
                     gate_tiles = [0, 0]>
    #recur.unit_step<batch = 0, unit = 1, hidden = [16], gate_tiles = [0],
                     gates = 3>
    ```
  }];
  let parameters = (ins "int64_t":$batch, "int64_t":$unit,
                        OptionalParameter<"std::optional<int64_t>">:$layer,
                        ArrayRefParameter<"int64_t">:$hidden,
                        ArrayRefParameter<"int64_t">:$gateTiles,
                        DefaultValuedParameter<"int64_t", "4">:$gates);
  let assemblyFormat = [{
    `<` `batch` `=` $batch `,` `unit` `=` $unit `,` (`layer` `=` $layer^ `,`)?
    `hidden` `=` `[` $hidden `]` `,` `gate_tiles` `=` `[` $gateTiles `]`
    (`,` `gates` `=` $gates^)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumLayers() const { return getHidden().size(); }
    /// Rows between gate g and gate g + 1 of one unit in layer `layer`'s
    /// weights.
    int64_t getGateStride(int64_t layer) const {
      return getGateTiles()[layer] ? getGateTiles()[layer] : getHidden()[layer];
    }
  }];
}

def Recur_PanelGemmAttr : AttrDef<Recur_Dialect, "PanelGemm"> {
  let mnemonic = "panel_gemm";
  let summary = "a GEMM over a weight in panels of columns: the CPU's register-tiled kernel";
  let description = [{
    On the `linalg.generic` of a contraction `C[..., n] += A[..., k] *
    W(n, k)` (loops `(..., n, k)`, `k` the one reduction), as
    `recur.panel_gemm`: W is read in panels of `tile` columns of C, and
    `recur-vectorize-packed-matmuls` makes it a register tile of vector FMAs
    over one panel. `layout` says how W holds a panel:

    - `packed`: `W[n floordiv tile, k, n mod tile]` (`recur.pack_panels`),
      one contiguous panel row per k;
    - `pairs`: bf16 pairs of k, `W[n floordiv tile, k floordiv 2, n mod
      tile, k mod 2]` (`recur.pack_panels ... pairs`), for bf16 products;
    - `in_place`: `W[k, n]` unpacked, its panels read in place (a training
      step's weight gradients, whose W changes every step).

    `convert-recur-to-linalg` sets it on every product with a packed weight,
    `recur-pack-gemm-operands` on the backward GEMMs it puts in this form.
    The dialect checks that W's indexing map is the layout's.

    ```mlir
    #recur.panel_gemm<tile = 64, layout = packed>
    ```
  }];
  let parameters = (ins "int64_t":$tile,
                        EnumParameter<Recur_PanelLayout>:$layout);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Recur_GpuGemmAttr : AttrDef<Recur_Dialect, "GpuGemm"> {
  let mnemonic = "gpu_gemm";
  let summary = "a GEMM outside a time loop as a GPU kernel of shared-memory tiles";
  let description = [{
    On the `linalg.generic` of a GEMM `c[m..., n...] += a[m..., k] *
    b[n..., k]` on buffers, as `recur.gpu_gemm`: `recur-gpu-tiled-gemms`
    makes it a launch of blocks that each compute a `tile[0]` x `tile[1]`
    output tile, staging k-slices of `tile[2]` k of both operands in shared
    memory. With `precision = fp32` the block's threads each keep a
    `thread_tile` of sums and multiply with SIMT FMAs; with `tf32` or `bf16`
    its warps each compute a `warp_tile` with `nvgpu.mma.sync`.
    `recur-gpu-kernel-config` chooses it.

    The attribute checks that the tiles divide and that every thread loads
    the same whole parts (1, 2 or 4 consecutive k) of each slice.

    ```mlir
    #recur.gpu_gemm<precision = fp32, tile = [128, 128, 8], thread_tile = [8, 8]>
    #recur.gpu_gemm<precision = tf32, tile = [128, 128, 16], warp_tile = [64, 32]>
    ```
  }];
  let parameters = (ins EnumParameter<Recur_Precision>:$precision,
                        ArrayRefParameter<"int64_t">:$tile,
                        OptionalArrayRefParameter<"int64_t">:$thread_tile,
                        OptionalArrayRefParameter<"int64_t">:$warp_tile);
  let assemblyFormat = [{
    `<` `precision` `=` $precision `,` `tile` `=` `[` $tile `]` `,`
    (`thread_tile` `=` `[` $thread_tile^ `]`)?
    (`warp_tile` `=` `[` $warp_tile^ `]`)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The widest part of a slice a thread loads (16 bytes of f32).
    static constexpr int64_t kMaxLoadWidth = 4;
    bool onTensorCores() const { return getPrecision() != Precision::fp32; }
    int64_t getTileM() const { return getTile()[0]; }
    int64_t getTileN() const { return getTile()[1]; }
    int64_t getTileK() const { return getTile()[2]; }
    /// A block's threads: one per thread tile, or 32 per warp tile.
    static int64_t threads(ArrayRef<int64_t> tile,
                           ArrayRef<int64_t> threadTile,
                           ArrayRef<int64_t> warpTile);
    int64_t threads() const {
      return threads(getTile(), getThreadTile(), getWarpTile());
    }
  }];
}

def Recur_StationaryStepAttr : AttrDef<Recur_Dialect, "StationaryStep"> {
  let mnemonic = "stationary_step";
  let summary = "a fused step on the GPU as blocks that own groups of units, their weights in shared memory";
  let description = [{
    On a fused step's `linalg.generic` (one with a `recur.unit_step`), as
    `recur.stationary_step`: `recur-gpu-stationary-weights` runs it as
    blocks of `block_size` threads that each own `units` hidden units of one
    layer, with the units' gate rows of the step's weights in shared memory.
    With `precision = fp32` the products are SIMT FMAs, up to `max_lanes`
    threads sharing one iteration's sums over K; with `tf32` or `bf16` the
    block's warps compute them with `nvgpu.mma.sync` (`units` then a
    multiple of 4: 16 slot rows, an MMA's m). `recur-gpu-kernel-config`
    chooses it, where the weights fit in shared memory.

    ```mlir
    #recur.stationary_step<precision = tf32, units = 8, block_size = 256, max_lanes = 32>
    ```
  }];
  let parameters = (ins EnumParameter<Recur_Precision>:$precision,
                        "int64_t":$units, "int64_t":$block_size,
                        "int64_t":$max_lanes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool onTensorCores() const { return getPrecision() != Precision::fp32; }
  }];
}

def Recur_GpuRowGroupAttr : AttrDef<Recur_Dialect, "GpuRowGroup"> {
  let mnemonic = "gpu_row_group";
  let summary = "a row op on the GPU as a block of threads per row, with the row ops around it that share its rows";
  let description = [{
    On a row op's `linalg.generic` (an elementwise op or a reduction along
    the last dimension, on buffers), as `recur.gpu_row_group`:
    `recur-gpu-row-groups` runs it, and the consecutive row ops so marked
    whose rows line up with it (the row groups of the CPU's
    `recur-vectorize-elementwise`), as one loop over their rows mapped to
    blocks of `block_size` threads. Each row runs the members in order, a
    `gpu.barrier` between them; a member's elements along the row are
    shared out among the threads, and a reduction's partial results are
    combined across the block. In a time loop the group is then one phase
    of the persistent kernel, not one per op (each ending in a grid
    barrier), and a long reduction is not one thread's chain of dependent
    ops. `recur-gpu-kernel-config` marks every member of a group that has
    a reduction of at least 32 terms (or of a run-time length).

    ```mlir
    #recur.gpu_row_group<block_size = 256>
    ```
  }];
  let parameters = (ins "int64_t":$block_size);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // RECUR_IR_RECURLOWERINGCONFIGS_TD
