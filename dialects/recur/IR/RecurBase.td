//===- RecurBase.td - The recur dialect, its attributes and interfaces ----===//

#ifndef RECUR_IR_RECURBASE_TD
#define RECUR_IR_RECURBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "recur/IR/RecurInterfaces.td"

def Recur_Dialect : Dialect {
  let name = "recur";
  let cppNamespace = "::mlir::recur";
  let summary = "Recurrent networks at the tensor level";
  let description = [{
    The `recur` dialect describes recurrent language models the way a PyTorch
    user writes them: an embedding lookup, LSTM layers over whole sequences, a
    linear projection, `log_softmax` and `cross_entropy`. Operations work on
    ranked tensors; the sequence length `T` and the batch `B` may be dynamic,
    weights have static shapes. Weight layouts and the LSTM gate order
    (i, f, g, o) are PyTorch's, so a `state_dict` binds unchanged.

    Function arguments and results of a model carry their external names:
    `recur.input = "tokens"`, `recur.weight = "lstm.weight_ih_l0"` and
    `recur.output = "logits"`. A runtime binds weights by these names.
    Tensors computed from weights alone (`recur-outline-weight-prologue`)
    are `recur.derived` arguments of the entry and results of its prologue,
    the function its `recur.prologue` attribute names.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Argument attribute naming a model input (`tokens`, ...).
    static constexpr ::llvm::StringLiteral kInputAttrName = "recur.input";
    /// Argument and result attribute of a model tensor: one string per
    /// dimension, "T", "B" or "" (a size of its own), naming the run-time
    /// sizes where the description's inference (time-major [T, B, ...],
    /// states [B, n], batch-first through a recur.transpose) does not fit,
    /// as in an ONNX graph's [T, D, B, H] output.
    static constexpr ::llvm::StringLiteral kDimsAttrName = "recur.dims";
    /// Argument attribute naming a weight by its PyTorch `state_dict` key.
    static constexpr ::llvm::StringLiteral kWeightAttrName = "recur.weight";
    /// Result attribute naming a model output (`logits`, ...).
    static constexpr ::llvm::StringLiteral kOutputAttrName = "recur.output";
    /// Argument (of the entry) and result (of its weight prologue) attribute
    /// naming a tensor computed from weights only, once per weight binding
    /// (`recur-outline-weight-prologue`).
    static constexpr ::llvm::StringLiteral kDerivedAttrName = "recur.derived";
    /// Function attribute of an entry naming its weight prologue.
    static constexpr ::llvm::StringLiteral kPrologueAttrName = "recur.prologue";
    /// Function attribute (a `#recur.sgd`) of an entry that is a training
    /// step: its one result is the loss, and `recur-differentiate` adds the
    /// backward pass and the weights' update.
    static constexpr ::llvm::StringLiteral kTrainAttrName = "recur.train";
    /// Function attribute (unit) of an entry whose vector-Jacobian product
    /// is wanted: `recur-differentiate` rewrites it into the backward pass
    /// of the function as written (recur.compile(..., train=True) builds
    /// one per layer).
    static constexpr ::llvm::StringLiteral kVjpAttrName = "recur.vjp";
    /// Result attribute (unit) of an output that is an activation kept for a
    /// backward (a layer's output sequence), not a result users read: a
    /// `recur.vjp` function takes it back as an argument and seeds no
    /// gradient for it.
    static constexpr ::llvm::StringLiteral kKeptAttrName = "recur.kept";
    /// Function attribute (unit) of the forward of a training pair, whose
    /// `recur.vjp` twin is its backward: `recur-differentiate` makes it
    /// return, as kept results, what the backward reads and would otherwise
    /// compute again (each recur.rnn's states entering each step).
    static constexpr ::llvm::StringLiteral kKeepActivationsAttrName =
        "recur.keep_activations";
    /// Function attribute (unit) of a vector-Jacobian product that
    /// `recur-differentiate` built from a `recur.vjp` function.
    static constexpr ::llvm::StringLiteral kBackwardAttrName = "recur.backward";
    /// Attribute (a `#recur.unit_step`) of a fused LSTM step's
    /// linalg.generic, set by convert-recur-to-linalg.
    static constexpr ::llvm::StringLiteral kUnitStepAttrName = "recur.unit_step";
    /// Attribute (a `#recur.panel_gemm`) of a contraction's linalg.generic
    /// that the CPU's register-tiled kernels take, set by
    /// convert-recur-to-linalg and recur-pack-gemm-operands.
    static constexpr ::llvm::StringLiteral kPanelGemmAttrName = "recur.panel_gemm";
    /// Attribute (a `#recur.gpu_gemm`) of a GEMM's linalg.generic that
    /// recur-gpu-tiled-gemms makes a kernel, set by recur-gpu-kernel-config.
    static constexpr ::llvm::StringLiteral kGpuGemmAttrName = "recur.gpu_gemm";
    /// Attribute (unit) of a GEMM's linalg.generic over [T, B] rows that
    /// adds its products to the rows with t < lengths[b] only (a packed
    /// batch's tokens; its body selects them), its rows sorted by length, so
    /// that the tokens of step t are rows [0, count). Its inputs are (x, w,
    /// lengths [B], tokens before each step [T]): the GPU's tiled kernels
    /// walk the tokens alone through the latter. Set by
    /// convert-recur-to-linalg.
    static constexpr ::llvm::StringLiteral kActiveRowsAttrName = "recur.active_rows";
    /// Attribute (a `#recur.stationary_step`) of a fused step's
    /// linalg.generic that recur-gpu-stationary-weights schedules, set by
    /// recur-gpu-kernel-config.
    static constexpr ::llvm::StringLiteral kStationaryStepAttrName = "recur.stationary_step";
    /// Attribute (a `#recur.gpu_row_group`) of a row op's linalg.generic
    /// that recur-gpu-row-groups runs, with the marked row ops around it
    /// that share its rows, as a block per row; set by
    /// recur-gpu-kernel-config.
    static constexpr ::llvm::StringLiteral kGpuRowGroupAttrName = "recur.gpu_row_group";
    /// Result attribute of a training step naming the weight whose updated
    /// value the result is: the compiled model writes it over the bound
    /// weight, in place.
    static constexpr ::llvm::StringLiteral kUpdateAttrName = "recur.update";
    /// Whether `op` is in a training step (a function with `recur.train`)
    /// or in either half of a pair a caller trains with (a `recur.vjp` or
    /// `recur.backward` function, or one that keeps activations): its
    /// weights change at every run, so nothing is computed from them once
    /// per binding.
    static bool isInTrainingStep(::mlir::Operation *op);
  }];
}

def Recur_Reduction : I32EnumAttr<"Reduction", "how per-token losses are combined", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"sum", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::recur";
}

def Recur_ReductionAttr : EnumAttr<Recur_Dialect, Recur_Reduction, "reduction"> {
  let assemblyFormat = "`<` $value `>`";
}

def Recur_CellSchedule : I32EnumAttr<"CellSchedule",
    "how one step of an LSTM recurrence is scheduled", [
    I32EnumAttrCase<"separate", 0>,
    I32EnumAttrCase<"fused", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::recur";
}

def Recur_CellScheduleAttr : EnumAttr<Recur_Dialect, Recur_CellSchedule, "cell"> {
  let assemblyFormat = "`<` $value `>`";
}

def Recur_FinitePositive : AttrConstraint<
    CPred<"::std::isfinite(::llvm::cast<::mlir::FloatAttr>($_self).getValueAsDouble()) && "
          "::llvm::cast<::mlir::FloatAttr>($_self).getValueAsDouble() > 0">,
    "whose value is finite and positive">;

def Recur_SGDAttr : AttrDef<Recur_Dialect, "SGD"> {
  let mnemonic = "sgd";
  let summary = "a training step's optimizer: SGD with optional gradient clipping";
  let description = [{
    `#recur.sgd<lr = 0.1, clip_norm = 0.25>` on a model's entry
    (`recur.train = ...`) makes it a training step. After the backward pass,
    when `clip_norm` is positive, the gradients are scaled together so that
    their global 2-norm is at most `clip_norm`, with the semantics of
    `torch.nn.utils.clip_grad_norm_` (scale `clip_norm / (norm + 1e-6)` when
    that is below 1); then every weight `w` becomes `w - lr * grad`, as
    `torch.optim.SGD` without momentum or weight decay does. `clip_norm = 0`
    (the default) does not clip.
  }];
  let parameters = (ins APFloatParameter<"the learning rate">:$lr,
                        APFloatParameter<"the largest global gradient norm, 0 for none">:$clipNorm);
  let builders = [AttrBuilder<(ins "double":$lr, "double":$clipNorm), [{
    return $_get($_ctxt, ::llvm::APFloat(lr), ::llvm::APFloat(clipNorm));
  }]>];
  let extraClassDeclaration = [{
    double getLearningRate() const { return getLr().convertToDouble(); }
    double getMaxNorm() const { return getClipNorm().convertToDouble(); }
  }];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

class Recur_Op<string mnemonic, list<Trait> traits = []>
    : Op<Recur_Dialect, mnemonic,
         !listconcat(traits, [DeclareOpInterfaceMethods<Recur_ResultTypeInference>,
                              Recur_NamedOperands])> {
  // An op's own class declarations (extraClassDeclaration adds to them what
  // every recur op has).
  code recurClassDeclaration = "";
  // The positions in `arguments` of the operands (the rest are attributes).
  list<int> operandArguments =
      !filter(i, !range(!size(arguments)),
              !not(!initialized(!getdagarg<Attr>(arguments, i))));
  let extraClassDeclaration = recurClassDeclaration # [{
    /// The ODS names of the operands, in order (NamedOperands).
    static constexpr ::llvm::StringLiteral kOperandNames[] = {
  }] # !interleave(!foreach(i, operandArguments,
                            "\"" # !getdagname(arguments, i) # "\""), ", ") # [{
    };
  }];
}

#endif // RECUR_IR_RECURBASE_TD
