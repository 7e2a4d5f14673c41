// Layer configs are read strictly: every key Keras 3 and Keras 2 write for a supported layer at
// a value Tenfold implements loads; any other value, and any unknown key, is an error naming
// the layer, the key and the value (a setting silently ignored would train something else).
#include <gtest/gtest.h>

#include "layers/registry.h"
#include "models/sequential.h"
#include "support/check.h"

namespace tenfold {
namespace {

using nlohmann::json;
using testing::error_of;

const json float32_policy = {{"module", "keras"}, {"class_name", "DTypePolicy"},
                             {"config", {{"name", "float32"}}}, {"registered_name", nullptr}};

/// Conv2D's config exactly as Keras 3.15 writes it (model.to_json()).
json keras3_conv2d() {
  return {{"name", "conv2d"}, {"trainable", true}, {"dtype", float32_policy},
          {"filters", 8}, {"kernel_size", {3, 3}}, {"strides", {1, 1}}, {"padding", "same"},
          {"data_format", "channels_last"}, {"dilation_rate", {1, 1}}, {"groups", 1},
          {"activation", "relu"}, {"use_bias", true},
          {"kernel_initializer", {{"module", "keras.initializers"}, {"class_name", "GlorotUniform"},
                                  {"config", {{"seed", nullptr}}}, {"registered_name", nullptr}}},
          {"bias_initializer", {{"module", "keras.initializers"}, {"class_name", "Zeros"},
                                {"config", json::object()}, {"registered_name", nullptr}}},
          {"kernel_regularizer", nullptr}, {"bias_regularizer", nullptr},
          {"activity_regularizer", nullptr}, {"kernel_constraint", nullptr},
          {"bias_constraint", nullptr}};
}

json layer(const std::string& class_name, const json& config) {
  return {{"class_name", class_name}, {"config", config}};
}

TEST(StrictConfig, KerasThreeAndKerasTwoConfigsLoad) {
  EXPECT_EQ(error_of([] { layers::from_config(layer("Conv2D", keras3_conv2d())); }), "(no error)");
  // A Keras 2 Sequential: dtype as a string, the input shape on the first layer.
  json keras2 = {
      {"class_name", "Sequential"},
      {"config",
       {{"name", "sequential"},
        {"layers",
         {layer("Dense", {{"name", "dense"}, {"trainable", true}, {"dtype", "float32"},
                          {"batch_input_shape", {nullptr, 4}}, {"units", 3},
                          {"activation", "softmax"}, {"use_bias", true},
                          {"kernel_initializer", {{"class_name", "GlorotUniform"}, {"config", {{"seed", nullptr}}}}},
                          {"bias_initializer", {{"class_name", "Zeros"}, {"config", json::object()}}},
                          {"kernel_regularizer", nullptr}, {"bias_regularizer", nullptr},
                          {"activity_regularizer", nullptr}, {"kernel_constraint", nullptr},
                          {"bias_constraint", nullptr}}),
          layer("Dropout", {{"name", "dropout"}, {"trainable", true}, {"dtype", "float32"},
                            {"rate", 0.5}, {"noise_shape", nullptr}, {"seed", nullptr}})}}}}};
  std::unique_ptr<models::Sequential> model;
  EXPECT_EQ(error_of([&] { model = models::Sequential::from_config(keras2); }), "(no error)");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->input_shape(), Shape({4}));
}

struct Refusal {
  std::string class_name;
  json config;  // the keys to change in the class's valid config
  std::string expected;  // part of the error
};

json valid_config(const std::string& class_name) {
  if (class_name == "Conv2D") return keras3_conv2d();
  if (class_name == "Dense") return {{"name", "dense"}, {"units", 4}};
  if (class_name == "MaxPooling2D") return {{"name", "pool"}, {"pool_size", 2}};
  if (class_name == "Dropout") return {{"name", "dropout"}, {"rate", 0.5}};
  if (class_name == "InputLayer") return {{"name", "input"}, {"batch_shape", {nullptr, 4}}};
  if (class_name == "Rescaling") return {{"name", "rescaling"}, {"scale", 0.5}};
  return {{"name", "layer"}};
}

class RefusedKeys : public ::testing::TestWithParam<Refusal> {};

TEST_P(RefusedKeys, NameTheLayerTheKeyAndTheValue) {
  const Refusal& refusal = GetParam();
  json config = valid_config(refusal.class_name);
  config.update(refusal.config);
  std::string error = error_of([&] { layers::from_config(layer(refusal.class_name, config)); });
  EXPECT_NE(error.find(refusal.class_name + " '"), std::string::npos) << error;
  EXPECT_NE(error.find(refusal.expected), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(
    EveryRefusedKey, RefusedKeys,
    ::testing::Values(
        Refusal{"Conv2D", {{"dilation_rate", {2, 2}}, {"strides", 2}}, "strides > 1 together with dilation_rate > 1"},
        Refusal{"Conv2D", {{"groups", 3}}, "groups must divide filters, got groups 3 for 8 filters"},
        Refusal{"DepthwiseConv2D", {{"depthwise_regularizer", {{"class_name", "OrthogonalRegularizer"}}}},
                "regularizer 'OrthogonalRegularizer' is not supported"},
        Refusal{"DepthwiseConv2D", {{"depthwise_constraint", {{"class_name", "Clip"}}}}, "constraint 'Clip' is not supported"},
        Refusal{"Conv2D", {{"data_format", "channels_first"}}, "data_format \"channels_first\""},
        Refusal{"Conv2D", {{"kernel_regularizer", {{"class_name", "L2"}, {"module", "my_project"}}}}, "is not a Keras built-in"},
        Refusal{"Conv2D", {{"bias_regularizer", {{"class_name", "L2"}, {"config", {{"l3", 1}}}}}}, "l3 1 is not a setting Tenfold knows"},
        Refusal{"Conv2D", {{"activity_regularizer", {{"class_name", "OrthogonalRegularizer"}}}},
                "activity_regularizer: regularizer 'OrthogonalRegularizer' is not supported"},
        Refusal{"Conv2D", {{"kernel_constraint", {{"class_name", "MaxNorm"}, {"config", {{"axis", "rows"}}}}}},
                "axis must be an integer or a list"},
        Refusal{"Conv2D", {{"bias_constraint", "unit_vector"}}, "constraint 'unit_vector' is not supported"},
        Refusal{"Conv2D", {{"dtype", "mixed_float16"}}, "dtype \"mixed_float16\" is refused: dtype policy 'mixed_float16' is not supported on CPUs"},
        Refusal{"Conv2D", {{"dtype", "float64"}}, "dtype policy 'float64' is not supported; Tenfold has 'float32', 'mixed_bfloat16'"},
        Refusal{"Conv2D", {{"kernel_size", "3"}}, "kernel_size \"3\" must be an integer or a pair"},
        Refusal{"Conv2D", {{"filters", nullptr}}, "filters is required"},
        Refusal{"Conv2D", {{"padding", 3}}, "padding 3 has the wrong type"},
        Refusal{"Conv2D", {{"filters", 2.5}}, "filters 2.5 must be an integer"},
        Refusal{"Embedding", {{"input_dim", 10}, {"output_dim", 4}, {"mask_zero", true}}, "mask_zero true is not supported"},
        Refusal{"Conv2DTranspose", {{"filters", 2}, {"output_padding", {1, 1}}}, "output_padding [1,1] is not supported"},
        Refusal{"Conv2DTranspose", {{"filters", 2}, {"dilation_rate", 2}}, "dilation_rate > 1 is not supported yet"},
        Refusal{"Dense", {{"bias_regularizer", {{"class_name", "L2"}, {"config", {{"l2", -1}}}}}},
                "bias_regularizer: regularizer 'L2': l1 and l2 must not be negative"},
        Refusal{"RandomTranslation", {{"height_factor", 0.1}, {"width_factor", 0.1}, {"fill_mode", "mirror"}},
                "fill_mode 'mirror' is not one of reflect, wrap, constant, nearest"},
        Refusal{"RandomContrast", {{"factor", 2}}, "RandomContrast's factor must lie in [0, 1]"},
        Refusal{"RandomFlip", {{"seed", "abc"}}, "seed \"abc\" has the wrong type"},
        Refusal{"Dense", {{"lora_rank", 4}}, "lora_rank 4"},
        Refusal{"Dense", {{"quantization_config", {{"mode", "int8"}}}}, "quantization_config"},
        Refusal{"Dense", {{"kernel_regularizer", "l1_l2"}}, "regularizer 'l1_l2' is not supported; use l1, l2 or l1l2"},
        Refusal{"Dense", {{"units_typo", 3}}, "units_typo 3 is not a setting Tenfold knows"},
        Refusal{"MaxPooling2D", {{"data_format", "channels_first"}}, "data_format"},
        Refusal{"Flatten", {{"data_format", "channels_first"}}, "data_format"},
        Refusal{"ReLU", {{"max_value", 6}, {"negative_slope", 0.1}}, "max_value 6 with negative_slope"},
        Refusal{"ReLU", {{"threshold", 1.0}}, "threshold 1.0 is not supported"},
        Refusal{"Softmax", {{"axis", {1, 2}}}, "axis [1,2] is not supported: Tenfold takes one axis"},
        Refusal{"Dropout", {{"noise_shape", "all"}}, "noise_shape \"all\" has the wrong type"},
        Refusal{"LayerNormalization", {{"rms_scaling", true}}, "rms_scaling true is not supported"},
        Refusal{"GroupNormalization", {{"groups", 0}}, "groups must be positive, or -1 for one per channel"},
        Refusal{"PReLU", {{"alpha_regularizer", {{"class_name", "OrthogonalRegularizer"}}}}, "OrthogonalRegularizer"},
        Refusal{"LayerNormalization", {{"axis", {1, 2}}}, "axis [1,2] is not supported"},
        Refusal{"LayerNormalization", {{"gamma_constraint", {{"class_name", "NonNeg"}, {"module", "custom"}}}}, "is not a Keras built-in"},
        Refusal{"Normalization", {{"mean", 0.5}}, "give both mean and variance"},
        Refusal{"InputLayer", {{"sparse", true}}, "sparse true is not supported"},
        Refusal{"InputLayer", {{"ragged", true}}, "ragged true is not supported"},
        Refusal{"Activation", {{"activation", {{"class_name", "function"}}}}, "must be a named activation"},
        Refusal{"UpSampling2D", {{"interpolation", "bilinear"}}, "interpolation \"bilinear\" is not supported"},
        Refusal{"ZeroPadding2D", {{"padding", "same"}}, "padding \"same\" must be an integer, a pair"},
        Refusal{"Rescaling", {{"scale", {0.5, 0.25}}}, "scale [0.5,0.25] has the wrong type"},
        Refusal{"BatchNormalization", {{"axis", {1, 2}}}, "axis [1,2] is not supported"},
        Refusal{"BatchNormalization", {{"renorm", true}}, "renorm true is not supported"},
        Refusal{"BatchNormalization", {{"renorm_clipping", {{"rmax", 3}}}}, "renorm_clipping"},
        Refusal{"BatchNormalization", {{"virtual_batch_size", 8}}, "virtual_batch_size 8"},
        Refusal{"BatchNormalization", {{"adjustment", "fn"}}, "adjustment"},
        Refusal{"BatchNormalization", {{"gamma_regularizer", 0.01}}, "a regularizer must be a name or a serialized"},
        Refusal{"BatchNormalization", {{"beta_constraint", {{"class_name", "MaxNorm"}, {"config", {{"max_value", "2"}}}}}},
                "max_value \"2\" has the wrong type"},
        Refusal{"BatchNormalization", {{"momentum", "high"}}, "momentum \"high\" has the wrong type"}));

}  // namespace
}  // namespace tenfold
