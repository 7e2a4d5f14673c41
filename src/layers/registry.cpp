#include "layers/registry.h"

#include <set>

#include "core/error.h"
#include "layers/activation.h"
#include "layers/batch_normalization.h"
#include "layers/conv2d.h"
#include "layers/conv2d_transpose.h"
#include "layers/dense.h"
#include "layers/dropout.h"
#include "layers/embedding.h"
#include "layers/flatten.h"
#include "layers/global_pooling.h"
#include "layers/input.h"
#include "layers/layer_normalization.h"
#include "layers/layer_scale.h"
#include "layers/merge.h"
#include "layers/normalization.h"
#include "layers/padding.h"
#include "layers/pooling.h"
#include "layers/prelu.h"
#include "layers/rescaling.h"
#include "layers/permute.h"
#include "layers/random_image.h"
#include "layers/reshape.h"
#include "layers/resizing.h"
#include "layers/separable_conv2d.h"
#include "layers/strict_config.h"
#include "layers/upsampling.h"

namespace tenfold::layers {

namespace {

using nlohmann::json;

void require_channels_last(StrictConfig& config) {
  config.allow_only("data_format", {"channels_last"}, "Tenfold is channels_last (NHWC)");
}

/// The keys Conv2D and Dense share beyond their own: LoRA and quantization, which Tenfold
/// does not implement yet.
void allow_weighted_extras(StrictConfig& config) {
  for (const char* key : {"lora_rank", "quantization_config"}) config.allow_null(key);
  config.ignore("lora_alpha");  // only read with a lora_rank
}

/// The weights of each class that take Keras' <key>_regularizer and <key>_constraint: pairs of
/// the key and the weight's name.
std::vector<std::pair<std::string, std::string>> regularized_weights(const std::string& class_name) {
  if (class_name == "Dense" || class_name == "Conv2D" || class_name == "Conv1D" || class_name == "Conv2DTranspose") {
    return {{"kernel", "kernel"}, {"bias", "bias"}};
  }
  if (class_name == "DepthwiseConv2D") return {{"depthwise", "kernel"}, {"bias", "bias"}};
  if (class_name == "SeparableConv2D") {
    return {{"depthwise", "depthwise_kernel"}, {"pointwise", "pointwise_kernel"}, {"bias", "bias"}};
  }
  if (class_name == "BatchNormalization" || class_name == "LayerNormalization" || class_name == "GroupNormalization") {
    return {{"gamma", "gamma"}, {"beta", "beta"}};
  }
  if (class_name == "PReLU") return {{"alpha", "alpha"}};
  if (class_name == "Embedding") return {{"embeddings", "embeddings"}};
  return {};
}

/// Reads the class's regularizers and constraints into `layer`.
void take_weight_options(const std::string& class_name, StrictConfig& config, Layer& layer) {
  for (const auto& [key, weight] : regularized_weights(class_name)) {
    for (const std::string kind : {"_regularizer", "_constraint"}) {
      try {
        const json value = config.take<json>(key + kind, nullptr);
        if (kind == "_regularizer") {
          layer.set_weight_regularizer(weight, Regularizer::from_config(value));
        } else {
          layer.set_weight_constraint(weight, Constraint::from_config(value));
        }
      } catch (const Error& error) {
        throw Error(error.code(), class_name + " '" + config.name() + "': " + key + kind + ": " + error.message());
      }
    }
  }
}

/// A 1D layer's size: an integer, or Keras' tuple of one ([2]).
int64_t take_single(StrictConfig& config, const std::string& key, int64_t fallback) {
  const json value = config.take<json>(key, fallback);
  const json& single = value.is_array() && value.size() == 1 ? value[0] : value;
  check_argument(single.is_number_integer(), "'" + config.name() + "': " + key + " " + value.dump() +
                                                 " must be an integer or a list of one integer");
  return single.get<int64_t>();
}

/// ZeroPadding2D's padding and Cropping2D's cropping in Keras' forms: n, (rows, columns), or
/// ((top, bottom), (left, right)).
Borders take_borders(const std::string& class_name, StrictConfig& config, const std::string& key,
                     int64_t fallback) {
  const json value = config.take<json>(key, fallback);
  auto pair = [](const json& v) -> std::array<int64_t, 2> {
    if (v.is_number_integer()) return {v.get<int64_t>(), v.get<int64_t>()};
    return {v.at(0).get<int64_t>(), v.at(1).get<int64_t>()};
  };
  try {
    if (value.is_number_integer()) return {pair(value), pair(value)};
    if (value.is_array() && value.size() == 2) return {pair(value[0]), pair(value[1])};
  } catch (const json::exception&) {
  }
  throw Error(ErrorCode::invalid_argument, class_name + " '" + config.name() + "': " + key + " " +
                                               value.dump() + " must be an integer, a pair, or a pair of pairs");
}

/// Normalization's mean or variance: null, a number, or a (nested) list of numbers.
std::vector<double> flat_numbers(const json& value) {
  std::vector<double> numbers;
  if (value.is_number()) numbers.push_back(value.get<double>());
  if (value.is_array()) {
    for (const json& item : value) {
      std::vector<double> inner = flat_numbers(item);
      numbers.insert(numbers.end(), inner.begin(), inner.end());
    }
  }
  return numbers;
}

/// Keras 3 files name each class's module: keras.layers' own, Keras ops on tensors recorded
/// in a Functional graph (x + y), keras.applications' own layers. Anything else is user code,
/// which a file cannot bring: refused, even when its class name matches a Keras layer's.
void check_module(const json& layer, const std::string& class_name) {
  const std::string module = layer.value("module", "");
  if (module.starts_with("keras.src.ops.")) {
    check_argument(is_tensor_op(class_name),
                   "the Keras operation " + module + "." + class_name + " is not supported; Tenfold runs "
                   "the operations Add, Subtract, Multiply, Maximum and Minimum on tensors of one shape");
    return;
  }
  if (class_name == "LayerScale") {  // legacy .h5 files name no module
    check_argument(module.empty() || module == "keras.src.applications.convnext",
                   "layer class 'LayerScale' of module '" + module + "' is not keras.applications' ConvNeXt "
                   "LayerScale (module keras.src.applications.convnext), the one Tenfold knows");
    return;
  }
  check_argument(module.empty() || module == "keras.layers" || module.starts_with("keras.src.layers."),
                 "layer class '" + class_name + "' of module '" + module + "' is user code (a custom layer), "
                 "which Tenfold never runs from a model file: use Keras' built-in layers");
}

/// Keras' random augmentation layers (layers/random_image.h).
std::shared_ptr<Layer> random_image_layer(const std::string& class_name, StrictConfig& config) {
  const std::string& name = config.name();
  require_channels_last(config);
  config.allow_null("bounding_box_format");
  try {
    const std::optional<uint64_t> seed = config.take_optional<uint64_t>("seed");
    if (class_name == "RandomFlip") return std::make_shared<RandomFlip>(config.take<std::string>("mode", "horizontal_and_vertical"), seed, name);
    if (class_name == "RandomContrast") {
      const auto range = config.take<std::vector<double>>("value_range", {0, 255});
      check_argument(range.size() == 2, "value_range must be a pair (low, high)");
      return std::make_shared<RandomContrast>(config.take_required<json>("factor"), std::pair<double, double>{range[0], range[1]},
                                              seed, name);
    }
    const kernels::ImageTransformOptions options{
        .fill_mode = kernels::parse_fill_mode(config.take<std::string>("fill_mode", "reflect")),
        .interpolation = kernels::parse_interpolation(config.take<std::string>("interpolation", "bilinear")),
        .fill_value = config.take("fill_value", 0.0f)};
    if (class_name == "RandomRotation") return std::make_shared<RandomRotation>(config.take_required<json>("factor"), options, seed, name);
    if (class_name == "RandomZoom") {
      return std::make_shared<RandomZoom>(config.take_required<json>("height_factor"), config.take<json>("width_factor", nullptr),
                                          options, seed, name);
    }
    return std::make_shared<RandomTranslation>(config.take_required<json>("height_factor"),
                                               config.take_required<json>("width_factor"), options, seed, name);
  } catch (const Error& error) {
    if (error.message().starts_with(class_name + " '")) throw;  // ConfigReader's refusals name the layer
    throw Error(error.code(), class_name + " '" + name + "': " + error.message());
  }
}

std::shared_ptr<Layer> build(const std::string& class_name, StrictConfig& config) {
  const std::string& name = config.name();
  if (class_name == "DepthwiseConv2D") {
    require_channels_last(config);
    const int64_t multiplier = config.take("depth_multiplier", int64_t(1));
    return std::make_shared<DepthwiseConv2D>(
        Conv2DOptions{.kernel_size = config.take_pair("kernel_size", {3, 3}),
                      .strides = config.take_pair("strides", {1, 1}),
                      .padding = config.take<std::string>("padding", "valid"),
                      .dilation_rate = config.take_pair("dilation_rate", {1, 1}),
                      .activation = config.take_activation(),
                      .use_bias = config.take("use_bias", true),
                      .kernel_initializer = config.take_initializer("depthwise_initializer", "glorot_uniform"),
                      .bias_initializer = config.take_initializer("bias_initializer", "zeros"),
                      .name = name},
        multiplier);
  }
  if (class_name == "Embedding") {
    config.allow_only("mask_zero", {false}, "Tenfold has no masks (mask_zero=False)");
    allow_weighted_extras(config);
    config.ignore("input_length");  // Keras 2's: the input shape, which the model's input gives
    return std::make_shared<Embedding>(config.take_required<int64_t>("input_dim"), config.take_required<int64_t>("output_dim"),
                                       config.contains("embeddings_initializer")
                                           ? config.take_initializer("embeddings_initializer", "zeros")
                                           : Embedding::uniform_initializer(),
                                       name);
  }
  if (class_name == "Conv2DTranspose") {
    require_channels_last(config);
    allow_weighted_extras(config);
    config.allow_null("output_padding");
    return std::make_shared<Conv2DTranspose>(Conv2DOptions{
        .filters = config.take_required<int64_t>("filters"),
        .kernel_size = config.take_pair("kernel_size", {3, 3}),
        .strides = config.take_pair("strides", {1, 1}),
        .padding = config.take<std::string>("padding", "valid"),
        .dilation_rate = config.take_pair("dilation_rate", {1, 1}),
        .activation = config.take_activation(),
        .use_bias = config.take("use_bias", true),
        .kernel_initializer = config.take_initializer("kernel_initializer", "glorot_uniform"),
        .bias_initializer = config.take_initializer("bias_initializer", "zeros"),
        .name = name});
  }
  if (class_name == "Conv1D") {
    require_channels_last(config);
    allow_weighted_extras(config);
    return std::make_shared<Conv1D>(Conv1DOptions{
        .filters = config.take_required<int64_t>("filters"),
        .kernel_size = take_single(config, "kernel_size", 3),
        .strides = take_single(config, "strides", 1),
        .padding = config.take<std::string>("padding", "valid"),
        .dilation_rate = take_single(config, "dilation_rate", 1),
        .groups = config.take("groups", int64_t(1)),
        .activation = config.take_activation(),
        .use_bias = config.take("use_bias", true),
        .kernel_initializer = config.take_initializer("kernel_initializer", "glorot_uniform"),
        .bias_initializer = config.take_initializer("bias_initializer", "zeros"),
        .name = name});
  }
  if (class_name == "SeparableConv2D") {
    require_channels_last(config);
    const int64_t multiplier = config.take("depth_multiplier", int64_t(1));
    return std::make_shared<SeparableConv2D>(
        Conv2DOptions{.filters = config.take_required<int64_t>("filters"),
                      .kernel_size = config.take_pair("kernel_size", {3, 3}),
                      .strides = config.take_pair("strides", {1, 1}),
                      .padding = config.take<std::string>("padding", "valid"),
                      .dilation_rate = config.take_pair("dilation_rate", {1, 1}),
                      .activation = config.take_activation(),
                      .use_bias = config.take("use_bias", true),
                      .kernel_initializer = config.take_initializer("depthwise_initializer", "glorot_uniform"),
                      .bias_initializer = config.take_initializer("bias_initializer", "zeros"),
                      .name = name},
        multiplier, config.take_initializer("pointwise_initializer", "glorot_uniform"));
  }
  if (class_name == "Conv2D") {
    require_channels_last(config);
    allow_weighted_extras(config);
    return std::make_shared<Conv2D>(Conv2DOptions{
        .filters = config.take_required<int64_t>("filters"),
        .kernel_size = config.take_pair("kernel_size", {3, 3}),
        .strides = config.take_pair("strides", {1, 1}),
        .padding = config.take<std::string>("padding", "valid"),
        .dilation_rate = config.take_pair("dilation_rate", {1, 1}),
        .groups = config.take("groups", int64_t(1)),
        .activation = config.take_activation(),
        .use_bias = config.take("use_bias", true),
        .kernel_initializer = config.take_initializer("kernel_initializer", "glorot_uniform"),
        .bias_initializer = config.take_initializer("bias_initializer", "zeros"),
        .name = name});
  }
  if (class_name == "Dense") {
    allow_weighted_extras(config);
    return std::make_shared<Dense>(DenseOptions{
        .units = config.take_required<int64_t>("units"),
        .activation = config.take_activation(),
        .use_bias = config.take("use_bias", true),
        .kernel_initializer = config.take_initializer("kernel_initializer", "glorot_uniform"),
        .bias_initializer = config.take_initializer("bias_initializer", "zeros"),
        .name = name});
  }
  if (class_name == "MaxPooling2D" || class_name == "AveragePooling2D") {
    require_channels_last(config);
    Pooling2DOptions options{.pool_size = config.take_pair("pool_size", {2, 2}),
                             .padding = config.take<std::string>("padding", "valid"),
                             .name = name};
    options.strides = config.take_pair("strides", options.pool_size);
    if (class_name == "MaxPooling2D") return std::make_shared<MaxPooling2D>(options);
    return std::make_shared<AveragePooling2D>(options);
  }
  if (class_name == "Flatten") {
    require_channels_last(config);
    return std::make_shared<Flatten>(name);
  }
  if (class_name == "GlobalAveragePooling2D" || class_name == "GlobalMaxPooling2D") {
    require_channels_last(config);
    bool keepdims = config.take("keepdims", false);
    if (class_name == "GlobalMaxPooling2D") return std::make_shared<GlobalMaxPooling2D>(keepdims, name);
    return std::make_shared<GlobalAveragePooling2D>(keepdims, name);
  }
  if (class_name == "GlobalAveragePooling1D" || class_name == "GlobalMaxPooling1D") {
    require_channels_last(config);
    bool keepdims = config.take("keepdims", false);
    if (class_name == "GlobalMaxPooling1D") return std::make_shared<GlobalMaxPooling1D>(keepdims, name);
    return std::make_shared<GlobalAveragePooling1D>(keepdims, name);
  }
  if (class_name == "MaxPooling1D" || class_name == "AveragePooling1D") {
    require_channels_last(config);
    const int64_t pool = take_single(config, "pool_size", 2);
    const int64_t strides = take_single(config, "strides", pool);
    const std::string padding = config.take<std::string>("padding", "valid");
    if (class_name == "MaxPooling1D") return std::make_shared<MaxPooling1D>(pool, strides, padding, name);
    return std::make_shared<AveragePooling1D>(pool, strides, padding, name);
  }
  if (class_name == "Reshape") {
    return std::make_shared<Reshape>(config.take_required<std::vector<int64_t>>("target_shape"), name);
  }
  if (class_name == "ZeroPadding2D" || class_name == "Cropping2D") {
    require_channels_last(config);
    if (class_name == "ZeroPadding2D") return std::make_shared<ZeroPadding2D>(take_borders(class_name, config, "padding", 1), name);
    return std::make_shared<Cropping2D>(take_borders(class_name, config, "cropping", 0), name);
  }
  if (class_name == "RandomFlip" || class_name == "RandomTranslation" || class_name == "RandomRotation" ||
      class_name == "RandomZoom" || class_name == "RandomContrast") {
    return random_image_layer(class_name, config);
  }
  if (class_name == "Resizing") {
    require_channels_last(config);
    config.allow_only("pad_to_aspect_ratio", {false}, "Tenfold resizes without padding (pad_to_aspect_ratio=False)");
    config.allow_only("antialias", {false}, "Tenfold resizes without antialiasing (antialias=False)");
    config.allow_only("fill_mode", {"constant"}, "fill_mode is used only with pad_to_aspect_ratio");
    config.ignore("fill_value");  // only used with pad_to_aspect_ratio
    const std::string interpolation = config.take<std::string>("interpolation", "bilinear");
    check_argument(interpolation == "bilinear" || interpolation == "nearest",
                   "Resizing '" + name + "': interpolation '" + interpolation + "' is not supported; use bilinear or nearest");
    return std::make_shared<Resizing>(config.take_required<int64_t>("height"), config.take_required<int64_t>("width"),
                                      kernels::parse_interpolation(interpolation), config.take("crop_to_aspect_ratio", false),
                                      name);
  }
  if (class_name == "CenterCrop") {
    require_channels_last(config);
    return std::make_shared<CenterCrop>(config.take_required<int64_t>("height"), config.take_required<int64_t>("width"), name);
  }
  if (class_name == "RandomCrop") {
    require_channels_last(config);
    return std::make_shared<RandomCrop>(config.take_required<int64_t>("height"), config.take_required<int64_t>("width"),
                                        config.take_optional<uint64_t>("seed"), name);
  }
  if (class_name == "Permute") return std::make_shared<Permute>(config.take_required<std::vector<int64_t>>("dims"), name);
  if (class_name == "UpSampling2D") {
    require_channels_last(config);
    config.allow_only("interpolation", {"nearest"}, "UpSampling2D repeats pixels (nearest)");
    return std::make_shared<UpSampling2D>(config.take_pair("size", {2, 2}), name);
  }
  if (class_name == "Rescaling") {
    return std::make_shared<Rescaling>(config.take_required<double>("scale"), config.take("offset", 0.0), name);
  }
  if (class_name == "Identity") return std::make_shared<Identity>(name);
  if (class_name == "Add") return std::make_shared<Add>(name);
  if (class_name == "Subtract") return std::make_shared<Subtract>(name);
  if (class_name == "Multiply") return std::make_shared<Multiply>(name);
  if (class_name == "Average") return std::make_shared<Average>(name);
  if (class_name == "Maximum") return std::make_shared<Maximum>(name);
  if (class_name == "Minimum") return std::make_shared<Minimum>(name);
  if (class_name == "Concatenate") return std::make_shared<Concatenate>(config.take("axis", int64_t(-1)), name);
  if (class_name == "Activation") return std::make_shared<Activation>(config.take_activation(), name);
  if (class_name == "ReLU") {
    config.allow_only("threshold", {0, 0.0}, "ReLU's threshold is 0");
    json max_value = config.take<json>("max_value", nullptr);
    const double slope = config.take("negative_slope", 0.0);
    if (!max_value.is_null() && slope != 0) {
      throw Error(ErrorCode::invalid_argument, "ReLU '" + name + "': max_value " + max_value.dump() +
                                                   " with negative_slope " + std::to_string(slope) +
                                                   " is not supported: use one of them");
    }
    return std::make_shared<ReLU>(max_value.is_null() ? std::nullopt : std::optional<double>(max_value.get<double>()),
                                  slope, name);
  }
  if (class_name == "LeakyReLU") {
    // Keras 2 named the slope alpha.
    json alpha = config.take<json>("alpha", nullptr);
    return std::make_shared<LeakyReLU>(config.take("negative_slope", alpha.is_null() ? 0.3 : alpha.get<double>()), name);
  }
  if (class_name == "ELU") return std::make_shared<ELU>(config.take("alpha", 1.0), name);
  if (class_name == "PReLU") {
    const json shared = config.take<json>("shared_axes", nullptr);
    std::vector<int64_t> axes;
    if (shared.is_number_integer()) axes.push_back(shared.get<int64_t>());
    if (shared.is_array()) axes = shared.get<std::vector<int64_t>>();
    return std::make_shared<PReLU>(config.take_initializer("alpha_initializer", "zeros"), axes, name);
  }
  if (class_name == "Softmax") return std::make_shared<Softmax>(config.take_axis("axis", -1), name);
  if (class_name == "BatchNormalization") {
    for (const char* key : {"virtual_batch_size", "adjustment"}) config.allow_null(key);
    config.allow_only("renorm", {false}, "batch renormalization is not implemented");
    config.allow_null("renorm_clipping");
    config.ignore("renorm_momentum");  // only read with renorm
    config.ignore("fused");            // Keras 2's choice of kernel: the same numbers
    return std::make_shared<BatchNormalization>(BatchNormalizationOptions{
        .axis = config.take_axis("axis", -1),
        .momentum = config.take("momentum", 0.99),
        .epsilon = config.take("epsilon", 1e-3),
        .center = config.take("center", true),
        .scale = config.take("scale", true),
        .beta_initializer = config.take_initializer("beta_initializer", "zeros"),
        .gamma_initializer = config.take_initializer("gamma_initializer", "ones"),
        .moving_mean_initializer = config.take_initializer("moving_mean_initializer", "zeros"),
        .moving_variance_initializer = config.take_initializer("moving_variance_initializer", "ones"),
        .synchronized = config.take("synchronized", false),
        .name = name});
  }
  if (class_name == "Dropout") {
    json seed = config.take<json>("seed", nullptr);
    std::vector<std::optional<int64_t>> noise;
    for (const json& dim : config.take<std::vector<json>>("noise_shape", {})) {
      noise.push_back(dim.is_null() ? std::nullopt : std::optional<int64_t>(dim.get<int64_t>()));
    }
    return std::make_shared<Dropout>(
        config.take_required<float>("rate"),
        seed.is_null() ? std::nullopt : std::optional<uint64_t>(seed.get<uint64_t>()), name, noise);
  }
  if (class_name == "LayerNormalization") {
    config.allow_only("rms_scaling", {false}, "LayerNormalization subtracts the mean (rms_scaling=False)");
    return std::make_shared<LayerNormalization>(LayerNormalizationOptions{
        .axis = config.take_axis("axis", -1),
        .epsilon = config.take("epsilon", 1e-3),
        .center = config.take("center", true),
        .scale = config.take("scale", true),
        .beta_initializer = config.take_initializer("beta_initializer", "zeros"),
        .gamma_initializer = config.take_initializer("gamma_initializer", "ones"),
        .name = name});
  }
  if (class_name == "GroupNormalization") {
    const int64_t groups = config.take("groups", int64_t(32));
    return std::make_shared<GroupNormalization>(groups, LayerNormalizationOptions{
        .axis = config.take_axis("axis", -1),
        .epsilon = config.take("epsilon", 1e-3),
        .center = config.take("center", true),
        .scale = config.take("scale", true),
        .beta_initializer = config.take_initializer("beta_initializer", "zeros"),
        .gamma_initializer = config.take_initializer("gamma_initializer", "ones"),
        .name = name});
  }
  if (class_name == "Normalization") {
    NormalizationOptions options{.invert = config.take("invert", false), .name = name};
    // Absent is Keras' default, -1; null is axis=None, one mean and variance for all values.
    const bool all_values = config.contains("axis") && config.take<json>("axis", nullptr).is_null();
    options.axis = all_values ? std::nullopt : std::optional<int64_t>(config.take_axis("axis", -1));
    options.mean = flat_numbers(config.take<json>("mean", nullptr));
    options.variance = flat_numbers(config.take<json>("variance", nullptr));
    return std::make_shared<Normalization>(options);
  }
  if (class_name == "LayerScale") {
    return std::make_shared<LayerScale>(config.take_required<double>("init_values"),
                                        config.take_required<int64_t>("projection_dim"), name);
  }
  if (class_name == "InputLayer") {
    json shape = config.take<json>("batch_shape", nullptr);
    if (shape.is_null()) shape = config.take_required<json>("batch_input_shape");
    config.allow_only("sparse", {false}, "inputs are dense tensors");
    config.allow_only("ragged", {false}, "inputs are dense tensors");
    config.allow_only("optional", {false}, "every input is required");
    std::vector<int64_t> dims;
    for (size_t i = 1; i < shape.size(); ++i) dims.push_back(shape[i].get<int64_t>());
    return std::make_shared<InputLayer>(Shape(dims), name);
  }
  throw Error(ErrorCode::invalid_argument,
              "layer class '" + class_name +
                  "' is not supported (Tenfold never runs code from a model file); supported: "
                  "InputLayer, Embedding, Conv2D, Conv2DTranspose, DepthwiseConv2D, SeparableConv2D, BatchNormalization, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, "
                  "GlobalMaxPooling2D, Resizing, CenterCrop, RandomCrop, RandomFlip, RandomTranslation, RandomRotation, RandomZoom, RandomContrast, MaxPooling1D, AveragePooling1D, GlobalAveragePooling1D, GlobalMaxPooling1D, Conv1D, Flatten, Reshape, Permute, ZeroPadding2D, Cropping2D, UpSampling2D, "
                  "Rescaling, Normalization, Identity, Dense, Activation, ReLU, LeakyReLU, ELU, PReLU, "
                  "Softmax, LayerNormalization, GroupNormalization, LayerScale (keras.applications' ConvNeXt), Dropout, Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate");
}

}  // namespace

std::shared_ptr<Layer> from_config(const json& layer) {
  check_argument(layer.is_object() && layer.contains("class_name") && layer.contains("config"),
                 "a layer config needs 'class_name' and 'config', got " + layer.dump().substr(0, 200));
  const std::string class_name = layer.at("class_name").get<std::string>();
  check_module(layer, class_name);
  StrictConfig config(class_name, layer.at("config"));
  std::shared_ptr<Layer> result = build(class_name, config);
  take_weight_options(class_name, config, *result);
  // Any layer may have one (Keras' base Layer argument).
  try {
    result->set_activity_regularizer(Regularizer::from_config(config.take<json>("activity_regularizer", nullptr)));
  } catch (const Error& error) {
    throw Error(error.code(), class_name + " '" + config.name() + "': activity_regularizer: " + error.message());
  }
  config.finish();
  result->set_trainable(config.trainable());
  result->set_dtype_policy(config.dtype_policy());
  return result;
}

bool is_tensor_op(const std::string& class_name) {
  static const std::set<std::string> ops = {"Add", "Subtract", "Multiply", "Maximum", "Minimum"};
  return ops.count(class_name) == 1;
}

json to_config(const Layer& layer) {
  json entry = {{"class_name", layer.class_name()}, {"config", layer.get_config()}};
  if (layer.activity_regularizer()) entry["config"]["activity_regularizer"] = layer.activity_regularizer()->get_config();
  for (const auto& [key, weight] : regularized_weights(layer.class_name())) {
    const auto& regularizers = layer.weight_regularizers();
    const auto& constraints = layer.weight_constraints();
    if (auto found = regularizers.find(weight); found != regularizers.end()) entry["config"][key + "_regularizer"] = found->second.get_config();
    if (auto found = constraints.find(weight); found != constraints.end()) entry["config"][key + "_constraint"] = found->second.get_config();
  }
  if (!layer.keras_module().empty()) {
    entry["module"] = layer.keras_module();
    entry["registered_name"] = layer.class_name();
  }
  return entry;
}

}  // namespace tenfold::layers
