//===- Options.cpp - recur-run's command line -----------------------------===//

#include "Options.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>

using namespace recur::run;

namespace {

constexpr const char *kUsage =
    "usage: recur-run libmodel.so (--weights w.safetensors | --random-weights "
    "SEED)\n"
    "                 [--inputs in.safetensors] [--outputs out.safetensors]\n"
    "                 [--batch B --seq T] [--threads N] [--warmup K --iters "
    "N]\n"
    "                 [--check] [--tolerance X] [--json] [--seed S]\n"
    "                 [--non-strict] [--convert-weights] [--save-weights "
    "w.safetensors]\n"
    "                 [--save-reference ref.safetensors] [--steps N]\n"
    "       recur-run --cuda-check\n"
    "Runs a model compiled by recur-compile. Weights are bound strictly "
    "(every\n"
    "tensor in the file is a weight of the model and every weight is there)\n"
    "unless --non-strict; --convert-weights rounds F32 weights to a bf16\n"
    "model's bf16. --inputs must hold every input of the model, with\n"
    "sizes that agree with --seq/--batch if given; without --inputs, inputs\n"
    "are drawn at random with --seed (default: the --random-weights seed,\n"
    "else 0). --check\n"
    "compares every output with the reference implementation and fails past\n"
    "|got - want| <= X * (1 + |want|) (default X = 1e-4; 2^-7 for bf16\n"
    "outputs or bf16 GEMMs, 2^-9 for tf32: see --precision); the relative "
    "error\n"
    "it prints is over elements with |want| >= 1e-3. --save-reference writes\n"
    "the reference's outputs (computed in double, stored as f32) the way\n"
    "--outputs writes the model's. CUDA models (recur-compile --target=cuda)\n"
    "run on device 0, or RECUR_CUDA_DEVICE; --cuda-check says whether this\n"
    "machine can run them (exit 0) or why not (exit 77).\n"
    "A training step (recur-gen --train) runs --steps N times (default 1)\n"
    "instead of --warmup/--iters, each run one SGD step on the same inputs\n"
    "that updates the weights in place; it prints every step's loss and time,\n"
    "--outputs holds each output stacked over the steps (loss [N]),\n"
    "--save-weights the weights after the last step, and --check compares the\n"
    "first step's loss and gradients (read off the weights' change) with the\n"
    "reference.\n";

int64_t parseInteger(const std::string &flag, const char *text, int64_t min,
                     int64_t max = std::numeric_limits<int64_t>::max()) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text, &end, 10);
  if (errno || end == text || *end || value < min || value > max)
    die(flag + " needs an integer " +
        (max == std::numeric_limits<int64_t>::max()
             ? "of at least " + std::to_string(min)
             : "from " + std::to_string(min) + " to " + std::to_string(max)) +
        ", got '" + text + "'");
  return value;
}

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

} // namespace

void recur::run::die(const std::string &message, int code) {
  std::fprintf(stderr, "recur-run: error: %s\n", message.c_str());
  std::exit(code);
}

void recur::run::check(RecurError *error, int code) {
  if (!error)
    return;
  std::string message = recur_error_message(error);
  recur_error_free(error);
  die(message, code);
}

Options recur::run::parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--cuda-check") {
      // For scripts: can this machine run CUDA models? (77: skip, as ctest.)
      RecurError *error = recur_cuda_check();
      std::printf("cuda: %s\n",
                  error ? recur_error_message(error) : "available");
      recur_error_free(error);
      std::exit(error ? 77 : 0);
    } else if (arg == "--weights") {
      options.weights = value();
    } else if (arg == "--random-weights") {
      options.randomWeights = parseInteger(arg, value(), 0);
    } else if (arg == "--inputs") {
      options.inputs = value();
    } else if (arg == "--outputs") {
      options.outputs = value();
    } else if (arg == "--save-weights") {
      options.saveWeights = value();
    } else if (arg == "--save-reference") {
      options.saveReference = value();
    } else if (arg == "--batch") {
      options.batch = parseInteger(arg, value(), 1);
    } else if (arg == "--seq") {
      options.seq = parseInteger(arg, value(), 1);
    } else if (arg == "--threads") {
      // Any int is passed on: the runtime's error names its range.
      options.threads =
          static_cast<int>(parseInteger(arg, value(), 0, kIntMax));
    } else if (arg == "--warmup") {
      options.warmup = static_cast<int>(parseInteger(arg, value(), 0, kIntMax));
    } else if (arg == "--iters") {
      options.iters = static_cast<int>(parseInteger(arg, value(), 1, kIntMax));
    } else if (arg == "--steps") {
      options.steps = static_cast<int>(parseInteger(arg, value(), 1, kIntMax));
    } else if (arg == "--seed") {
      options.seed = parseInteger(arg, value(), 0);
    } else if (arg == "--tolerance") {
      char *end = nullptr;
      const char *text = value();
      options.tolerance = std::strtod(text, &end);
      if (end == text || *end || !(*options.tolerance > 0))
        die("--tolerance needs a positive number, got '" + std::string(text) +
            "'");
    } else if (arg == "--check") {
      options.check = true;
    } else if (arg == "--non-strict") {
      options.nonStrict = true;
    } else if (arg == "--convert-weights") {
      options.convertWeights = true;
    } else if (arg == "--json") {
      options.json = true;
    } else if (!arg.empty() && arg[0] == '-') {
      die("unknown option '" + arg + "'\n" + kUsage);
    } else if (options.model.empty()) {
      options.model = arg;
    } else {
      die("more than one model given ('" + options.model + "', '" + arg + "')");
    }
  }
  if (options.model.empty())
    die(std::string("no model given\n") + kUsage);
  if (options.weights.has_value() == options.randomWeights.has_value())
    die("give exactly one of --weights FILE and --random-weights SEED");
  return options;
}
