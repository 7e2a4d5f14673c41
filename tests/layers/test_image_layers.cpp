// Keras' image preprocessing layers against the values Keras (TensorFlow backend) gives. The
// random ones with degenerate factor ranges, where the draw is exact: translation, rotation
// and zoom with each fill mode and interpolation, contrast with clipping; identity at
// inference; backward the adjoint of forward for a step's draws; flips whole-image. Resizing
// and CenterCrop: bilinear and nearest with half-pixel centres, aspect-ratio windows.
// RandomCrop: a window of the input at every offset, one per batch, else Keras' smart resize.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "layers/input.h"
#include "layers/registry.h"
#include "layers/random_image.h"
#include "layers/resizing.h"
#include "losses/loss.h"
#include "models/sequential.h"
#include "optimizers/sgd.h"
#include "support/check.h"
#include "support/layer_test.h"

namespace tenfold {
namespace {

using nlohmann::json;
using testing::random_tensor;

/// `layer` applied to `x` ([batch, h, w, c]) in one compiled step, training or not.
Tensor apply(const std::shared_ptr<Layer>& layer, const Tensor& x, bool training) {
  models::Sequential model({layers::Input(x.shape().without_batch()), layer});
  model.compile(std::make_shared<optimizers::SGD>(), losses::get("mse"));
  models::CompiledStep& step = model.compiled_step(x.shape()[0], training);
  std::memcpy(step.input().raw_data(), x.raw_data(), x.num_bytes());
  step.forward(training);
  return step.output().clone();
}

/// An image [1, h, w, 1] holding `values` row by row.
Tensor image(int64_t height, int64_t width, std::vector<float> values) {
  Tensor t(Shape{1, height, width, 1});
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

Tensor ramp(int64_t height, int64_t width) {
  std::vector<float> values;
  for (int64_t i = 0; i < height * width; ++i) values.push_back(float(i));
  return image(height, width, values);
}

kernels::ImageTransformOptions fill(const std::string& mode, float value = 0, const std::string& interpolation = "bilinear") {
  return {kernels::parse_fill_mode(mode), kernels::parse_interpolation(interpolation), value};
}

std::shared_ptr<Layer> translation(double dy, double dx, const kernels::ImageTransformOptions& options = {}) {
  return std::make_shared<layers::RandomTranslation>(json{dy, dy}, json{dx, dx}, options);
}

TEST(RandomTranslation, MatchesKerasOnA5x5Image) {
  EXPECT_TRUE(testing::all_close(apply(translation(0.2, 0.2), ramp(5, 5), true),
                                 image(5, 5, {0, 0, 1, 2, 3, 0, 0, 1, 2, 3, 5, 5, 6, 7, 8, 10, 10, 11, 12, 13, 15, 15, 16, 17, 18}),
                                 1e-6, 1e-6));
  EXPECT_TRUE(testing::all_close(apply(translation(0.2, -0.4, fill("constant", -1)), ramp(5, 5), true),
                                 image(5, 5, {-1, -1, -1, -1, -1, 2, 3, 4, -1, -1, 7, 8, 9, -1, -1, 12, 13, 14, -1, -1,
                                              17, 18, 19, -1, -1}),
                                 1e-6, 1e-6));
  Tensor bilinear = apply(translation(0, 0.3), ramp(5, 5), true);
  Tensor nearest = apply(translation(0, 0.3, fill("reflect", 0, "nearest")), ramp(5, 5), true);
  EXPECT_TRUE(testing::all_close(bilinear.slice_batch(0, 1), image(5, 5, {0.5, 0, 0.5, 1.5, 2.5, 5.5, 5, 5.5, 6.5, 7.5,
                                                                          10.5, 10, 10.5, 11.5, 12.5, 15.5, 15, 15.5, 16.5, 17.5,
                                                                          20.5, 20, 20.5, 21.5, 22.5}),
                                 1e-5, 1e-5));
  EXPECT_EQ(std::vector<float>(nearest.data<float>(), nearest.data<float>() + 5), (std::vector<float>{1, 0, 1, 2, 3}));
}

TEST(RandomTranslation, EveryFillModeAsTensorFlow) {
  // The row [1, 2, 3, 4, 5] shifted by dx (Keras' TensorFlow backend, bilinear, fill value 0).
  const Tensor row = image(1, 5, {1, 2, 3, 4, 5});
  const std::vector<double> shifts = {2, -2, 0.5, -4, 4.5};
  const std::map<std::string, std::vector<std::vector<float>>> expected = {
      {"constant", {{0, 0, 1, 2, 3}, {3, 4, 5, 0, 0}, {.5, 1.5, 2.5, 3.5, 4.5}, {5, 0, 0, 0, 0}, {0, 0, 0, 0, .5}}},
      {"nearest", {{1, 1, 1, 2, 3}, {3, 4, 5, 5, 5}, {1, 1.5, 2.5, 3.5, 4.5}, {5, 5, 5, 5, 5}, {1, 1, 1, 1, 1}}},
      {"reflect", {{2, 1, 1, 2, 3}, {3, 4, 5, 5, 4}, {1, 1.5, 2.5, 3.5, 4.5}, {5, 5, 4, 3, 2}, {4.5, 3.5, 2.5, 1.5, 1}}},
      {"wrap", {{4, 5, 1, 2, 3}, {3, 4, 5, 1, 2}, {5, 1.5, 2.5, 3.5, 4.5}, {5, 1, 2, 3, 1}, {5, 2.5, 3.5, 4.5, 5}}}};
  for (const auto& [mode, rows] : expected) {
    for (size_t i = 0; i < shifts.size(); ++i) {
      Tensor out = apply(translation(0, shifts[i] / 5, fill(mode)), row, true);
      EXPECT_TRUE(testing::all_close(out, image(1, 5, rows[i]), 1e-5, 1e-5)) << mode << " dx " << shifts[i];
    }
  }
}

TEST(RandomZoomAndRotation, MatchKerasAboutTheImageCentre) {
  auto zoom = [](double factor, const std::string& mode) {
    return std::make_shared<layers::RandomZoom>(json{factor, factor}, nullptr, fill(mode));
  };
  EXPECT_TRUE(testing::all_close(apply(zoom(0.5, "constant"), ramp(5, 5), true),
                                 image(5, 5, {0, 0, 0, 0, 0, 0, 3, 4.5, 6, 0, 0, 10.5, 12, 13.5, 0, 0, 18, 19.5, 21, 0, 0, 0, 0, 0, 0}),
                                 1e-5, 1e-5));
  std::vector<float> zoomed_in;
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 5; ++c) zoomed_in.push_back(4.8f + 3.0f * float(r) + 0.6f * float(c));
  }
  EXPECT_TRUE(testing::all_close(apply(zoom(-0.4, "reflect"), ramp(5, 5), true), image(5, 5, zoomed_in), 1e-5, 1e-5));

  auto quarter_turn = [](const std::string& mode) {
    return std::make_shared<layers::RandomRotation>(json{0.25, 0.25}, fill(mode));
  };
  EXPECT_TRUE(testing::all_close(apply(quarter_turn("reflect"), ramp(3, 3), true), image(3, 3, {2, 5, 8, 1, 4, 7, 0, 3, 6}),
                                 1e-4, 1e-4));
  EXPECT_TRUE(testing::all_close(apply(quarter_turn("constant"), ramp(3, 4), true),
                                 image(3, 4, {1.25, 4.5, 8.5, 5.25, 0.75, 3.5, 7.5, 4.75, 0.25, 2.5, 6.5, 4.25}), 1e-4, 1e-4));
  EXPECT_TRUE(testing::all_close(apply(quarter_turn("reflect"), ramp(3, 4), true),
                                 image(3, 4, {2.5, 4.5, 8.5, 10.5, 1.5, 3.5, 7.5, 9.5, 0.5, 2.5, 6.5, 8.5}), 1e-4, 1e-4));
}

TEST(RandomContrast, MatchesKerasWithClipping) {
  // c = 1.5 (factor (-0.5, 0.5)); channel 0 mean 70 clips to [0, 255], channel 1 mean 45.
  Tensor x(Shape{1, 2, 2, 2});
  const std::vector<float> values = {0, 30, 10, 40, 20, 50, 250, 60};
  std::copy(values.begin(), values.end(), x.data<float>());
  Tensor out = apply(std::make_shared<layers::RandomContrast>(json{-0.5, 0.5}), x, true);
  const std::vector<float> expected = {0, 22.5, 0, 37.5, 0, 52.5, 255, 67.5};
  EXPECT_EQ(std::vector<float>(out.data<float>(), out.data<float>() + 8), expected);
}

TEST(RandomImageLayers, IdentityAtInference) {
  Tensor x = random_tensor({3, 6, 5, 2}, 4, 0, 1);
  for (const std::shared_ptr<Layer>& layer : std::vector<std::shared_ptr<Layer>>{
           std::make_shared<layers::RandomFlip>(), translation(0.3, 0.3), std::make_shared<layers::RandomRotation>(json(0.2)),
           std::make_shared<layers::RandomZoom>(json(0.3)), std::make_shared<layers::RandomContrast>(json(0.5))}) {
    EXPECT_TRUE(testing::all_close(apply(layer, x, false), x, 0, 0)) << layer->class_name();
  }
}

TEST(RandomFlip, WholeImagesAboutHalfTheTimeAndBothAxesAtOnce) {
  Tensor x = random_tensor({64, 3, 4, 2}, 6);
  for (const std::string mode : {"horizontal", "vertical", "horizontal_and_vertical"}) {
    Tensor out = apply(std::make_shared<layers::RandomFlip>(mode, 5), x, true);
    int flipped = 0;
    for (int64_t b = 0; b < 64; ++b) {
      const float* in = x.data<float>() + b * 24;
      const float* o = out.data<float>() + b * 24;
      bool same = true, mirrored = true;
      for (int64_t y = 0; y < 3; ++y) {
        for (int64_t w = 0; w < 4; ++w) {
          const int64_t from_y = mode == "horizontal" ? y : 2 - y, from_w = mode == "vertical" ? w : 3 - w;
          for (int64_t c = 0; c < 2; ++c) {
            same &= o[(y * 4 + w) * 2 + c] == in[(y * 4 + w) * 2 + c];
            mirrored &= o[(y * 4 + w) * 2 + c] == in[(from_y * 4 + from_w) * 2 + c];
          }
        }
      }
      EXPECT_TRUE(same || mirrored) << mode << " image " << b;
      flipped += mirrored && !same;
    }
    EXPECT_GT(flipped, 16) << mode;
    EXPECT_LT(flipped, 48) << mode;
  }
}

TEST(RandomImageLayers, BackwardIsTheAdjointOfTheStepsDraws) {
  // <T x, g> = <x, T^T g> for the transform T one call drew: linear with a zero fill value
  // (another adds a constant), and contrast within its value range is linear too.
  const Shape shape{3, 6, 5, 2};
  Tensor x = random_tensor(shape, 8, 0.2, 0.8), g = random_tensor(shape, 9);
  for (const std::shared_ptr<layers::RandomImageLayer>& layer : std::vector<std::shared_ptr<layers::RandomImageLayer>>{
           std::make_shared<layers::RandomFlip>(), std::make_shared<layers::RandomTranslation>(json(0.3), json(0.4)),
           std::make_shared<layers::RandomTranslation>(json(0.3), json(0.4), fill("wrap", 0, "nearest")),
           std::make_shared<layers::RandomRotation>(json(0.2), fill("constant")),
           std::make_shared<layers::RandomZoom>(json(0.3), json{-0.2, 0.4}, fill("nearest")),
           std::make_shared<layers::RandomContrast>(json(0.5), std::pair<double, double>{-10, 10})}) {
    auto state = layer->make_state(shape);
    Random random(17);
    Tensor y(shape), gx(shape);
    layer->augment(x.data<float>(), y.data<float>(), shape, random, *state);
    layer->augment_backward(g.data<float>(), gx.data<float>(), shape, *state);
    double forward = 0, backward = 0;
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      forward += double(y.data<float>()[i]) * g.data<float>()[i];
      backward += double(x.data<float>()[i]) * gx.data<float>()[i];
    }
    EXPECT_NEAR(forward, backward, 1e-4 * std::abs(forward) + 1e-4) << layer->class_name();
  }
}

TEST(RandomImageLayers, UnseededLayersDrawIndependently) {
  // Each unseeded layer seeds from its own name: two translations of one batch differ.
  Tensor x = random_tensor({8, 6, 6, 1}, 12);
  auto unseeded = [] { return std::make_shared<layers::RandomTranslation>(json(0.3), json(0.3)); };
  EXPECT_FALSE(testing::all_close(apply(unseeded(), x, true), apply(unseeded(), x, true), 1e-3, 1e-3));
}

TEST(RandomImageLayers, Lifecycle) {
  testing::run_layer_test({{"class_name", "RandomFlip"}, {"config", {{"mode", "horizontal"}, {"seed", 3}}}}, {2, 4, 4, 3},
                          {2, 4, 4, 3}, 0);
  testing::run_layer_test({{"class_name", "RandomTranslation"}, {"config", {{"height_factor", 0.1}, {"width_factor", {-0.2, 0.1}}}}},
                          {2, 4, 4, 3}, {2, 4, 4, 3}, 0);
  testing::run_layer_test({{"class_name", "RandomRotation"}, {"config", {{"factor", 0.1}, {"fill_mode", "constant"}}}},
                          {2, 4, 4, 3}, {2, 4, 4, 3}, 0);
  testing::run_layer_test({{"class_name", "RandomZoom"}, {"config", {{"height_factor", 0.2}, {"interpolation", "nearest"}}}},
                          {2, 4, 4, 3}, {2, 4, 4, 3}, 0);
  testing::run_layer_test({{"class_name", "RandomContrast"}, {"config", {{"factor", 0.3}, {"value_range", {0, 1}}}}},
                          {2, 4, 4, 3}, {2, 4, 4, 3}, 0);
}

TEST(Resizing, MatchesTensorFlowsResize) {
  auto resize = [](int64_t h, int64_t w, const std::string& interpolation = "bilinear", bool crop = false) {
    return std::make_shared<layers::Resizing>(h, w, kernels::parse_interpolation(interpolation), crop);
  };
  EXPECT_TRUE(testing::all_close(apply(resize(2, 2), ramp(4, 4), false), image(2, 2, {2.5, 4.5, 10.5, 12.5}), 1e-5, 1e-5));
  EXPECT_TRUE(testing::all_close(apply(resize(3, 3), ramp(4, 4), true),
                                 image(3, 3, {0.8333333f, 2.1666667f, 3.5f, 6.1666667f, 7.5f, 8.833333f, 11.5f, 12.833333f, 14.166667f}),
                                 1e-5, 1e-5));
  EXPECT_TRUE(testing::all_close(apply(resize(1, 5), image(1, 3, {1, 2, 3}), false), image(1, 5, {1, 1.4f, 2, 2.6f, 3}), 1e-5, 1e-5));
  EXPECT_TRUE(testing::all_close(apply(resize(1, 5, "nearest"), image(1, 3, {1, 2, 3}), false), image(1, 5, {1, 1, 2, 3, 3}), 0, 0));
  EXPECT_TRUE(testing::all_close(apply(resize(2, 2, "bilinear", true), ramp(4, 6), false), image(2, 2, {4.5, 6.5, 16.5, 18.5}),
                                 1e-5, 1e-5));
}

TEST(CenterCrop, CutsOrResizesAsKeras) {
  EXPECT_TRUE(testing::all_close(apply(std::make_shared<layers::CenterCrop>(3, 3), ramp(6, 6), true),
                                 image(3, 3, {7, 8, 9, 13, 14, 15, 19, 20, 21}), 0, 0));
  std::vector<float> rows_1_to_4;
  for (int r = 1; r <= 4; ++r) {
    for (int c = 0; c < 5; ++c) rows_1_to_4.push_back(float(6 * r + c));
  }
  EXPECT_TRUE(testing::all_close(apply(std::make_shared<layers::CenterCrop>(4, 5), ramp(6, 6), false), image(4, 5, rows_1_to_4), 0, 0));
  // Smaller than the target: Keras resizes the centred window of the target's aspect ratio.
  Tensor up = apply(std::make_shared<layers::CenterCrop>(6, 6), ramp(4, 4), false);
  EXPECT_TRUE(testing::all_close(up, apply(std::make_shared<layers::Resizing>(6, 6), ramp(4, 4), false), 0, 0));
  const std::vector<float> first_row = {0, 0.5f, 1.1666667f, 1.8333333f, 2.5f, 3};
  for (size_t i = 0; i < first_row.size(); ++i) EXPECT_NEAR(up.data<float>()[i], first_row[i], 1e-5);
  std::vector<float> middle_columns;  // x[:, :, 2:6] of a 4x8 ramp
  for (int r = 0; r < 4; ++r) {
    for (int c = 2; c < 6; ++c) middle_columns.push_back(float(8 * r + c));
  }
  EXPECT_TRUE(testing::all_close(apply(std::make_shared<layers::CenterCrop>(6, 6), ramp(4, 8), false),
                                 apply(std::make_shared<layers::Resizing>(6, 6), image(4, 4, middle_columns), false), 1e-6, 1e-6));
}

/// The offset (top, left) at which `out` [b, h, w, 1] is a window of the ramp images `x`
/// [b, H, W, 1] (every image of the batch at the same one), or (-1, -1).
std::pair<int64_t, int64_t> window_offset(const Tensor& x, const Tensor& out) {
  const int64_t batch = x.shape()[0], in_h = x.shape()[1], in_w = x.shape()[2], h = out.shape()[1], w = out.shape()[2];
  const int64_t first = int64_t(out.data<float>()[0]) % (in_h * in_w), top = first / in_w, left = first % in_w;
  if (top + h > in_h || left + w > in_w) return {-1, -1};
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t c = 0; c < w; ++c) {
        if (out.data<float>()[(b * h + y) * w + c] != x.data<float>()[(b * in_h + top + y) * in_w + left + c]) return {-1, -1};
      }
    }
  }
  return {top, left};
}

TEST(RandomCrop, AWindowAtEveryOffsetOnePerBatch) {
  const int64_t batch = 3, in_h = 6, in_w = 5, h = 3, w = 4;
  Tensor x(Shape{batch, in_h, in_w, 1});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = float(i);
  auto layer = std::make_shared<layers::RandomCrop>(h, w, 7);
  std::unique_ptr<LayerStep> step = layer->compile(x.shape(), {});
  Tensor out(Shape{batch, h, w, 1}), grad_out = random_tensor(out.shape(), 3), grad_in(x.shape());
  std::set<std::pair<int64_t, int64_t>> offsets;
  for (int call = 0; call < 200; ++call) {
    step->forward(x, out, true);
    const auto [top, left] = window_offset(x, out);
    ASSERT_GE(top, 0) << "call " << call << " gave no window of its input";
    offsets.insert({top, left});
    // The gradient goes back to the window the call cut, and nowhere else.
    step->backward(x, out, grad_out, &grad_in, {}, true);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t y = 0; y < in_h; ++y) {
        for (int64_t c = 0; c < in_w; ++c) {
          const bool inside = y >= top && y < top + h && c >= left && c < left + w;
          const float expected = inside ? grad_out.data<float>()[(b * h + y - top) * w + c - left] : 0.0f;
          ASSERT_EQ(grad_in.data<float>()[(b * in_h + y) * in_w + c], expected);
        }
      }
    }
  }
  EXPECT_EQ(offsets.size(), size_t((in_h - h + 1) * (in_w - w + 1)));  // 4 x 2 offsets, each drawn
}

TEST(RandomCrop, SmartResizeAtInferenceOrFromAnInputNotLarger) {
  // Keras' documented inference (tf.keras 2's smart_resize): the centred window of the
  // target's aspect ratio, resized bilinearly.
  Tensor x = random_tensor({2, 6, 8, 3}, 5);
  const Tensor smart = apply(std::make_shared<layers::Resizing>(3, 3, kernels::Interpolation::bilinear, true), x, false);
  EXPECT_TRUE(testing::all_close(apply(std::make_shared<layers::RandomCrop>(3, 3), x, false), smart, 0, 0));
  // As large as the target on an axis: the same in training too (Keras crops at random only
  // from an input larger on both).
  EXPECT_TRUE(testing::all_close(apply(std::make_shared<layers::RandomCrop>(6, 6), x, true),
                                 apply(std::make_shared<layers::CenterCrop>(6, 6), x, true), 0, 0));
  EXPECT_TRUE(testing::all_close(apply(std::make_shared<layers::RandomCrop>(8, 8), x, true),
                                 apply(std::make_shared<layers::Resizing>(8, 8, kernels::Interpolation::bilinear, true), x, true),
                                 0, 0));
}

TEST(Resizing, BackwardIsTheAdjoint) {
  for (const kernels::ResizeGeometry& g :
       {kernels::ResizeGeometry{2, 5, 7, 3, 0, 0, 5, 7, 3, 4, kernels::Interpolation::bilinear},
        kernels::ResizeGeometry{2, 5, 7, 3, 1, 2, 3, 4, 8, 9, kernels::Interpolation::bilinear},
        kernels::ResizeGeometry{2, 5, 7, 3, 0, 1, 5, 5, 4, 9, kernels::Interpolation::nearest}}) {
    Tensor x = random_tensor({g.batch, g.in_height, g.in_width, g.channels}, 1);
    Tensor grad = random_tensor({g.batch, g.out_height, g.out_width, g.channels}, 2);
    Tensor y(grad.shape()), gx(x.shape());
    kernels::resize_images(x.data<float>(), y.data<float>(), g);
    kernels::resize_images_backward(grad.data<float>(), gx.data<float>(), g);
    double forward = 0, backward = 0;
    for (int64_t i = 0; i < y.num_elements(); ++i) forward += double(y.data<float>()[i]) * grad.data<float>()[i];
    for (int64_t i = 0; i < x.num_elements(); ++i) backward += double(x.data<float>()[i]) * gx.data<float>()[i];
    EXPECT_NEAR(forward, backward, 1e-4 * std::abs(forward) + 1e-4);
  }
}

TEST(Resizing, LifecycleAndRefusals) {
  testing::run_layer_test({{"class_name", "Resizing"}, {"config", {{"height", 3}, {"width", 5}}}}, {2, 6, 4, 3}, {2, 3, 5, 3}, 0);
  testing::run_layer_test({{"class_name", "CenterCrop"}, {"config", {{"height", 3}, {"width", 2}}}}, {2, 6, 4, 3}, {2, 3, 2, 3}, 0);
  testing::run_layer_test({{"class_name", "RandomCrop"}, {"config", {{"height", 3}, {"width", 2}, {"seed", 731391571}}}},
                          {2, 6, 4, 3}, {2, 3, 2, 3}, 0);
  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{
           {"antialias", true}, {"pad_to_aspect_ratio", true}, {"interpolation", "bicubic"}}) {
    const std::string error = testing::error_of(
        [&] { layers::from_config({{"class_name", "Resizing"}, {"config", {{"name", "resize"}, {"height", 3}, {"width", 3}, {key, value}}}}); });
    EXPECT_NE(error.find("Resizing '"), std::string::npos) << error;
    EXPECT_NE(error.find(key == "interpolation" ? "bicubic" : key), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace tenfold
