//===- OpBuildersTest.cpp - recur op builders infer their result types ----===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "recur/IR/RecurOps.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::recur;

namespace {
class OpBuildersTest : public ::testing::Test {
protected:
  OpBuildersTest() : builder(&context) {
    context.loadDialect<RecurDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A function whose arguments have `types`; the builder points into its body.
  ValueRange arguments(ArrayRef<Type> types) {
    auto function = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                         builder.getFunctionType(types, {}));
    Block *entry = function.addEntryBlock();
    builder.setInsertionPointToStart(entry);
    func::ReturnOp::create(builder, builder.getUnknownLoc());
    builder.setInsertionPointToStart(entry);
    return entry->getArguments();
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  static constexpr int64_t kDyn = ShapedType::kDynamic;
  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(OpBuildersTest, LSTMInfersDynamicTimeAndStaticBatchFromState) {
  ValueRange args = arguments({f32({kDyn, kDyn, 5}), f32({12, 5}), f32({12, 3}),
                               f32({12}), f32({12}), f32({7, 3})});
  auto lstm = LSTMOp::create(builder, builder.getUnknownLoc(), args[0], args[1],
                             args[2], args[3], args[4], /*h0=*/args[5]);
  // B comes from h0 although the input's batch is dynamic.
  EXPECT_EQ(lstm.getY().getType(), f32({kDyn, 7, 3}));
  EXPECT_EQ(lstm.getHN().getType(), f32({7, 3}));
  EXPECT_EQ(lstm.getCN().getType(), f32({7, 3}));
  EXPECT_FALSE(lstm.getC0());
  EXPECT_EQ(lstm.getHiddenSize(), 3);
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(OpBuildersTest, EmbeddingLinearAndLossCompose) {
  ValueRange args =
      arguments({RankedTensorType::get({4, 2}, builder.getI64Type()),
                 f32({10, 6}), f32({10, 6}), f32({10})});
  Location loc = builder.getUnknownLoc();
  Value x = EmbeddingOp::create(builder, loc, args[1], args[0]);
  EXPECT_EQ(x.getType(), f32({4, 2, 6}));
  Value logits = LinearOp::create(builder, loc, x, args[2], args[3]);
  EXPECT_EQ(logits.getType(), f32({4, 2, 10}));
  Value logProbs = LogSoftmaxOp::create(builder, loc, logits);
  EXPECT_EQ(logProbs.getType(), logits.getType());
  Value mean = CrossEntropyOp::create(builder, loc, logits, args[0]);
  EXPECT_EQ(mean.getType(), f32({}));
  Value perToken =
      CrossEntropyOp::create(builder, loc, logits, args[0], Reduction::none);
  EXPECT_EQ(perToken.getType(), f32({4, 2}));
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(OpBuildersTest, InvalidOperandsBuildAnOpTheVerifierRejects) {
  ValueRange args = arguments({f32({2, 5}), f32({3, 4})});
  auto linear =
      LinearOp::create(builder, builder.getUnknownLoc(), args[0], args[1]);
  EXPECT_TRUE(isa<UnrankedTensorType>(linear.getType()));
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(verify(*module)));
  EXPECT_EQ(message, "'recur.linear' op operand 'weight' expected shape [N, K] "
                     "= [3, 5], got [3, 4]");
}

TEST_F(OpBuildersTest, InferResultTypesRefinesAfterOperandChange) {
  ValueRange args = arguments({f32({kDyn, 4}), f32({3, 4})});
  auto linear =
      LinearOp::create(builder, builder.getUnknownLoc(), args[0], args[1]);
  EXPECT_EQ(linear.getType(), f32({kDyn, 3}));
  args[0].setType(f32({9, 4}));
  auto inference = cast<ResultTypeInference>(linear.getOperation());
  EXPECT_EQ(inference.inferResultTypes(), SmallVector<Type>{f32({9, 3})});
}
} // namespace
