//===- onednn_lm.cpp - the LSTM LM through oneDNN's primitives (baseline) -===//
//
//   bench-onednn-lm --weights w.safetensors --inputs in.safetensors
//                   --outputs out.safetensors [--warmup K] [--iters N]
//                   [--precision fp32|bf16] [--lr LR [--clip-norm C]]
//
// With --lr, an LM's SGD training step instead (onednn_lm_train.cpp).
// --precision=bf16 (forward): bf16 weights, activations and logits, f32
// biases and sums, oneDNN's bf16 primitives (AVX512-BF16 where the CPU has
// it); the f32 weights are rounded to bf16 once, at set-up.
//
// The embedding is gathered by hand, the stacked LSTM runs as oneDNN
// lstm_forward primitives (layer 0, then the others in one primitive, since a
// multi-layer primitive needs one input size), the projection as
// inner_product. oneDNN's LSTM gate order (i, f, c~, o) is PyTorch's; weights
// are transposed to its ldigo layout and the two biases summed. GRU layers
// run as lbr_gru_forward, oneDNN's linear-before-reset GRU, which is
// PyTorch's (its gates u, r, o are PyTorch's z, r, n; the candidate's
// recurrent bias its fourth bias gate). Threads: OMP_NUM_THREADS (oneDNN
// here is built on OpenMP).
//
//===----------------------------------------------------------------------===//

#include "Onednn.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <chrono>
#include <cstring>
#include <optional>

using namespace dnnl;
using Tag = memory::format_tag;

namespace {

constexpr const char *kUsage =
    "usage: bench-onednn-lm --weights w.safetensors --inputs in.safetensors\n"
    "                       --outputs out.safetensors [--warmup K] [--iters "
    "N]\n"
    "                       [--precision fp32|bf16] [--lr LR [--clip-norm "
    "C]]\n"
    "Runs the model of the weights (an LSTM LM or a bare stacked LSTM) with\n"
    "oneDNN and prints {\"times_ms\": [...], ...} as JSON. With --lr, each\n"
    "batch is an SGD step of the LM on tokens and targets (mean "
    "cross-entropy,\n"
    "clip_grad_norm_ C when C > 0); --outputs gets the first step's loss and\n"
    "the weights after it.\n";

const char *isaName(cpu_isa isa) {
  switch (isa) {
  case cpu_isa::sse41:
    return "sse41";
  case cpu_isa::avx:
    return "avx";
  case cpu_isa::avx2:
    return "avx2";
  case cpu_isa::avx2_vnni:
    return "avx2_vnni";
  case cpu_isa::avx512_core:
    return "avx512_core";
  case cpu_isa::avx512_core_vnni:
    return "avx512_core_vnni";
  case cpu_isa::avx512_core_bf16:
    return "avx512_core_bf16";
  case cpu_isa::avx512_core_amx:
    return "avx512_core_amx";
  default:
    return "other";
  }
}

/// Layers [first, first + count) as one lstm_forward primitive (GRU layers:
/// lbr_gru_forward, linear-before-reset, PyTorch's GRU) with its weights
/// reordered to the layout the primitive chose.
struct LstmStage {
  primitive rnn;
  memory weightsLayer, weightsIter, bias;
  memory::desc dstDesc;

  /// `type`: of the weights and the activations (f32 or bf16; the bias
  /// stays f32).
  LstmStage(const engine &eng, stream &strm, const bench::Model &model,
            size_t first, size_t count, const memory::desc &srcDesc,
            memory::data_type type) {
    memory::dim T = model.seq, B = model.batch, H = model.hidden;
    memory::dim I = first == 0 ? model.inputSize : H, L = count;
    memory::dim G = model.gates;
    bool gru = G == 3;
    auto f32 = memory::data_type::f32;
    memory::desc layerAny({L, 1, I, G, H}, type, Tag::any);
    memory::desc iterAny({L, 1, H, G, H}, type, Tag::any);
    // lbr_gru's bias has a fourth gate: the candidate's recurrent bias,
    // added before the reset gate multiplies it.
    memory::desc biasDesc({L, 1, 4, H}, f32, Tag::ldgo);
    dstDesc = memory::desc({T, B, H}, type, Tag::tnc);
    memory::desc layerDesc, iterDesc;
    if (gru) {
      lbr_gru_forward::desc desc(prop_kind::forward_inference,
                                 rnn_direction::unidirectional_left2right,
                                 srcDesc, memory::desc(), layerAny, iterAny,
                                 biasDesc, dstDesc, memory::desc());
      lbr_gru_forward::primitive_desc pd(desc, eng);
      rnn = lbr_gru_forward(pd);
      layerDesc = pd.weights_layer_desc();
      iterDesc = pd.weights_iter_desc();
    } else {
      lstm_forward::desc desc(prop_kind::forward_inference,
                              rnn_direction::unidirectional_left2right, srcDesc,
                              memory::desc(), memory::desc(), layerAny, iterAny,
                              biasDesc, dstDesc, memory::desc(),
                              memory::desc());
      lstm_forward::primitive_desc pd(desc, eng);
      rnn = lstm_forward(pd);
      layerDesc = pd.weights_layer_desc();
      iterDesc = pd.weights_iter_desc();
    }

    // PyTorch's [G·H, I] per layer is oneDNN's ldigo transposed: [I][G][H],
    // a GRU's gates (r, z, n) as oneDNN's (u, r, o).
    std::vector<int64_t> order =
        gru ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 1, 2, 3};
    memory userLayer({{L, 1, I, G, H}, f32, Tag::ldigo}, eng);
    memory userIter({{L, 1, H, G, H}, f32, Tag::ldigo}, eng);
    bias = memory(biasDesc, eng);
    auto *layerData = static_cast<float *>(userLayer.get_data_handle());
    auto *iterData = static_cast<float *>(userIter.get_data_handle());
    auto *biasData = static_cast<float *>(bias.get_data_handle());
    for (memory::dim l = 0; l < L; ++l) {
      const bench::LstmLayer &layer = model.layers[first + l];
      bench::toLdigoGates(layer.wIh.data.data(), l, I, H, order, layerData);
      bench::toLdigoGates(layer.wHh.data.data(), l, H, H, order, iterData);
      float *layerBias = biasData + l * 4 * H;
      for (memory::dim k = 0; k < G; ++k)
        for (memory::dim j = 0; j < H; ++j) {
          memory::dim g = order[k] * H + j;
          // The candidate's two biases stay apart in a GRU.
          bool apart = gru && k == 2;
          layerBias[k * H + j] =
              layer.bIh.data[g] + (apart ? 0.0f : layer.bHh.data[g]);
          if (apart)
            layerBias[3 * H + j] = layer.bHh.data[g];
        }
    }
    weightsLayer = memory(layerDesc, eng);
    weightsIter = memory(iterDesc, eng);
    reorder(userLayer, weightsLayer).execute(strm, userLayer, weightsLayer);
    reorder(userIter, weightsIter).execute(strm, userIter, weightsIter);
    strm.wait();
  }

  void run(stream &strm, const memory &src, const memory &dst) {
    rnn.execute(strm, {{DNNL_ARG_SRC_LAYER, src},
                       {DNNL_ARG_WEIGHTS_LAYER, weightsLayer},
                       {DNNL_ARG_WEIGHTS_ITER, weightsIter},
                       {DNNL_ARG_BIAS, bias},
                       {DNNL_ARG_DST_LAYER, dst}});
  }
};

} // namespace

int main(int argc, char **argv) {
  bench::Options options = bench::parseOptions(argc, argv, kUsage);
  bool bf16 = options.precision == "bf16";
  if (options.precision != "fp32" && !bf16)
    bench::unavailable("the oneDNN baseline runs fp32 and bf16, not " +
                       options.precision);
  if (bf16 && options.training)
    bench::unavailable("the oneDNN training step runs fp32 only");
  bench::Model model = bench::Model::load(options);
  const dnnl_version_t *version = dnnl_version();
  nlohmann::json versions = {{"onednn", std::to_string(version->major) + "." +
                                            std::to_string(version->minor) +
                                            "." +
                                            std::to_string(version->patch)},
                             {"onednn_isa", isaName(get_effective_cpu_isa())}};
  if (options.training) {
    if (model.gates != 4)
      bench::unavailable("the oneDNN training step runs LSTM models only");
    bench::runOnednnTraining(options, model, versions);
    return 0;
  }
  auto setupStart = std::chrono::steady_clock::now();

  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  auto f32 = memory::data_type::f32;
  auto type = bf16 ? memory::data_type::bf16 : f32;
  size_t elementBytes = bf16 ? 2 : 4;
  memory::dim T = model.seq, B = model.batch, H = model.hidden,
              E = model.inputSize;
  memory::desc srcDesc({T, B, E}, type, Tag::tnc);
  // The LM gathers its embedding rows into `src` (from a table in the
  // activations' type, converted once); a bare LSTM reads its input where it
  // lies (converted once, outside the timed batches, in bf16).
  memory src = model.languageModel || bf16
                   ? memory(srcDesc, eng)
                   : memory(srcDesc, eng, model.input.data.data());
  memory table;
  // f32 `data` of `dims` (row-major: `tag`) in the activations' type.
  auto converted = [&](const memory::dims &dims, Tag tag, const float *data) {
    memory user({dims, f32, tag}, eng, const_cast<float *>(data));
    memory result({dims, type, tag}, eng);
    reorder(user, result).execute(strm, user, result);
    return result;
  };
  if (model.languageModel)
    table = converted({model.vocab, E}, Tag::ab, model.embedding.data.data());
  else if (bf16)
    src = converted({T, B, E}, Tag::tnc, model.input.data.data());
  std::vector<LstmStage> stages;
  stages.emplace_back(eng, strm, model, 0, 1, srcDesc, type);
  if (model.layers.size() > 1)
    stages.emplace_back(eng, strm, model, 1, model.layers.size() - 1,
                        stages[0].dstDesc, type);
  std::vector<memory> hidden;
  for (LstmStage &stage : stages)
    hidden.emplace_back(stage.dstDesc, eng);

  // Projection: logits [T*B, V] = y [T*B, H] · proj.weightᵀ + proj.bias.
  memory::dim N = T * B, V = model.vocab;
  std::optional<inner_product_forward> projection;
  memory projSrc, projWeights, projBias, logits;
  if (model.languageModel) {
    memory::desc ySrc({N, H}, type, Tag::nc), out({N, V}, type, Tag::nc);
    inner_product_forward::desc desc(prop_kind::forward_inference, ySrc,
                                     {{V, H}, type, Tag::any},
                                     {{V}, f32, Tag::x}, out);
    inner_product_forward::primitive_desc pd(desc, eng);
    projection = inner_product_forward(pd);
    memory userWeights({{V, H}, f32, Tag::oi}, eng,
                       model.projWeight.data.data());
    projWeights = memory(pd.weights_desc(), eng);
    reorder(userWeights, projWeights).execute(strm, userWeights, projWeights);
    projBias = memory({{V}, f32, Tag::x}, eng, model.projBias.data.data());
    logits = memory(out, eng);
    // The last stage's [T, B, H] is the projection's [T*B, H] as it lies.
    projSrc = memory(ySrc, eng, hidden.back().get_data_handle());
    strm.wait();
  }
  double setupSeconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - setupStart)
                            .count();

  auto batch = [&] {
    if (model.languageModel) {
      auto *rows = static_cast<char *>(src.get_data_handle());
      const auto *tableRows =
          static_cast<const char *>(table.get_data_handle());
      size_t rowBytes = E * elementBytes;
      for (size_t i = 0; i < model.tokens.size(); ++i)
        std::memcpy(rows + i * rowBytes, tableRows + model.tokens[i] * rowBytes,
                    rowBytes);
    }
    const memory *input = &src;
    for (size_t s = 0; s < stages.size(); ++s) {
      stages[s].run(strm, *input, hidden[s]);
      input = &hidden[s];
    }
    if (projection)
      projection->execute(strm, {{DNNL_ARG_SRC, projSrc},
                                 {DNNL_ARG_WEIGHTS, projWeights},
                                 {DNNL_ARG_BIAS, projBias},
                                 {DNNL_ARG_DST, logits}});
    strm.wait();
  };
  std::vector<double> times = bench::timeBatches(options, batch);

  memory result = model.languageModel ? logits : hidden.back();
  if (bf16) { // the outputs are checked (and written) as f32
    memory wide(model.languageModel ? memory::desc({N, V}, f32, Tag::nc)
                                    : memory::desc({T, B, H}, f32, Tag::tnc),
                eng);
    reorder(result, wide).execute(strm, result, wide);
    strm.wait();
    result = wide;
  }
  bench::writeOutput(options, model,
                     static_cast<const float *>(result.get_data_handle()));
  std::vector<std::string> notes = {
      "compile_s: primitive creation (oneDNN JIT) and weight reorders"};
  if (bf16)
    notes.push_back("bf16 weights, activations and logits (rounded once at "
                    "set-up), f32 biases and sums");
  std::string primitiveName =
      model.gates == 3 ? "lbr_gru_forward" : "lstm_forward";
  if (model.gates == 3)
    notes.push_back("GRU layers: lbr_gru_forward (linear before reset: "
                    "PyTorch's GRU)");
  if (stages.size() > 1)
    notes.push_back("layers 1.." + std::to_string(model.layers.size() - 1) +
                    " in one " + primitiveName + " primitive after layer 0's");
  bench::report(times, setupSeconds, versions, notes);
  return 0;
}
