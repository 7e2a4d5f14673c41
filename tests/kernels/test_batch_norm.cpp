// The BatchNormalization kernel (kernels/batch_norm.h) against its formulas in double, on
// channel counts that group rows differently (3 and 24 channels: 32 and 4 rows to a group;
// 16: 2; 64: 1) and row counts that leave a last, shorter group; float32 and bfloat16, with and
// without the fused ReLU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/batch_norm.h"
#include "kernels/bfloat16.h"
#include "support/check.h"

namespace tenfold::kernels {
namespace {

using testing::random_values;

/// `values` stored in `dtype` (bfloat16: rounded) and read back as doubles.
struct Stored {
  std::vector<std::byte> bytes;
  std::vector<double> values;
};

Stored store(const std::vector<double>& values, DType dtype) {
  Stored stored{std::vector<std::byte>(values.size() * dtype_size(dtype)), {}};
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::bfloat16) {
      const uint16_t bits = bfloat16_bits(float(values[i]));
      std::memcpy(stored.bytes.data() + 2 * i, &bits, 2);
      stored.values.push_back(float_from_bits(bits));
    } else {
      const float value = float(values[i]);
      std::memcpy(stored.bytes.data() + 4 * i, &value, 4);
      stored.values.push_back(value);
    }
  }
  return stored;
}

double read(const std::vector<std::byte>& bytes, size_t i, DType dtype) {
  if (dtype == DType::float32) {
    float value;
    std::memcpy(&value, bytes.data() + 4 * i, 4);
    return value;
  }
  uint16_t bits;
  std::memcpy(&bits, bytes.data() + 2 * i, 2);
  return float_from_bits(bits);
}

TEST(BatchNormKernel, ComputesItsFormulasOnEveryChannelCountAndRowCount) {
  for (int64_t channels : {3, 16, 24, 64}) {
    for (int64_t rows : {1, 37, 70}) {
      for (DType dtype : {DType::float32, DType::bfloat16}) {
        for (bool relu : {false, true}) {
          SCOPED_TRACE(std::to_string(channels) + " channels, " + std::to_string(rows) + " rows, " +
                       dtype_name(dtype) + (relu ? ", relu" : ""));
          const size_t n = size_t(rows * channels), c_count = size_t(channels);
          const Stored x = store(random_values(n, 1, -1, 3), dtype);
          const Stored dy = store(random_values(n, 2), dtype);
          const std::vector<double> gamma_values = random_values(c_count, 3, 0.5, 1.5);
          const std::vector<double> beta_values = random_values(c_count, 4, -0.5, 0.5);
          const std::vector<float> gamma(gamma_values.begin(), gamma_values.end());
          const std::vector<float> beta(beta_values.begin(), beta_values.end());
          BatchNormKernel kernel({.rows = rows, .channels = channels, .dtype = dtype, .relu = relu});
          std::vector<double> sums(2 * c_count);
          std::vector<float> mean(c_count), variance(c_count), diff_gamma(c_count), diff_beta(c_count);
          std::vector<std::byte> y(x.bytes.size()), dx(x.bytes.size());
          kernel.forward_sums(x.bytes.data(), sums.data());
          kernel.statistics_from(sums.data(), double(rows), mean.data(), variance.data());
          kernel.normalize(x.bytes.data(), mean.data(), variance.data(), gamma.data(), beta.data(), y.data());
          kernel.backward_sums(x.bytes.data(), dy.bytes.data(), sums.data());
          kernel.backward_through_statistics(x.bytes.data(), dy.bytes.data(), mean.data(), variance.data(),
                                             gamma.data(), sums.data(), double(rows), sums.data(), dx.data(),
                                             diff_gamma.data(), diff_beta.data());
          // Rounding of the stored output: float32's or bfloat16's.
          const double unit = dtype == DType::bfloat16 ? 1.0 / 128 : 1e-6;
          for (size_t c = 0; c < c_count; ++c) {
            double m = 0, v = 0;
            for (size_t r = 0; r < size_t(rows); ++r) m += x.values[r * c_count + c];
            m /= double(rows);
            for (size_t r = 0; r < size_t(rows); ++r) v += std::pow(x.values[r * c_count + c] - m, 2);
            v /= double(rows);
            EXPECT_NEAR(mean[c], m, 1e-6 * (1 + std::fabs(m)));
            EXPECT_NEAR(variance[c], v, 1e-6 * (1 + v));
            const double inv_std = 1 / std::sqrt(v + 1e-3);
            // Forward, and the gradient that reaches the normalization.
            std::vector<double> xhat(static_cast<size_t>(rows)), g(static_cast<size_t>(rows));
            double sum_g = 0, sum_g_xhat = 0;
            for (size_t r = 0; r < size_t(rows); ++r) {
              const size_t i = r * c_count + c;
              xhat[r] = (x.values[i] - m) * inv_std;
              const double expected = gamma[c] * xhat[r] + beta[c];
              // The kernel computes x * a + (beta - mean * a): its terms' size bounds the rounding.
              const double size = std::fabs(gamma[c] * inv_std) * (std::fabs(x.values[i]) + std::fabs(m));
              EXPECT_NEAR(read(y, i, dtype), relu ? std::max(expected, 0.0) : expected,
                          unit * (1 + std::fabs(expected) + size)) << "y at " << i;
              // The ReLU passes the gradient where its stored output is positive.
              g[r] = relu && read(y, i, dtype) <= 0 ? 0.0 : dy.values[i];
              sum_g += g[r];
              sum_g_xhat += g[r] * xhat[r];
            }
            EXPECT_NEAR(diff_beta[c], sum_g, 1e-5 * (1 + std::fabs(sum_g)));
            EXPECT_NEAR(diff_gamma[c], sum_g_xhat, 1e-5 * (1 + std::fabs(sum_g_xhat)));
            for (size_t r = 0; r < size_t(rows); ++r) {
              const size_t i = r * c_count + c;
              const double expected =
                  gamma[c] * inv_std * (g[r] - sum_g / double(rows) - xhat[r] * sum_g_xhat / double(rows));
              EXPECT_NEAR(read(dx, i, dtype), expected, unit * (1 + std::fabs(expected)) + 1e-5) << "dx at " << i;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tenfold::kernels
