#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "core/error.h"
#include "core/random.h"
#include "core/tensor.h"

namespace tenfold {
namespace {

TEST(Shape, CountsAndPrintsLikeKeras) {
  Shape shape{512, 26, 26, 32};
  EXPECT_EQ(shape.num_elements(), 512 * 26 * 26 * 32);
  EXPECT_EQ(shape.to_string(true), "(None, 26, 26, 32)");
  EXPECT_EQ(Shape{5408}.to_string(), "(5408,)");
  EXPECT_EQ(shape.without_batch().with_leading(7), (Shape{7, 26, 26, 32}));
  EXPECT_EQ(shape.with_batch(3), (Shape{3, 26, 26, 32}));
}

TEST(Tensor, IsAlignedZeroedAndSharesOnCopy) {
  Tensor tensor(Shape{3, 5});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.raw_data()) % 64, 0u);
  for (float value : tensor.values<float>()) EXPECT_EQ(value, 0.0f);
  Tensor copy = tensor;
  copy.data<float>()[4] = 2.5f;
  EXPECT_EQ(tensor.data<float>()[4], 2.5f);
  Tensor deep = tensor.clone();
  deep.data<float>()[4] = 1.0f;
  EXPECT_EQ(tensor.data<float>()[4], 2.5f);
}

TEST(Tensor, SlicesAndReshapesWithoutCopying) {
  Tensor tensor(Shape{4, 3}, DType::int32);
  for (int i = 0; i < 12; ++i) tensor.data<int32_t>()[i] = i;
  Tensor rows = tensor.slice_batch(1, 3);
  EXPECT_EQ(rows.shape(), (Shape{2, 3}));
  EXPECT_EQ(rows.data<int32_t>()[0], 3);
  EXPECT_EQ(tensor.reshaped(Shape{2, 6}).data<int32_t>(), tensor.data<int32_t>());
  EXPECT_THROW(tensor.reshaped(Shape{5}), Error);
  EXPECT_THROW(tensor.slice_batch(3, 5), Error);
}

TEST(Tensor, RejectsAccessAsAnotherType) {
  Tensor tensor(Shape{2}, DType::uint8);
  try {
    tensor.data<float>();
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(error.what()).find("uint8"), std::string::npos);
  }
}

TEST(Random, IsReproducibleAndUniform) {
  Random a(42), b(42), c(43);
  EXPECT_EQ(a.next_u64(), b.next_u64());
  EXPECT_NE(a.next_u64(), c.next_u64());
  Random random(7);
  double sum = 0;
  const int count = 100000;
  for (int i = 0; i < count; ++i) {
    float value = random.uniform();
    ASSERT_GE(value, 0.0f);
    ASSERT_LT(value, 1.0f);
    sum += value;
  }
  EXPECT_NEAR(sum / count, 0.5, 0.005);  // standard error 0.0009
}

}  // namespace
}  // namespace tenfold
