//===- recur-gen.cpp - Write recur IR for standard architectures ----------===//
//
//   recur-gen lstm-lm --vocab 10001 --embed 128 --hidden 256 --layers 3 \
//                     [--seq T] [--batch B] [--dtype f32] [--state]
//                     [--batch-first] [--no-bias] [--bidirectional]
//                     [--proj-size P]
//                     [--log-softmax] [-o model.mlir]
//                     [--train [--lr 20] [--clip-norm 0.25]]
//   recur-gen lstm --input 512 --hidden 512 --layers 1 [--seq T] [--batch B]
//                  [--state] [--batch-first] [--no-bias] [--bidirectional]
//                  [--proj-size P]
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "recur/Gen/ModelGen.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;
using namespace mlir::recur;

static cl::SubCommand lstmLmCommand(
    "lstm-lm",
    "Language model: embedding, stacked LSTM, projection to the vocabulary");
static cl::SubCommand lstmCommand("lstm",
                                  "Stacked LSTM layers alone (nn.LSTM)");
static cl::SubCommand gruLmCommand(
    "gru-lm",
    "Language model: embedding, stacked GRU, projection to the vocabulary");
static cl::SubCommand rnnLmCommand(
    "rnn-lm", "Language model: embedding, stacked Elman RNN, projection to the "
              "vocabulary");
static cl::SubCommand gruCommand("gru", "Stacked GRU layers alone (nn.GRU)");
static cl::SubCommand rnnCommand("rnn",
                                 "Stacked Elman RNN layers alone (nn.RNN)");

static cl::OptionCategory modelCategory("Model options");

// Defaults come from the configs; main() writes them into the help texts.
static const LstmLmConfig lmDefaults;
static const LstmStackConfig stackDefaults;

static cl::opt<int64_t> vocab("vocab", cl::desc("Vocabulary size"),
                              cl::init(lmDefaults.vocab),
                              cl::sub(lstmLmCommand), cl::sub(gruLmCommand),
                              cl::sub(rnnLmCommand), cl::cat(modelCategory));
static cl::opt<int64_t> embed("embed", cl::desc("Embedding size"),
                              cl::init(lmDefaults.embed),
                              cl::sub(lstmLmCommand), cl::sub(gruLmCommand),
                              cl::sub(rnnLmCommand), cl::cat(modelCategory));
static cl::opt<int64_t> inputSize("input", cl::desc("Input feature size"),
                                  cl::init(stackDefaults.input),
                                  cl::sub(lstmCommand), cl::sub(gruCommand),
                                  cl::sub(rnnCommand), cl::cat(modelCategory));
static cl::opt<int64_t> hidden("hidden",
                               cl::desc("Hidden size of every LSTM layer"),
                               cl::sub(lstmLmCommand), cl::sub(gruLmCommand),
                               cl::sub(rnnLmCommand), cl::sub(lstmCommand),
                               cl::sub(gruCommand), cl::sub(rnnCommand),
                               cl::cat(modelCategory));
static cl::opt<int64_t> layers("layers",
                               cl::desc("Number of stacked LSTM layers"),
                               cl::sub(lstmLmCommand), cl::sub(gruLmCommand),
                               cl::sub(rnnLmCommand), cl::sub(lstmCommand),
                               cl::sub(gruCommand), cl::sub(rnnCommand),
                               cl::cat(modelCategory));
static cl::opt<int64_t>
    seqLength("seq", cl::desc("Sequence length T (default: dynamic)"),
              cl::sub(lstmLmCommand), cl::sub(gruLmCommand),
              cl::sub(rnnLmCommand), cl::sub(lstmCommand), cl::sub(gruCommand),
              cl::sub(rnnCommand), cl::cat(modelCategory));
static cl::opt<int64_t> batch("batch",
                              cl::desc("Batch size B (default: dynamic)"),
                              cl::sub(lstmLmCommand), cl::sub(gruLmCommand),
                              cl::sub(rnnLmCommand), cl::sub(lstmCommand),
                              cl::sub(gruCommand), cl::sub(rnnCommand),
                              cl::cat(modelCategory));
static cl::opt<std::string>
    dtype("dtype", cl::desc("Element type: f32, f16 or bf16"),
          cl::init(lmDefaults.dtype), cl::sub(lstmLmCommand),
          cl::sub(gruLmCommand), cl::sub(rnnLmCommand), cl::sub(lstmCommand),
          cl::sub(gruCommand), cl::sub(rnnCommand), cl::cat(modelCategory));
static cl::opt<bool> state(
    "state",
    cl::desc("Take the layers' state and return it, as nn.LSTM's (h0, c0) and "
             "(h_n, c_n): inputs h0_l<k>, c0_l<k> and outputs h_n_l<k>, "
             "c_n_l<k>, [B, units] per layer and direction (h has --proj-size "
             "units if set); a GRU's or an RNN's is h alone"),
    cl::sub(lstmLmCommand), cl::sub(gruLmCommand), cl::sub(rnnLmCommand),
    cl::sub(lstmCommand), cl::sub(gruCommand), cl::sub(rnnCommand),
    cl::cat(modelCategory));
static cl::opt<bool> batchFirst(
    "batch-first",
    cl::desc("Sequences are batch-first, as nn.LSTM(batch_first=True): "
             "input [B, T, input] and output [B, T, units] (the LM's tokens "
             "[B, T] and logits [B, T, vocab]); the state stays [B, units]"),
    cl::sub(lstmLmCommand), cl::sub(gruLmCommand), cl::sub(rnnLmCommand),
    cl::sub(lstmCommand), cl::sub(gruCommand), cl::sub(rnnCommand),
    cl::cat(modelCategory));
static cl::opt<bool> noBias(
    "no-bias",
    cl::desc("Layers without biases, as nn.LSTM (nn.GRU, nn.RNN)(bias=False)"),
    cl::sub(lstmLmCommand), cl::sub(gruLmCommand), cl::sub(rnnLmCommand),
    cl::sub(lstmCommand), cl::sub(gruCommand), cl::sub(rnnCommand),
    cl::cat(modelCategory));
static cl::opt<bool> bidirectional(
    "bidirectional",
    cl::desc("Bidirectional layers, as nn.LSTM(bidirectional=True): "
             "each layer also runs backward in time (weights and state "
             "..._l<k>_reverse) and returns both directions' hidden states "
             "side by side, [..., 2 * hidden]"),
    cl::sub(lstmLmCommand), cl::sub(gruLmCommand), cl::sub(rnnLmCommand),
    cl::sub(lstmCommand), cl::sub(gruCommand), cl::sub(rnnCommand),
    cl::cat(modelCategory));
static cl::opt<bool> lengths(
    "lengths",
    cl::desc("Take each row's sequence length, as a packed batch "
             "(nn.utils.rnn.pack_padded_sequence): input `lengths` [B] "
             "(int64, each in 1..T); outputs past a row's length are zero "
             "and its final state is that of its last step"),
    cl::sub(lstmLmCommand), cl::sub(gruLmCommand), cl::sub(rnnLmCommand),
    cl::sub(lstmCommand), cl::sub(gruCommand), cl::sub(rnnCommand),
    cl::cat(modelCategory));
static cl::opt<int64_t> projSize(
    "proj-size",
    cl::desc("Project every LSTM step's hidden state to this many units, as "
             "nn.LSTM(proj_size=P), with weights weight_hr_l<k> [P, hidden] "
             "(0: none)"),
    cl::init(0), cl::sub(lstmLmCommand), cl::sub(lstmCommand),
    cl::cat(modelCategory));
static cl::opt<std::string> nonlinearity(
    "nonlinearity",
    cl::desc("The RNN's nonlinearity, as nn.RNN(nonlinearity=...): tanh or "
             "relu"),
    cl::init("tanh"), cl::sub(rnnCommand), cl::sub(rnnLmCommand),
    cl::cat(modelCategory));
static cl::opt<bool> logSoftmax(
    "log-softmax",
    cl::desc("Return log_softmax(logits) over the vocabulary as log_probs, "
             "as PyTorch's word_language_model does"),
    cl::sub(lstmLmCommand), cl::sub(gruLmCommand), cl::sub(rnnLmCommand),
    cl::cat(modelCategory));
static cl::opt<bool>
    train("train",
          cl::desc("Emit a training step: forward(tokens, targets, weights) "
                   "returns the mean cross entropy; recur-compile adds the "
                   "backward pass and an SGD update of the weights in place"),
          cl::sub(lstmLmCommand), cl::cat(modelCategory));
static cl::opt<bool>
    vjp("vjp",
        cl::desc("Emit the layers' backward pass for a caller's autograd "
                 "(recur.compile(..., train=True)): recur-compile builds the "
                 "vector-Jacobian product (input, state, weights, the kept "
                 "output, d_output, d_h_n, d_c_n) -> gradients of the input, "
                 "state and weights; it takes each "
                 "layer's output sequence that --keep-activations returns"),
        cl::sub(lstmCommand), cl::sub(gruCommand), cl::sub(rnnCommand),
        cl::sub(lstmLmCommand), cl::sub(gruLmCommand), cl::sub(rnnLmCommand),
        cl::cat(modelCategory));
static cl::opt<bool> keepActivations(
    "keep-activations",
    cl::desc("Also return each layer's output sequence y_l<k> (marked "
             "recur.kept), for the --vjp model's backward: the forward "
             "half of a training pair"),
    cl::sub(lstmCommand), cl::sub(gruCommand), cl::sub(rnnCommand),
    cl::sub(lstmLmCommand), cl::sub(gruLmCommand), cl::sub(rnnLmCommand),
    cl::cat(modelCategory));
static cl::opt<double> learningRate("lr", cl::desc("SGD learning rate"),
                                    cl::sub(lstmLmCommand),
                                    cl::cat(modelCategory));
static cl::opt<double>
    clipNorm("clip-norm",
             cl::desc("Clip the gradients' global norm to this before the "
                      "update, as torch.nn.utils.clip_grad_norm_ (0: never)"),
             cl::sub(lstmLmCommand), cl::cat(modelCategory));
static cl::opt<std::string> outputFilename(
    "o", cl::desc("Output file (default: stdout)"), cl::value_desc("filename"),
    cl::init("-"), cl::sub(lstmLmCommand), cl::sub(gruLmCommand),
    cl::sub(rnnLmCommand), cl::sub(lstmCommand), cl::sub(gruCommand),
    cl::sub(rnnCommand), cl::cat(modelCategory));

static int fail(const Twine &message) {
  WithColor::error(errs(), "recur-gen") << message << "\n";
  return 1;
}

/// Completes `config` with the flags every model shares, validates it, builds
/// the module with `build` and writes it out.
template <typename Config, typename BuildFn>
static int generate(Config config, BuildFn build) {
  if (seqLength.getNumOccurrences())
    config.seq = seqLength;
  if (batch.getNumOccurrences())
    config.batch = batch;
  if (hidden.getNumOccurrences())
    config.hidden = hidden;
  if (layers.getNumOccurrences())
    config.layers = layers;
  config.dtype = dtype;
  config.state = state;
  config.batchFirst = batchFirst;
  config.bias = !noBias;
  config.bidirectional = bidirectional;
  config.projSize = projSize;
  config.lengths = lengths;
  config.vjp = vjp;
  config.keepActivations = keepActivations;
  if (std::string error = validate(config); !error.empty())
    return fail(error);

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = build(context, config);
  if (mlir::failed(mlir::verify(*module)))
    return fail("internal error: the generated module does not verify");

  std::string error;
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(modelCategory);
  std::vector<std::string> help = {
      formatv("Vocabulary size (default {0})", lmDefaults.vocab),
      formatv("Embedding size (default {0})", lmDefaults.embed),
      formatv("Input feature size (default {0})", stackDefaults.input),
      formatv("Hidden size of every layer (default {0} for lstm-lm, "
              "{1} for lstm, gru and rnn)",
              lmDefaults.hidden, stackDefaults.hidden),
      formatv("Number of stacked layers (default {0} for lstm-lm, {1} "
              "for lstm, gru and rnn)",
              lmDefaults.layers, stackDefaults.layers),
      formatv("Element type: f32, f16 or bf16 (default {0})", lmDefaults.dtype),
      formatv("SGD learning rate of a --train step (default {0})",
              TrainConfig().lr),
      formatv("Clip the gradients' global norm to this before the update, as "
              "torch.nn.utils.clip_grad_norm_ (0: never; default {0})",
              TrainConfig().clipNorm)};
  vocab.setDescription(help[0]);
  embed.setDescription(help[1]);
  inputSize.setDescription(help[2]);
  hidden.setDescription(help[3]);
  layers.setDescription(help[4]);
  dtype.setDescription(help[5]);
  learningRate.setDescription(help[6]);
  clipNorm.setDescription(help[7]);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Recur model generator: writes recur dialect IR for a standard "
      "architecture.\n\n"
      "  recur-gen lstm-lm --vocab 10001 --embed 128 --hidden 256 --layers 3\n"
      "  recur-gen lstm --input 512 --hidden 512 --layers 1 --seq 100 --batch "
      "64\n"
      "  recur-gen gru --input 512 --hidden 512 --layers 2 --bidirectional\n"
      "  recur-gen rnn --input 64 --hidden 128 --nonlinearity relu\n");

  std::optional<CellKind> rnnCell;
  if (rnnCommand || rnnLmCommand) {
    if (nonlinearity != "tanh" && nonlinearity != "relu")
      return fail("--nonlinearity must be tanh or relu, got '" + nonlinearity +
                  "'");
    rnnCell = nonlinearity == "tanh" ? CellKind::rnnTanh : CellKind::rnnRelu;
  }
  if (gruLmCommand || rnnLmCommand) {
    LstmLmConfig config;
    config.cell = gruLmCommand ? CellKind::gru : *rnnCell;
    config.vocab = vocab;
    config.embed = embed;
    config.logSoftmax = logSoftmax;
    return generate(config, buildLstmLm);
  }
  if (lstmLmCommand) {
    LstmLmConfig config;
    config.vocab = vocab;
    config.embed = embed;
    config.logSoftmax = logSoftmax;
    if (!train &&
        (learningRate.getNumOccurrences() || clipNorm.getNumOccurrences()))
      return fail("--lr and --clip-norm set a training step's optimizer; add "
                  "--train");
    if (train) {
      config.train.emplace();
      if (learningRate.getNumOccurrences())
        config.train->lr = learningRate;
      if (clipNorm.getNumOccurrences())
        config.train->clipNorm = clipNorm;
    }
    return generate(config, buildLstmLm);
  }
  if (lstmCommand || gruCommand || rnnCommand) {
    LstmStackConfig config;
    config.input = inputSize;
    if (gruCommand)
      config.cell = CellKind::gru;
    if (rnnCommand)
      config.cell = *rnnCell;
    return generate(config, buildLstmStack);
  }
  return fail("choose a model: 'recur-gen lstm-lm ...', 'recur-gen lstm ...', "
              "'recur-gen gru ...', 'recur-gen rnn ...', 'recur-gen gru-lm "
              "...' or 'recur-gen rnn-lm ...' (see recur-gen --help)");
}
