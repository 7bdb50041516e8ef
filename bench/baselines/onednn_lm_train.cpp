//===- onednn_lm_train.cpp - an SGD step of the LSTM LM through oneDNN ----===//
//
//   bench-onednn-lm --lr LR [--clip-norm C] --weights ... --inputs ...
//
// The training step `recur-gen lstm-lm --train` compiles (mean cross-entropy,
// backward through time, clip_grad_norm_, SGD), on oneDNN's training
// primitives: lstm_forward (forward_training, keeping its workspace) and
// lstm_backward per stage (layer 0, then the others, as in the forward
// baseline), inner_product forward and backward (data and weights) for the
// projection, softmax for the loss and its gradient. The embedding gather
// and its gradient's scatter, the per-token loss, the gradient norm and the
// update are plain loops over a few million floats next to the primitives'
// GFLOPs. The weights stay in oneDNN's plain layouts (ldigo, oi), updated
// in place, and are reordered into the layouts the primitives chose at every
// step, as a framework does with weights that change.
//
//===----------------------------------------------------------------------===//

#include "Onednn.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <chrono>
#include <cmath>
#include <cstring>

using namespace dnnl;
using Tag = memory::format_tag;

namespace {

constexpr auto f32 = memory::data_type::f32;

float *dataOf(const memory &m) {
  return static_cast<float *>(m.get_data_handle());
}

size_t elementsOf(const memory &m) {
  return m.get_desc().get_size() / sizeof(float);
}

/// Sum of squares with independent partial sums (vectorizable, and more
/// accurate than one running sum).
double sumOfSquares(const float *data, size_t count) {
  constexpr size_t lanes = 16;
  float partial[lanes] = {};
  size_t whole = count / lanes * lanes;
  for (size_t i = 0; i < whole; i += lanes)
    for (size_t lane = 0; lane < lanes; ++lane)
      partial[lane] += data[i + lane] * data[i + lane];
  double total = 0;
  for (float value : partial)
    total += value;
  for (size_t i = whole; i < count; ++i)
    total += double(data[i]) * data[i];
  return total;
}

/// w -= step * g.
void descend(float *weights, const float *gradient, size_t count, float step) {
  for (size_t i = 0; i < count; ++i)
    weights[i] -= step * gradient[i];
}

/// Layers [first, first + count) of the stack as one lstm_forward and one
/// lstm_backward primitive.
struct LstmStage {
  size_t first;
  memory::dim L, I, H;
  lstm_forward forward;
  lstm_backward backward;
  /// The trained weights: ldigo ([L, 1, I, 4, H], PyTorch's [4H, I]
  /// transposed) and PyTorch's two biases, [L][4H] each.
  memory weightsLayer, weightsIter;
  std::vector<float> biasIh, biasHh;
  /// What the primitives read: the weights in their layouts, the biases
  /// summed (ldgo).
  memory forwardLayer, forwardIter, backwardLayer, backwardIter, bias;
  memory workspace, dst, diffSrc, diffWeightsLayer, diffWeightsIter, diffBias;
  /// h0 = c0 = 0, and their gradients (not used).
  memory zeroState, diffState, diffStateC;

  LstmStage(const engine &eng, const bench::Model &model, size_t first,
            size_t count, const memory::desc &srcDesc)
      : first(first), L(count), I(first == 0 ? model.inputSize : model.hidden),
        H(model.hidden) {
    memory::dim T = model.seq, B = model.batch;
    memory::desc layerAny({L, 1, I, 4, H}, f32, Tag::any);
    memory::desc iterAny({L, 1, H, 4, H}, f32, Tag::any);
    memory::desc layerPlain({L, 1, I, 4, H}, f32, Tag::ldigo);
    memory::desc iterPlain({L, 1, H, 4, H}, f32, Tag::ldigo);
    memory::desc biasDesc({L, 1, 4, H}, f32, Tag::ldgo);
    memory::desc dstDesc({T, B, H}, f32, Tag::tnc);
    // Zero initial states, given explicitly: without them oneDNN 2.6's
    // w_hh gradient came out wrong (nonzero at T = 1, where h_{-1} = 0).
    memory::desc stateDesc({L, 1, B, H}, f32, Tag::ldnc);
    memory::desc none;
    lstm_forward::primitive_desc forwardPd(
        lstm_forward::desc(prop_kind::forward_training,
                           rnn_direction::unidirectional_left2right, srcDesc,
                           stateDesc, stateDesc, layerAny, iterAny, biasDesc,
                           dstDesc, none, none),
        eng);
    lstm_backward::primitive_desc backwardPd(
        lstm_backward::desc(
            prop_kind::backward, rnn_direction::unidirectional_left2right,
            srcDesc, stateDesc, stateDesc, layerAny, iterAny, biasDesc, dstDesc,
            none, none, srcDesc, stateDesc, stateDesc, layerPlain, iterPlain,
            biasDesc, dstDesc, none, none),
        eng, forwardPd);
    if (backwardPd.diff_weights_layer_desc() != layerPlain ||
        backwardPd.diff_weights_iter_desc() != iterPlain)
      bench::die("oneDNN's lstm_backward did not take ldigo weight gradients");
    forward = lstm_forward(forwardPd);
    backward = lstm_backward(backwardPd);

    weightsLayer = memory(layerPlain, eng);
    weightsIter = memory(iterPlain, eng);
    float *layerData = dataOf(weightsLayer), *iterData = dataOf(weightsIter);
    for (memory::dim l = 0; l < L; ++l) {
      const bench::LstmLayer &layer = model.layers[first + l];
      bench::toLdigo(layer.wIh.data.data(), l, I, H, layerData);
      bench::toLdigo(layer.wHh.data.data(), l, H, H, iterData);
      biasIh.insert(biasIh.end(), layer.bIh.data.begin(), layer.bIh.data.end());
      biasHh.insert(biasHh.end(), layer.bHh.data.begin(), layer.bHh.data.end());
    }
    forwardLayer = memory(forwardPd.weights_layer_desc(), eng);
    forwardIter = memory(forwardPd.weights_iter_desc(), eng);
    backwardLayer = memory(backwardPd.weights_layer_desc(), eng);
    backwardIter = memory(backwardPd.weights_iter_desc(), eng);
    bias = memory(biasDesc, eng);
    workspace = memory(forwardPd.workspace_desc(), eng);
    dst = memory(dstDesc, eng);
    diffSrc = memory(srcDesc, eng);
    diffWeightsLayer = memory(layerPlain, eng);
    diffWeightsIter = memory(iterPlain, eng);
    diffBias = memory(biasDesc, eng);
    zeroState = memory(stateDesc, eng);
    std::memset(dataOf(zeroState), 0, stateDesc.get_size());
    diffState = memory(stateDesc, eng);
    diffStateC = memory(stateDesc, eng);
  }

  /// The weights as this step's primitives read them.
  void prepare(stream &strm) {
    reorder(weightsLayer, forwardLayer)
        .execute(strm, weightsLayer, forwardLayer);
    reorder(weightsIter, forwardIter).execute(strm, weightsIter, forwardIter);
    reorder(weightsLayer, backwardLayer)
        .execute(strm, weightsLayer, backwardLayer);
    reorder(weightsIter, backwardIter).execute(strm, weightsIter, backwardIter);
    float *sum = dataOf(bias);
    for (size_t i = 0; i < biasIh.size(); ++i)
      sum[i] = biasIh[i] + biasHh[i];
  }

  void runForward(stream &strm, const memory &src) {
    forward.execute(strm, {{DNNL_ARG_SRC_LAYER, src},
                           {DNNL_ARG_SRC_ITER, zeroState},
                           {DNNL_ARG_SRC_ITER_C, zeroState},
                           {DNNL_ARG_WEIGHTS_LAYER, forwardLayer},
                           {DNNL_ARG_WEIGHTS_ITER, forwardIter},
                           {DNNL_ARG_BIAS, bias},
                           {DNNL_ARG_DST_LAYER, dst},
                           {DNNL_ARG_WORKSPACE, workspace}});
  }

  void runBackward(stream &strm, const memory &src, const memory &diffDst) {
    // lstm_backward adds its weight gradients to these.
    for (const memory *gradient :
         {&diffWeightsLayer, &diffWeightsIter, &diffBias})
      std::memset(dataOf(*gradient), 0, gradient->get_desc().get_size());
    backward.execute(strm, {{DNNL_ARG_SRC_LAYER, src},
                            {DNNL_ARG_SRC_ITER, zeroState},
                            {DNNL_ARG_SRC_ITER_C, zeroState},
                            {DNNL_ARG_DIFF_SRC_ITER, diffState},
                            {DNNL_ARG_DIFF_SRC_ITER_C, diffStateC},
                            {DNNL_ARG_WEIGHTS_LAYER, backwardLayer},
                            {DNNL_ARG_WEIGHTS_ITER, backwardIter},
                            {DNNL_ARG_BIAS, bias},
                            {DNNL_ARG_DST_LAYER, dst},
                            {DNNL_ARG_DIFF_DST_LAYER, diffDst},
                            {DNNL_ARG_WORKSPACE, workspace},
                            {DNNL_ARG_DIFF_SRC_LAYER, diffSrc},
                            {DNNL_ARG_DIFF_WEIGHTS_LAYER, diffWeightsLayer},
                            {DNNL_ARG_DIFF_WEIGHTS_ITER, diffWeightsIter},
                            {DNNL_ARG_DIFF_BIAS, diffBias}});
  }

  /// Gradients' squared norm: the bias gradient counts twice (b_ih and b_hh).
  double squaredNorm() const {
    return sumOfSquares(dataOf(diffWeightsLayer),
                        elementsOf(diffWeightsLayer)) +
           sumOfSquares(dataOf(diffWeightsIter), elementsOf(diffWeightsIter)) +
           2 * sumOfSquares(dataOf(diffBias), elementsOf(diffBias));
  }

  void update(float step) {
    descend(dataOf(weightsLayer), dataOf(diffWeightsLayer),
            elementsOf(weightsLayer), step);
    descend(dataOf(weightsIter), dataOf(diffWeightsIter),
            elementsOf(weightsIter), step);
    descend(biasIh.data(), dataOf(diffBias), biasIh.size(), step);
    descend(biasHh.data(), dataOf(diffBias), biasHh.size(), step);
  }

  /// The weights under their PyTorch names and layouts.
  void appendWeights(std::vector<std::vector<float>> &storage,
                     std::vector<bench::NamedTensor> &tensors) const {
    const float *layerData = dataOf(weightsLayer),
                *iterData = dataOf(weightsIter);
    for (memory::dim l = 0; l < L; ++l) {
      std::string suffix = "_l" + std::to_string(first + l);
      std::vector<float> wIh(4 * H * I), wHh(4 * H * H);
      bench::fromLdigo(layerData, l, I, H, wIh.data());
      bench::fromLdigo(iterData, l, H, H, wHh.data());
      storage.push_back(std::move(wIh));
      tensors.push_back(
          {"lstm.weight_ih" + suffix, {4 * H, I}, storage.back().data()});
      storage.push_back(std::move(wHh));
      tensors.push_back(
          {"lstm.weight_hh" + suffix, {4 * H, H}, storage.back().data()});
      tensors.push_back(
          {"lstm.bias_ih" + suffix, {4 * H}, biasIh.data() + l * 4 * H});
      tensors.push_back(
          {"lstm.bias_hh" + suffix, {4 * H}, biasHh.data() + l * 4 * H});
    }
  }
};

} // namespace

void bench::runOnednnTraining(const Options &options, const Model &model,
                              const nlohmann::json &versions) {
  auto setupStart = std::chrono::steady_clock::now();
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  memory::dim T = model.seq, B = model.batch, E = model.inputSize,
              H = model.hidden, V = model.vocab, N = T * B;

  memory::desc srcDesc({T, B, E}, f32, Tag::tnc);
  memory src(srcDesc, eng);
  std::vector<LstmStage> stages;
  stages.emplace_back(eng, model, 0, 1, srcDesc);
  if (model.layers.size() > 1)
    stages.emplace_back(eng, model, 1, model.layers.size() - 1,
                        memory::desc({T, B, H}, f32, Tag::tnc));

  // The projection: logits [N, V] = y [N, H] · proj.weightᵀ + proj.bias.
  memory::desc yDesc({N, H}, f32, Tag::nc), logitsDesc({N, V}, f32, Tag::nc);
  memory::desc weightsPlain({V, H}, f32, Tag::oi), biasDesc({V}, f32, Tag::x);
  memory::desc weightsAny({V, H}, f32, Tag::any);
  inner_product_forward::primitive_desc projectionPd(
      inner_product_forward::desc(prop_kind::forward_training, yDesc,
                                  weightsAny, biasDesc, logitsDesc),
      eng);
  inner_product_backward_data::primitive_desc projectionDataPd(
      inner_product_backward_data::desc(yDesc, weightsAny, logitsDesc), eng,
      projectionPd);
  inner_product_backward_weights::primitive_desc projectionWeightsPd(
      inner_product_backward_weights::desc(yDesc, weightsPlain, biasDesc,
                                           logitsDesc),
      eng, projectionPd);
  if (projectionWeightsPd.diff_weights_desc() != weightsPlain)
    die("oneDNN's inner_product_backward_weights did not take oi gradients");
  inner_product_forward projection(projectionPd);
  inner_product_backward_data projectionData(projectionDataPd);
  inner_product_backward_weights projectionWeights(projectionWeightsPd);
  // The last stage's [T, B, H] is the projection's [N, H] as it lies, and
  // the gradient of one is the other's.
  memory y(yDesc, eng, stages.back().dst.get_data_handle());
  memory diffY(yDesc, eng);
  memory diffLastDst(memory::desc({T, B, H}, f32, Tag::tnc), eng,
                     diffY.get_data_handle());
  memory projWeights(weightsPlain, eng), projBias(biasDesc, eng);
  std::memcpy(dataOf(projWeights), model.projWeight.data.data(),
              model.projWeight.data.size() * sizeof(float));
  std::memcpy(dataOf(projBias), model.projBias.data.data(),
              model.projBias.data.size() * sizeof(float));
  memory forwardProjWeights(projectionPd.weights_desc(), eng);
  memory backwardProjWeights(projectionDataPd.weights_desc(), eng);
  memory logits(logitsDesc, eng), diffProjWeights(weightsPlain, eng),
      diffProjBias(biasDesc, eng);

  // Softmax of the logits, in place: the loss reads it at the targets, and
  // (softmax - one_hot) / N is the logits' gradient.
  softmax_forward softmax(softmax_forward::primitive_desc(
      softmax_forward::desc(prop_kind::forward_training, logitsDesc, 1), eng));
  float invTokens = 1.0f / float(N);
  eltwise_forward scale(eltwise_forward::primitive_desc(
      eltwise_forward::desc(prop_kind::forward_inference,
                            algorithm::eltwise_linear, logitsDesc, invTokens,
                            0.0f),
      eng));

  std::vector<float> embedding = model.embedding.data;
  std::vector<float> diffEmbedding(embedding.size());
  double setupSeconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - setupStart)
                            .count();

  float loss = 0;
  auto step = [&] {
    // Forward.
    float *rows = dataOf(src);
    for (memory::dim i = 0; i < N; ++i)
      std::memcpy(rows + i * E, embedding.data() + model.tokens[i] * E,
                  E * sizeof(float));
    for (LstmStage &stage : stages)
      stage.prepare(strm);
    reorder(projWeights, forwardProjWeights)
        .execute(strm, projWeights, forwardProjWeights);
    reorder(projWeights, backwardProjWeights)
        .execute(strm, projWeights, backwardProjWeights);
    const memory *input = &src;
    for (LstmStage &stage : stages) {
      stage.runForward(strm, *input);
      input = &stage.dst;
    }
    projection.execute(strm, {{DNNL_ARG_SRC, y},
                              {DNNL_ARG_WEIGHTS, forwardProjWeights},
                              {DNNL_ARG_BIAS, projBias},
                              {DNNL_ARG_DST, logits}});
    softmax.execute(strm, {{DNNL_ARG_SRC, logits}, {DNNL_ARG_DST, logits}});
    strm.wait();
    float *probabilities = dataOf(logits);
    double total = 0;
    for (memory::dim i = 0; i < N; ++i)
      total -= std::log(double(probabilities[i * V + model.targets[i]]));
    loss = float(total / double(N));

    // Backward.
    scale.execute(strm, {{DNNL_ARG_SRC, logits}, {DNNL_ARG_DST, logits}});
    strm.wait();
    for (memory::dim i = 0; i < N; ++i)
      probabilities[i * V + model.targets[i]] -= invTokens;
    projectionWeights.execute(strm, {{DNNL_ARG_SRC, y},
                                     {DNNL_ARG_DIFF_DST, logits},
                                     {DNNL_ARG_DIFF_WEIGHTS, diffProjWeights},
                                     {DNNL_ARG_DIFF_BIAS, diffProjBias}});
    projectionData.execute(strm, {{DNNL_ARG_DIFF_DST, logits},
                                  {DNNL_ARG_WEIGHTS, backwardProjWeights},
                                  {DNNL_ARG_DIFF_SRC, diffY}});
    const memory *diffDst = &diffLastDst;
    for (size_t s = stages.size(); s-- > 0;) {
      stages[s].runBackward(strm, s == 0 ? src : stages[s - 1].dst, *diffDst);
      diffDst = &stages[s].diffSrc;
    }
    strm.wait();
    std::fill(diffEmbedding.begin(), diffEmbedding.end(), 0.0f);
    const float *diffRows = dataOf(stages[0].diffSrc);
    for (memory::dim i = 0; i < N; ++i) {
      float *row = diffEmbedding.data() + model.tokens[i] * E;
      for (memory::dim e = 0; e < E; ++e)
        row[e] += diffRows[i * E + e];
    }

    // clip_grad_norm_ and SGD.
    double squared =
        sumOfSquares(diffEmbedding.data(), diffEmbedding.size()) +
        sumOfSquares(dataOf(diffProjWeights), elementsOf(diffProjWeights)) +
        sumOfSquares(dataOf(diffProjBias), elementsOf(diffProjBias));
    for (const LstmStage &stage : stages)
      squared += stage.squaredNorm();
    double coefficient = 1;
    if (options.clipNorm > 0)
      coefficient =
          std::min(1.0, options.clipNorm / (std::sqrt(squared) + 1e-6));
    float stepSize = float(options.lr * coefficient);
    descend(embedding.data(), diffEmbedding.data(), embedding.size(), stepSize);
    descend(dataOf(projWeights), dataOf(diffProjWeights),
            elementsOf(projWeights), stepSize);
    descend(dataOf(projBias), dataOf(diffProjBias), elementsOf(projBias),
            stepSize);
    for (LstmStage &stage : stages)
      stage.update(stepSize);
  };

  // The first step is the one checked: its loss and the weights after it.
  step();
  std::vector<std::vector<float>> storage;
  std::vector<NamedTensor> outputs = {
      {"loss", {}, &loss}, {"embedding.weight", {V, E}, embedding.data()}};
  for (const LstmStage &stage : stages)
    stage.appendWeights(storage, outputs);
  outputs.push_back({"proj.weight", {V, H}, dataOf(projWeights)});
  outputs.push_back({"proj.bias", {V}, dataOf(projBias)});
  writeOutputs(options, outputs);

  std::vector<double> times = timeBatches(options, step);
  std::vector<std::string> notes = {
      "compile_s: primitive creation (oneDNN JIT)",
      "the first step (checked) runs before the warm-up steps",
      "weights reordered into the primitives' layouts at every step; "
      "embedding gather and scatter, loss, gradient norm and SGD update as "
      "single-threaded loops"};
  if (stages.size() > 1)
    notes.push_back("layers 1.." + std::to_string(model.layers.size() - 1) +
                    " in one lstm_forward/lstm_backward pair after layer 0's");
  report(times, setupSeconds, versions, notes);
}
