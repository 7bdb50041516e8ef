//===- ModelGenTest.cpp - recur-gen's model builders ----------------------===//

#include "recur/Gen/ModelGen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "recur/IR/RecurOps.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::recur;

namespace {

/// The external names of `function`'s arguments, in order.
std::vector<std::string> argumentNames(func::FuncOp function) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    DictionaryAttr attrs = function.getArgAttrDict(i);
    for (NamedAttribute attr : attrs)
      names.push_back(cast<StringAttr>(attr.getValue()).str());
  }
  return names;
}

TEST(ModelGenTest, LstmLmMatchesThePyTorchStateDict) {
  MLIRContext context;
  LstmLmConfig config;
  config.vocab = 11;
  config.embed = 5;
  config.hidden = 3;
  config.layers = 2;
  config.seq = 7;
  ASSERT_EQ(validate(config), "");
  OwningOpRef<ModuleOp> module = buildLstmLm(context, config);
  ASSERT_TRUE(succeeded(verify(*module)));

  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  ASSERT_TRUE(forward);
  std::vector<std::string> expected = {"tokens",
                                       "embedding.weight",
                                       "lstm.weight_ih_l0",
                                       "lstm.weight_hh_l0",
                                       "lstm.bias_ih_l0",
                                       "lstm.bias_hh_l0",
                                       "lstm.weight_ih_l1",
                                       "lstm.weight_hh_l1",
                                       "lstm.bias_ih_l1",
                                       "lstm.bias_hh_l1",
                                       "proj.weight",
                                       "proj.bias"};
  EXPECT_EQ(argumentNames(forward), expected);

  constexpr int64_t kDyn = ShapedType::kDynamic;
  Type f32 = Float32Type::get(&context);
  EXPECT_EQ(forward.getArgumentTypes()[0],
            RankedTensorType::get({7, kDyn}, IntegerType::get(&context, 64)));
  EXPECT_EQ(forward.getArgumentTypes()[6], RankedTensorType::get({12, 3}, f32));
  EXPECT_EQ(forward.getResultTypes()[0],
            RankedTensorType::get({7, kDyn, 11}, f32));
  EXPECT_EQ(
      forward.getResultAttrOfType<StringAttr>(0, RecurDialect::kOutputAttrName)
          .getValue(),
      "logits");

  int lstmLayers = 0;
  forward.walk([&](LSTMOp) { ++lstmLayers; });
  EXPECT_EQ(lstmLayers, 2);
}

TEST(ModelGenTest, LstmStackUsesBareNnLstmNames) {
  MLIRContext context;
  LstmStackConfig config;
  config.input = 4;
  config.hidden = 6;
  config.layers = 1;
  config.batch = 2;
  config.dtype = "bf16";
  OwningOpRef<ModuleOp> module = buildLstmStack(context, config);
  ASSERT_TRUE(succeeded(verify(*module)));
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  std::vector<std::string> expected = {"input", "weight_ih_l0", "weight_hh_l0",
                                       "bias_ih_l0", "bias_hh_l0"};
  EXPECT_EQ(argumentNames(forward), expected);
  EXPECT_EQ(forward.getResultTypes()[0],
            RankedTensorType::get({ShapedType::kDynamic, 2, 6},
                                  BFloat16Type::get(&context)));
}

TEST(ModelGenTest, InvalidConfigurationsNameTheFlag) {
  LstmLmConfig lm;
  lm.hidden = 0;
  EXPECT_EQ(validate(lm), "--hidden must be between 1 and 2147483647, got 0");
  lm.hidden = 256;
  lm.batch = -3;
  EXPECT_EQ(validate(lm), "--batch must be between 1 and 2147483647, got -3");
  lm.batch.reset();
  lm.dtype = "f8";
  EXPECT_EQ(validate(lm), "--dtype must be f32, f16 or bf16, got 'f8'");

  LstmStackConfig stack;
  stack.input = int64_t(1) << 40;
  EXPECT_EQ(validate(stack),
            "--input must be between 1 and 2147483647, got 1099511627776");
  stack.input = 8;
  stack.layers = 0;
  EXPECT_EQ(validate(stack),
            "--layers must be between 1 and 2147483647, got 0");
}
} // namespace
