//===- ShapeCheckerTest.cpp - Symbolic shape checks -----------------------===//

#include "recur/IR/ShapeChecker.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::recur;

namespace {
class ShapeCheckerTest : public ::testing::Test {
protected:
  RankedTensorType tensor(ArrayRef<int64_t> shape, Type element = {}) {
    return RankedTensorType::get(shape, element ? element
                                                : Float32Type::get(&context));
  }

  /// A checker that records its messages instead of reporting them.
  ShapeChecker recording() {
    return ShapeChecker(
        [this] { return mlir::emitError(UnknownLoc::get(&context)); });
  }

  void SetUp() override {
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &context, [this](Diagnostic &d) {
          messages.push_back(d.str());
          return success();
        });
  }

  MLIRContext context;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::vector<std::string> messages;
};

TEST_F(ShapeCheckerTest, LearnsSymbolsFromTheFirstStaticDimension) {
  ShapeChecker checker = recording();
  ASSERT_TRUE(succeeded(
      checker.checkShape("x", tensor({ShapedType::kDynamic, 8}), {"B", "H"})));
  ASSERT_TRUE(
      succeeded(checker.checkShape("w", tensor({32, 8}), {{"H", 4}, "H"})));
  EXPECT_EQ(checker.sizesOf({"B", {"H", 4}}),
            (SmallVector<int64_t>{ShapedType::kDynamic, 32}));
  ASSERT_TRUE(succeeded(checker.checkShape("h", tensor({3, 8}), {"B", "H"})));
  EXPECT_EQ(checker.sizesOf({"B"}), (SmallVector<int64_t>{3}));
  EXPECT_TRUE(messages.empty());
}

TEST_F(ShapeCheckerTest, MismatchNamesTheValueAndBothShapes) {
  ShapeChecker checker = recording();
  ASSERT_TRUE(
      succeeded(checker.checkShape("operand 'x'", tensor({2, 8}), {"B", "H"})));
  EXPECT_TRUE(
      failed(checker.checkShape("operand 'h0'", tensor({5, 8}), {"B", "H"})));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0],
            "operand 'h0' expected shape [B, H] = [2, 8], got [5, 8]");
}

TEST_F(ShapeCheckerTest, ConflictWithinOneValueIsReported) {
  ShapeChecker checker = recording();
  EXPECT_TRUE(failed(checker.checkShape("w", tensor({3, 4}), {"H", "H"})));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "w expected shape [H, H] = [3, 3], got [3, 4]");
}

TEST_F(ShapeCheckerTest, FactorMustDivide) {
  ShapeChecker checker = recording();
  EXPECT_TRUE(failed(checker.checkShape("b", tensor({6}), {{"H", 4}})));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "b dimension 0 (4*H) must be a multiple of 4, got 6");
}

TEST_F(ShapeCheckerTest, FailedCheckLearnsNothing) {
  ShapeChecker checker = recording();
  EXPECT_TRUE(failed(checker.checkShape("w", tensor({3, 4}), {"H", "H"})));
  EXPECT_EQ(checker.sizesOf({"H"}),
            (SmallVector<int64_t>{ShapedType::kDynamic}));
}

TEST_F(ShapeCheckerTest, FloatElementTypeIsShared) {
  ShapeChecker checker = recording();
  ASSERT_TRUE(
      succeeded(checker.checkFloatElementType("operand 'x'", tensor({1}))));
  EXPECT_TRUE(failed(checker.checkFloatElementType(
      "operand 'w'", tensor({1}, Float16Type::get(&context)))));
  EXPECT_TRUE(failed(checker.checkFloatElementType(
      "operand 'i'", tensor({1}, IntegerType::get(&context, 64)))));
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0], "operand 'w' expected element type 'f32' (that of "
                         "operand 'x'), got 'f16'");
  EXPECT_EQ(messages[1],
            "operand 'i' must have a floating-point element type, got 'i64'");
}

TEST_F(ShapeCheckerTest, SilentCheckerReportsNothing) {
  ShapeChecker checker;
  EXPECT_TRUE(failed(checker.checkShape("w", tensor({3}), {"H", "H"})));
  EXPECT_TRUE(failed(checker.checkRankAtLeast(
      "w", UnrankedTensorType::get(Float32Type::get(&context)), 1)));
  EXPECT_TRUE(messages.empty());
}

TEST_F(ShapeCheckerTest, LeadingDimsAreNumbered) {
  SymbolicShape dims = leadingDims(3);
  ASSERT_EQ(dims.size(), 3u);
  EXPECT_EQ(dims[0].symbol, "d0");
  EXPECT_EQ(dims[2].symbol, "d2");
  EXPECT_TRUE(leadingDims(0).empty());
}
} // namespace
