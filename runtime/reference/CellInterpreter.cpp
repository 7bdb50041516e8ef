//===- CellInterpreter.cpp - any recur.rnn cell, in double ----------------===//
//
// Runs a recur.rnn's cell region, as lib/Target/CellProgram.cpp writes it,
// step by step in double precision: linalg.generic by its indexing maps and
// scalar body, products with weights, fills, slices, reshapes. The state
// stays in double from step to step; y and the final state are rounded to
// float once, at the end. Shares no code with the compiler's lowering.
//
//===----------------------------------------------------------------------===//

#include "reference/Interpreter.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

using nlohmann::json;

namespace recur::reference {
namespace {

/// A tensor of doubles, or an index or float scalar (an empty shape and
/// one element).
struct Array {
  std::vector<int64_t> shape;
  std::vector<double> data;

  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  /// Row-major strides.
  std::vector<int64_t> strides() const {
    std::vector<int64_t> result(shape.size(), 1);
    for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
      result[i] = result[i + 1] * shape[i + 1];
    return result;
  }
};

Array fromFloats(const FloatTensor &tensor) {
  return {tensor.shape,
          std::vector<double>(tensor.data.begin(), tensor.data.end())};
}

/// A scalar function of one or two operands, resolved by name once per op.
struct ScalarFunction {
  double (*unary)(double) = nullptr;
  double (*binary)(double, double) = nullptr;
  double (*ternary)(double, double, double) = nullptr;

  size_t arity() const { return unary ? 1 : binary ? 2 : 3; }
  double operator()(const double *x) const {
    return unary    ? unary(x[0])
           : binary ? binary(x[0], x[1])
                    : ternary(x[0], x[1], x[2]);
  }
  explicit operator bool() const { return unary || binary || ternary; }
};

double maximum(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
double minimum(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

/// The function `name` (as CellProgram.cpp writes it) of `operands`
/// operands; std::invalid_argument for an unknown one or a wrong count.
ScalarFunction resolveFunction(const std::string &name, size_t operands) {
  static const std::map<std::string, double (*)(double)> unary = {
      {"neg", [](double a) { return -a; }},
      {"exp", [](double a) { return std::exp(a); }},
      {"log", [](double a) { return std::log(a); }},
      {"log1p", [](double a) { return std::log1p(a); }},
      {"tanh", [](double a) { return std::tanh(a); }},
      {"sqrt", [](double a) { return std::sqrt(a); }},
      {"rsqrt", [](double a) { return 1.0 / std::sqrt(a); }},
      {"abs", [](double a) { return std::fabs(a); }}};
  static const std::map<std::string, double (*)(double, double)> binary = {
      {"add", [](double a, double b) { return a + b; }},
      {"sub", [](double a, double b) { return a - b; }},
      {"mul", [](double a, double b) { return a * b; }},
      {"div", [](double a, double b) { return a / b; }},
      {"maximum", maximum},
      {"minimum", minimum},
      // arith.maxnumf/minnumf: a NaN operand gives the other one.
      {"maxnum", [](double a, double b) { return std::fmax(a, b); }},
      {"minnum", [](double a, double b) { return std::fmin(a, b); }},
      {"pow", [](double a, double b) { return std::pow(a, b); }},
      // arith.cmpf's ordered predicates: 1 or 0 (false for a NaN).
      {"greater", [](double a, double b) { return double(a > b); }},
      {"less", [](double a, double b) { return double(a < b); }},
      {"greater_equal", [](double a, double b) { return double(a >= b); }},
      {"less_equal", [](double a, double b) { return double(a <= b); }}};
  ScalarFunction function;
  if (name == "select")
    function.ternary = [](double condition, double a, double b) {
      return condition != 0.0 ? a : b;
    };
  else if (auto found = unary.find(name); found != unary.end())
    function.unary = found->second;
  else if (auto found = binary.find(name); found != binary.end())
    function.binary = found->second;
  else
    throw std::invalid_argument("the reference has no cell function '" + name +
                                "'");
  if (operands != function.arity())
    throw std::invalid_argument("cell op '" + name + "' takes " +
                                std::to_string(function.arity()) +
                                " operands, got " + std::to_string(operands));
  return function;
}

class CellInterpreter {
public:
  explicit CellInterpreter(const json &cell) : cell(cell) {}

  /// One step: the cell's block on `arguments`; returns what it yields.
  std::vector<Array> run(std::vector<Array> arguments) {
    const json &names = cell.at("arguments");
    if (names.size() != arguments.size())
      throw std::invalid_argument("the cell takes " +
                                  std::to_string(names.size()) +
                                  " arguments, the recurrence gives " +
                                  std::to_string(arguments.size()));
    values.clear();
    for (size_t i = 0; i < arguments.size(); ++i)
      values[names[i]] = std::move(arguments[i]);
    for (const json &op : cell.at("ops"))
      apply(op);
    std::vector<Array> result;
    for (const json &name : cell.at("yield"))
      result.push_back(get(name));
    return result;
  }

private:
  const Array &get(const json &name) const {
    auto found = values.find(name.get<std::string>());
    if (found == values.end())
      throw std::invalid_argument("cell value '" + name.get<std::string>() +
                                  "' is used before it is defined");
    return found->second;
  }
  /// A size or offset: a number, or an index value's name.
  int64_t index(const json &entry) const {
    if (entry.is_number())
      return entry.get<int64_t>();
    return int64_t(get(entry).data.at(0));
  }
  std::vector<int64_t> indices(const json &entries) const {
    std::vector<int64_t> result;
    for (const json &entry : entries)
      result.push_back(index(entry));
    return result;
  }
  void define(const json &op, Array value) {
    values[op.at("results").at(0).get<std::string>()] = std::move(value);
  }

  void apply(const json &op);
  void generic(const json &op);
  /// Copies `source` into the box of `dest` at `offsets` (insert), or the
  /// box of `source` at `offsets` into `dest` (extract).
  static void copyBox(const Array &source, Array &dest,
                      const std::vector<int64_t> &offsets, bool insert);

  const json &cell;
  std::map<std::string, Array> values;
};

void CellInterpreter::copyBox(const Array &source, Array &dest,
                              const std::vector<int64_t> &offsets,
                              bool insert) {
  const Array &box = insert ? source : dest;
  const Array &whole = insert ? dest : source;
  if (offsets.size() != whole.shape.size() ||
      box.shape.size() != whole.shape.size())
    throw std::invalid_argument("a slice's offsets or sizes do not match its "
                                "tensor's rank");
  for (size_t d = 0; d < offsets.size(); ++d)
    if (offsets[d] < 0 || offsets[d] + box.shape[d] > whole.shape[d])
      throw std::invalid_argument("a slice reaches outside its tensor");
  std::vector<int64_t> wholeStrides = whole.strides(),
                       position(box.shape.size());
  for (int64_t i = 0, n = box.size(); i < n; ++i) {
    int64_t rest = i, flat = 0;
    for (int64_t d = int64_t(box.shape.size()) - 1; d >= 0; --d) {
      position[d] = rest % box.shape[d];
      rest /= box.shape[d];
      flat += (position[d] + offsets[d]) * wholeStrides[d];
    }
    if (insert)
      dest.data[flat] = source.data[i];
    else
      dest.data[i] = source.data[flat];
  }
}

void CellInterpreter::apply(const json &op) {
  const std::string kind = op.at("op");
  if (kind == "constant") {
    define(op, Array{{}, {op.at("value").get<double>()}});
  } else if (kind == "dim") {
    const Array &source = get(op.at("source"));
    define(op,
           Array{{}, {double(source.shape.at(op.at("index").get<int64_t>()))}});
  } else if (kind == "empty") {
    Array result{indices(op.at("sizes")), {}};
    result.data.assign(result.size(), 0.0);
    define(op, std::move(result));
  } else if (kind == "fill") {
    Array result = get(op.at("init"));
    std::fill(result.data.begin(), result.data.end(),
              get(op.at("value")).data.at(0));
    define(op, std::move(result));
  } else if (kind == "linear") {
    const Array &x = get(op.at("input")), &w = get(op.at("weight"));
    const Array *bias = op.at("bias").is_null() ? nullptr : &get(op.at("bias"));
    if (x.shape.size() != 2 || w.shape.size() != 2 || x.shape[1] != w.shape[1])
      throw std::invalid_argument("cell linear: input " + formatShape(x.shape) +
                                  " and weight " + formatShape(w.shape) +
                                  " do not fit");
    int64_t rows = x.shape[0], n = w.shape[0], k = w.shape[1];
    Array result{{rows, n}, std::vector<double>(rows * n)};
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t j = 0; j < n; ++j) {
        double sum = bias ? bias->data.at(j) : 0.0;
        for (int64_t i = 0; i < k; ++i)
          sum += x.data[b * k + i] * w.data[j * k + i];
        result.data[b * n + j] = sum;
      }
    define(op, std::move(result));
  } else if (kind == "extract_slice") {
    Array result{indices(op.at("sizes")), {}};
    result.data.resize(result.size());
    copyBox(get(op.at("source")), result, indices(op.at("offsets")), false);
    // A rank-reducing slice: its unit dimensions dropped.
    std::vector<int64_t> shape;
    std::vector<int64_t> dropped = op.value("dropped", std::vector<int64_t>());
    for (size_t d = 0; d < result.shape.size(); ++d)
      if (std::find(dropped.begin(), dropped.end(), int64_t(d)) ==
          dropped.end())
        shape.push_back(result.shape[d]);
    result.shape = shape;
    define(op, std::move(result));
  } else if (kind == "insert_slice") {
    Array result = get(op.at("dest"));
    // The source as the box it fills (a rank-reducing source regains its
    // unit dimensions).
    Array source = get(op.at("source"));
    if (op.contains("sizes"))
      source.shape = indices(op.at("sizes"));
    if (source.size() != int64_t(source.data.size()))
      throw std::invalid_argument("an insert_slice's source does not fill "
                                  "its sizes");
    copyBox(source, result, indices(op.at("offsets")), true);
    define(op, std::move(result));
  } else if (kind == "reshape" || kind == "collapse" || kind == "copy") {
    Array result = get(op.at("source"));
    if (kind == "reshape") {
      result.shape = indices(op.at("sizes"));
    } else if (kind == "collapse") {
      std::vector<int64_t> shape;
      for (const json &group : op.at("groups")) {
        int64_t size = 1;
        for (const json &d : group)
          size *= result.shape.at(d.get<int64_t>());
        shape.push_back(size);
      }
      result.shape = shape;
    }
    if (result.size() != int64_t(result.data.size()))
      throw std::invalid_argument("a cell reshape changes the element count");
    define(op, std::move(result));
  } else if (kind == "concat") {
    int64_t dim = op.at("dim");
    std::vector<const Array *> inputs;
    for (const json &name : op.at("inputs"))
      inputs.push_back(&get(name));
    Array result{inputs.at(0)->shape, {}};
    result.shape[dim] = 0;
    for (const Array *input : inputs)
      result.shape[dim] += input->shape.at(dim);
    result.data.resize(result.size());
    std::vector<int64_t> offsets(result.shape.size(), 0);
    for (const Array *input : inputs) {
      copyBox(*input, result, offsets, true);
      offsets[dim] += input->shape[dim];
    }
    define(op, std::move(result));
  } else if (kind == "elementwise") {
    std::vector<const Array *> operands;
    for (const json &name : op.at("operands"))
      operands.push_back(&get(name));
    Array result{operands.at(0)->shape, {}};
    ScalarFunction function =
        resolveFunction(op.at("function"), operands.size());
    double x[3];
    for (int64_t i = 0, n = result.size(); i < n; ++i) {
      for (size_t k = 0; k < operands.size(); ++k)
        x[k] = operands[k]->data.at(i);
      result.data.push_back(function(x));
    }
    define(op, std::move(result));
  } else if (kind == "generic") {
    generic(op);
  } else {
    throw std::invalid_argument("the reference has no cell op '" + kind + "'");
  }
}

void CellInterpreter::generic(const json &op) {
  std::vector<const Array *> operands;
  for (const json &name : op.at("inputs"))
    operands.push_back(&get(name));
  std::vector<Array> outputs;
  for (const json &name : op.at("outputs"))
    outputs.push_back(get(name));
  const json &maps = op.at("maps");
  int64_t loops = op.at("loops");
  // Loop bounds from the operands' sizes along the dimensions they index.
  std::vector<int64_t> bounds(loops, -1);
  auto shapeOf = [&](size_t k) -> const std::vector<int64_t> & {
    return k < operands.size() ? operands[k]->shape
                               : outputs[k - operands.size()].shape;
  };
  for (size_t k = 0; k < maps.size(); ++k)
    for (size_t r = 0; r < maps[k].size(); ++r)
      if (maps[k][r].is_number())
        bounds[maps[k][r].get<int64_t>()] = shapeOf(k).at(r);
  for (int64_t bound : bounds)
    if (bound < 0)
      throw std::invalid_argument(
          "a cell generic has a loop no operand bounds");
  // Flat offset of operand k at the loop position.
  std::vector<int64_t> position(loops, 0);
  std::vector<std::vector<int64_t>> strides;
  for (size_t k = 0; k < maps.size(); ++k) {
    Array probe{shapeOf(k), {}};
    strides.push_back(probe.strides());
  }
  // Each map's results as (loop, constant): the loop's index, or the
  // constant where the loop is -1.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> terms(maps.size());
  for (size_t k = 0; k < maps.size(); ++k)
    for (const json &entry : maps[k])
      terms[k].push_back(
          entry.is_number()
              ? std::make_pair(entry.get<int64_t>(), int64_t(0))
              : std::make_pair(int64_t(-1),
                               entry.at("constant").get<int64_t>()));
  auto offset = [&](size_t k) {
    int64_t flat = 0;
    for (size_t r = 0; r < terms[k].size(); ++r) {
      auto [loop, constant] = terms[k][r];
      flat += (loop >= 0 ? position[loop] : constant) * strides[k][r];
    }
    return flat;
  };
  // The body, resolved once: its values in numbered slots (the block's
  // arguments, each op's result, and scalars of the cell around it that
  // the body reads, such as a constant defined before the generic), its ops
  // as functions of slots.
  const json &body = op.at("body");
  std::map<std::string, size_t> slotOf;
  std::vector<double> slots;
  for (const json &name : body.at("arguments")) {
    slotOf.emplace(name.get<std::string>(), slots.size());
    slots.push_back(0.0);
  }
  if (slots.size() != maps.size())
    throw std::invalid_argument(
        "a cell generic's body takes " + std::to_string(slots.size()) +
        " arguments for " + std::to_string(maps.size()) + " operands");
  auto slot = [&](const json &name) {
    std::string key = name.get<std::string>();
    if (auto found = slotOf.find(key); found != slotOf.end())
      return found->second;
    auto outer = values.find(key);
    if (outer == values.end() || !outer->second.shape.empty())
      throw std::invalid_argument("cell scalar '" + key +
                                  "' is used before it is defined");
    slotOf.emplace(key, slots.size());
    slots.push_back(outer->second.data.at(0));
    return slots.size() - 1;
  };
  struct Step {
    ScalarFunction function; // none: a constant
    double constant = 0;
    size_t operands[3] = {0, 0, 0};
    size_t result = 0;
  };
  std::vector<Step> steps;
  for (const json &scalarOp : body.at("ops")) {
    Step step;
    if (scalarOp.at("op") == "constant") {
      step.constant = scalarOp.at("value");
    } else {
      const json &names = scalarOp.at("operands");
      step.function = resolveFunction(scalarOp.at("op"), names.size());
      for (size_t k = 0; k < names.size(); ++k)
        step.operands[k] = slot(names[k]);
    }
    step.result = slots.size();
    slotOf.emplace(scalarOp.at("results").at(0).get<std::string>(),
                   step.result);
    slots.push_back(0.0);
    steps.push_back(step);
  }
  std::vector<size_t> yielded;
  for (const json &name : body.at("yield"))
    yielded.push_back(slot(name));
  if (yielded.size() != outputs.size())
    throw std::invalid_argument(
        "a cell generic yields " + std::to_string(yielded.size()) +
        " values for " + std::to_string(outputs.size()) + " outputs");
  int64_t total = 1;
  for (int64_t bound : bounds)
    total *= bound;
  for (int64_t iteration = 0; iteration < total; ++iteration) {
    int64_t rest = iteration;
    for (int64_t d = loops - 1; d >= 0; --d) {
      position[d] = rest % bounds[d];
      rest /= bounds[d];
    }
    for (size_t k = 0; k < maps.size(); ++k)
      slots[k] = k < operands.size()
                     ? operands[k]->data.at(offset(k))
                     : outputs[k - operands.size()].data.at(offset(k));
    for (const Step &step : steps) {
      double x[3] = {slots[step.operands[0]], slots[step.operands[1]],
                     slots[step.operands[2]]};
      slots[step.result] = step.function ? step.function(x) : step.constant;
    }
    for (size_t k = 0; k < outputs.size(); ++k)
      outputs[k].data.at(offset(operands.size() + k)) = slots[yielded[k]];
  }
  const json &results = op.at("results");
  for (size_t k = 0; k < outputs.size(); ++k)
    values[results.at(k).get<std::string>()] = std::move(outputs[k]);
}

} // namespace

std::vector<FloatTensor>
rnnRegion(const json &cell, const FloatTensor &input,
          const std::vector<const FloatTensor *> &init,
          const std::vector<const FloatTensor *> &captures, bool reverse,
          int64_t outputSize, const IdTensor *lengths) {
  if (input.shape.size() != 3)
    throw std::invalid_argument("'input' of a recurrence expected rank 3 "
                                "[T, B, I], got shape " +
                                formatShape(input.shape));
  int64_t steps = input.dim(0), batch = input.dim(1), size = input.dim(2);
  std::vector<Array> state;
  for (const FloatTensor *value : init)
    state.push_back(fromFloats(*value));
  std::vector<Array> capturedArrays;
  for (const FloatTensor *value : captures)
    capturedArrays.push_back(fromFloats(*value));
  std::vector<int64_t> rowLengths = sequenceLengths(lengths, steps, batch);
  CellInterpreter interpreter(cell);
  Array y{{steps, batch, outputSize},
          std::vector<double>(steps * batch * outputSize)};
  for (int64_t step = 0; step < steps; ++step) {
    int64_t t = reverse ? steps - 1 - step : step;
    Array x{{batch, size},
            std::vector<double>(input.data.begin() + t * batch * size,
                                input.data.begin() + (t + 1) * batch * size)};
    std::vector<Array> arguments = {std::move(x)};
    arguments.insert(arguments.end(), state.begin(), state.end());
    arguments.insert(arguments.end(), capturedArrays.begin(),
                     capturedArrays.end());
    std::vector<Array> yielded = interpreter.run(std::move(arguments));
    if (yielded.size() != 1 + state.size())
      throw std::invalid_argument("the cell yields " +
                                  std::to_string(yielded.size()) +
                                  " values; expected y_t and " +
                                  std::to_string(state.size()) + " states");
    const Array &output = yielded[0];
    if (output.shape.size() != 2 || output.shape[0] != batch)
      throw std::invalid_argument(
          "the cell's y_t has shape " + formatShape(output.shape) +
          ", expected [B, n] with B = " + std::to_string(batch));
    if (output.shape[1] != outputSize)
      throw std::invalid_argument(
          "the cell's y_t has " + std::to_string(output.shape[1]) +
          " columns; the recurrence's y has " + std::to_string(outputSize));
    std::copy(output.data.begin(), output.data.end(),
              y.data.begin() + t * output.size());
    for (size_t k = 0; k < state.size(); ++k) {
      if (yielded[k + 1].shape != state[k].shape)
        throw std::invalid_argument(
            "the cell yields state " + std::to_string(k) + " of shape " +
            formatShape(yielded[k + 1].shape) + ", expected " +
            formatShape(state[k].shape));
      // Past its length a row keeps its state, and its output is zero.
      for (int64_t b = 0; b < int64_t(rowLengths.size()); ++b)
        if (t >= rowLengths[b]) {
          int64_t width = state[k].shape[1];
          std::copy_n(state[k].data.begin() + b * width, width,
                      yielded[k + 1].data.begin() + b * width);
        }
      state[k] = std::move(yielded[k + 1]);
    }
    for (int64_t b = 0; b < int64_t(rowLengths.size()); ++b)
      if (t >= rowLengths[b])
        std::fill_n(y.data.begin() + (t * batch + b) * outputSize, outputSize,
                    0.0);
  }
  auto toFloats = [](const Array &array) {
    return FloatTensor(
        array.shape, std::vector<float>(array.data.begin(), array.data.end()));
  };
  std::vector<FloatTensor> results;
  results.push_back(toFloats(y));
  for (const Array &value : state)
    results.push_back(toFloats(value));
  return results;
}

std::vector<FloatTensor>
tensorProgram(const json &program,
              const std::vector<const FloatTensor *> &arguments) {
  std::vector<Array> arrays;
  for (const FloatTensor *value : arguments)
    arrays.push_back(fromFloats(*value));
  std::vector<FloatTensor> results;
  for (const Array &array : CellInterpreter(program).run(std::move(arrays)))
    results.emplace_back(
        array.shape, std::vector<float>(array.data.begin(), array.data.end()));
  return results;
}

} // namespace recur::reference
