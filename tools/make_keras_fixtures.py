"""Writes tests/fixtures/keras/ with Keras (TensorFlow backend, from PyPI):
  parity/   the recipe's model: initial weights, a fixed Fashion-MNIST batch of 64, and the
            weights and losses after 3 Adam steps on it (train_on_batch).
  parity_conv_stack/
            the same for a model whose kernels the recipe's does not reach: convolutions
            after convolutions (backward-data), a strided 'same' convolution, tanh, max and
            average pooling (7x7 -> 3x3 leaves a row uncovered), sigmoid; model.json is its
            to_json(). Same batch as parity/.
  Functional models, the same way (model.json, initial/ and final/ weights, losses.npy; the
  batch of parity/):
  parity_residual/
            a residual block (Conv2D, Conv2D, Add, Activation), max pooling, a strided 'same'
            Conv2D, global average pooling, softmax Dense. Also the model after the 3 steps
            saved as model.keras and model.h5, and predictions.npy = its predict(x[:8]).
  parity_concat/
            two branches of one input (3x3 relu and 5x5 tanh 'same' convolutions) joined by
            Concatenate, max pooling, Flatten, softmax Dense.
  parity_two_inputs/
            inputs 'image' (28, 28, 1) and 'meta' (4,): a convolution branch and a Dense
            branch joined by Concatenate. meta.npy: the batch's 'meta', the mean of each
            image's 4 horizontal bands of 7 rows (x.reshape(64, 4, 196).mean(axis=2)).
  parity_nested/
            a Sequential ('features': Conv2D, MaxPooling2D, Flatten) called as a layer of a
            Functional model. Weight files are named by the innermost layer that owns them.
  parity_shared/
            Keras' shared layers: a Sequential encoder ('encoder': Conv2D, MaxPooling2D,
            Flatten) and a Dense ('embed') each called on the image's top and bottom halves
            (Cropping2D), a Dense ('refine') called twice in a row on its own output;
            model.keras, model.h5 and predictions.npy.
  nested_functional.json
            a Functional model ('inner': Dense 'd') called on inputs 'a' and 'b', its two calls
            the outer model's outputs: Keras 3 counts a nested Functional's calls from 1 in
            output_layers, from 0 in inbound_nodes.
  parity_two_outputs/
            one input, outputs 'digit' (softmax, SparseCategoricalCrossentropy, accuracy) and
            'bright' (linear, mse, loss weight 0.5). bright.npy: its target, each image's mean
            pixel, (64, 1). losses.npy holds the total loss; logs.json every key that
            train_on_batch(return_dict=True) returns, per step.
  parity_frozen/
            a small Sequential CNN whose first Conv2D is frozen (trainable=False, "trainable":
            false in model.json): final/conv2d.* equal initial/conv2d.*.
  parity_batchnorm/
            BatchNormalization on 4-D (after Conv2D) and 2-D (after Dense) inputs, with center
            or scale off in one layer each and a non-default momentum/epsilon in one.
            moving_mean and moving_variance are in initial/ and final/; gamma, beta and the
            moving statistics start from random values (not 1/0/0/1). model.keras, model.h5
            and predictions.npy as in parity_residual (predict runs in inference mode).
            model_synchronized.json: the same with synchronized=True (distributed tests).
  parity_mobile/
            DepthwiseConv2D (depth multiplier 2, strided), a dilated grouped Conv2D,
            ReLU(max_value=6), LeakyReLU, and activations that run after their kernel (swish,
            gelu, hard_silu) or fuse (relu6, elu); model.keras, model.h5 and predictions.npy.
  parity_convnext/
            the layers of keras.applications' ConvNeXt (convnext_model): Normalization adapted
            and given, LayerNormalization, Dense on 4-D inputs, LayerScale, `x + y`;
            model.keras, model.h5 and predictions.npy.
  parity_mixed_bfloat16/
            the recipe's model made under keras.mixed_precision.set_dtype_policy(
            "mixed_bfloat16").
  parity_mixed_bfloat16_conv_stack/
            parity_conv_stack's model the same way; model.keras, model.h5, predictions.npy.
  parity_bfloat16_conv_stack/
            the same under the "bfloat16" policy (bfloat16 variables: files hold them as h5py's
            2-byte opaque values), trained with Adam(0.01, beta_2=0.99).
  curve.json  Keras' per-epoch history for the recipe (Adam, SparseCategoricalCrossentropy,
            accuracy, the recipe's pipeline from_tensor_slices.shuffle(10000).batch(512)
            .prefetch(AUTOTUNE), 10 epochs, validation on the test split), for several seeds
            and their mean: one run's curve moves by about 0.01 with the seed.

Run: make fixtures   (or: python3 tools/make_keras_fixtures.py [--skip-curve] [--only parity_NAME])"""
import argparse
import json
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from fixture_common import FIXTURES, fashion_mnist, save  # noqa: E402

OUT = os.path.join(FIXTURES, "keras")
ONLY = None  # --only: the one parity fixture to write


def recipe_model():
    return compiled(keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ]))


def write_nested_functional_config():
    keras.backend.clear_session()
    x = keras.Input(shape=(4,))
    inner = keras.Model(x, keras.layers.Dense(3, name="d")(x), name="inner")
    a, b = keras.Input(shape=(4,), name="a"), keras.Input(shape=(4,), name="b")
    model = keras.Model([a, b], [inner(a), inner(b)], name="outer")
    with open(os.path.join(OUT, "nested_functional.json"), "w") as f:
        f.write(model.to_json())


def under_policy(policy, make_model):
    """make_model() under a Keras dtype policy ("mixed_bfloat16": float32 variables, bfloat16
    compute; "bfloat16": bfloat16 variables too), made and compiled the way a TPU user does:
    the global policy set first."""
    def make():
        keras.mixed_precision.set_dtype_policy(policy)
        try:
            return make_model()
        finally:
            keras.mixed_precision.set_dtype_policy("float32")
    return make


def frozen_model():
    """A small Sequential CNN whose first Conv2D is frozen (trainable=False, recorded in
    model.json)."""
    return compiled(keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        keras.layers.Conv2D(8, 3, activation="relu", trainable=False),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(16, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(10, activation="softmax"),
    ], name="frozen"))


def leaf_layers(model):
    """The model's layers, a nested model replaced by its own layers, recursively."""
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            yield from leaf_layers(layer)
        else:
            yield layer


def save_weights(model, directory):
    for layer in leaf_layers(model):
        for weight in layer.weights:
            save(directory, f"{layer.name}.{weight.name}", weight.numpy())


def compiled(model, **compile_options):
    """`model` compiled as every parity model is (Adam, SparseCategoricalCrossentropy,
    accuracy), unless compile_options say otherwise."""
    options = dict(optimizer=keras.optimizers.Adam(),
                   loss=keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"])
    options.update(compile_options)
    # jit_compile off: XLA may fuse and reorder float operations; parity wants plain Keras.
    model.compile(jit_compile=False, **options)
    return model


def conv_stack_model(**compile_options):
    return compiled(keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(16, 5, padding="same", activation="tanh"),
        keras.layers.AveragePooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(32, activation="sigmoid"),
        keras.layers.Dense(10, activation="softmax"),
    ], name="conv_stack"), **compile_options)


def residual_model():
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(inputs)
    y = keras.layers.Conv2D(8, 3, padding="same")(x)
    y = keras.layers.Add()([x, y])
    y = keras.layers.Activation("relu")(y)
    y = keras.layers.MaxPooling2D()(y)
    y = keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(y)
    y = keras.layers.GlobalAveragePooling2D()(y)
    outputs = keras.layers.Dense(10, activation="softmax")(y)
    return compiled(keras.Model(inputs, outputs, name="residual"))


def batchnorm_model():
    """Conv2D/Dense with BatchNormalization on 4-D and 2-D inputs; gamma, beta, moving_mean
    and moving_variance of every BatchNormalization set to random values (where they exist)
    so that parity checks real values, not ones and zeros. No bias before a normalization
    (as usual): its gradient is zero up to rounding, which Adam would turn into full steps of
    rounding noise."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Conv2D(8, 3, padding="same", use_bias=False)(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.Activation("relu")(x)
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(x)
    x = keras.layers.BatchNormalization(momentum=0.9, epsilon=1e-5, center=False)(x)
    x = keras.layers.Activation("relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(32, use_bias=False)(x)
    x = keras.layers.BatchNormalization(scale=False)(x)
    x = keras.layers.Activation("relu")(x)
    outputs = keras.layers.Dense(10, activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="batchnorm")
    rng = np.random.RandomState(3)
    ranges = {"gamma": (0.5, 1.5), "beta": (-0.5, 0.5), "moving_mean": (-0.5, 0.5),
              "moving_variance": (0.5, 2.0)}
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            for attribute, (low, high) in ranges.items():
                weight = getattr(layer, attribute, None)
                if weight is not None:
                    weight.assign(rng.uniform(low, high, weight.shape).astype(np.float32))
    # Adam's first steps are lr * g / (|g| + epsilon): with the default epsilon (1e-7) a
    # gradient near zero moves its weight by a full lr in the direction of its rounding error.
    # A normalization's backward subtracts means (cancellation), so a larger epsilon keeps
    # parity a test of the gradients rather than of their rounding.
    return compiled(model, optimizer=keras.optimizers.Adam(epsilon=1e-3))


def mobile_model():
    """MobileNet-style convolutions and the activations that do not fuse into a kernel:
    DepthwiseConv2D (depth multiplier 2; strided), a dilated grouped Conv2D, ReLU(max_value=6),
    LeakyReLU, and relu6, swish, gelu, elu, hard_silu as layer activations."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same")(inputs)
    x = keras.layers.ReLU(max_value=6.0)(x)
    x = keras.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2)(x)
    x = keras.layers.Activation("relu6")(x)
    x = keras.layers.Conv2D(16, 1, activation="swish")(x)
    x = keras.layers.Conv2D(16, 3, padding="same", dilation_rate=2, groups=4, activation="gelu")(x)
    x = keras.layers.LeakyReLU(negative_slope=0.1)(x)
    x = keras.layers.DepthwiseConv2D(3, strides=2, padding="same", activation="elu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(16, activation="hard_silu")(x)
    outputs = keras.layers.Dense(10, activation="softmax")(x)
    return compiled(keras.Model(inputs, outputs, name="mobile"))


def regularized_model():
    """Keras' weight regularizers (added to the loss) and constraints (applied after each
    update) on each kind of weight that takes them, in their string and object forms, and
    activity regularizers (on a convolution's output and on the softmax output). No bias
    feeds a BatchNormalization: its gradient there is rounding noise, which Adam scales up to
    full steps."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Conv2D(4, 3, strides=2, use_bias=False, kernel_regularizer=keras.regularizers.L2(0.01),
                            kernel_constraint=keras.constraints.UnitNorm(axis=[0, 1, 2]),
                            activity_regularizer=keras.regularizers.L1(0.001))(inputs)
    x = keras.layers.BatchNormalization(gamma_regularizer=keras.regularizers.L1L2(l1=0.01, l2=0.1),
                                        beta_constraint=keras.constraints.MinMaxNorm(0.0, 0.05, rate=0.5))(x)
    x = keras.layers.PReLU(alpha_regularizer="l2", alpha_constraint="non_neg")(x)
    x = keras.layers.DepthwiseConv2D(3, depthwise_regularizer=keras.regularizers.L1(0.001),
                                     depthwise_constraint="non_neg", bias_regularizer="l1",
                                     bias_constraint=keras.constraints.MaxNorm(0.01))(x)
    x = keras.layers.Flatten()(x)
    outputs = keras.layers.Dense(10, activation="softmax", kernel_regularizer=keras.regularizers.L1L2(l1=0.001, l2=0.01),
                                 kernel_constraint=keras.constraints.MaxNorm(0.5),
                                 bias_regularizer=keras.regularizers.L2(0.1),
                                 activity_regularizer=keras.regularizers.L2(0.05))(x)
    return compiled(keras.Model(inputs, outputs, name="regularized"))


def convnext_model(adapt_to):
    """A ConvNeXt-style block, the layers keras.applications' ConvNeXt is made of: an adapted
    Normalization (mean, variance and count as weights), a Normalization given its statistics
    (in the config), a patchify Conv2D, a depthwise Conv2D (groups = channels),
    LayerNormalization on 4-D and 2-D inputs, Dense on 4-D inputs, gelu, ConvNeXt's own
    LayerScale, and `shortcut + x` (an op, keras.src.ops.numpy.Add, not a layer). Every
    LayerNormalization's gamma and beta random; LayerScale's init_values 0.5."""
    from keras.src.applications.convnext import LayerScale
    inputs = keras.Input(shape=(28, 28, 1))
    adapted = keras.layers.Normalization()
    adapted.adapt(adapt_to)
    x = adapted(inputs)
    x = keras.layers.Conv2D(16, 4, strides=4)(x)
    rng = np.random.RandomState(5)
    x = keras.layers.Normalization(mean=rng.uniform(-0.5, 0.5, 16).tolist(),
                                   variance=rng.uniform(0.5, 2.0, 16).tolist())(x)
    shortcut = x
    x = keras.layers.Conv2D(16, 3, padding="same", groups=16)(x)
    x = keras.layers.LayerNormalization(epsilon=1e-6)(x)
    x = keras.layers.Dense(64)(x)
    x = keras.layers.Activation("gelu")(x)
    x = keras.layers.Dense(16)(x)
    x = LayerScale(0.5, 16)(x)
    x = shortcut + x
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.LayerNormalization(center=False)(x)
    outputs = keras.layers.Dense(10, activation="softmax")(x)
    model = keras.Model(inputs, outputs, name="convnext")
    for layer in model.layers:
        if isinstance(layer, keras.layers.LayerNormalization):
            for attribute, (low, high) in {"gamma": (0.5, 1.5), "beta": (-0.5, 0.5)}.items():
                weight = getattr(layer, attribute, None)
                if weight is not None:
                    weight.assign(rng.uniform(low, high, weight.shape).astype(np.float32))
    # A larger Adam epsilon for the normalizations' cancellation, as for batchnorm_model.
    return compiled(model, optimizer=keras.optimizers.Adam(epsilon=1e-3))


def write_synchronized_batchnorm_config():
    """parity_batchnorm/model_synchronized.json: that model with synchronized=True in every
    BatchNormalization, as Keras writes it (for the distributed tests)."""
    keras.backend.clear_session()
    directory = os.path.join(OUT, "parity_batchnorm")
    with open(os.path.join(directory, "model.json")) as f:
        config = json.load(f)
    for layer in config["config"]["layers"]:
        if layer["class_name"] == "BatchNormalization":
            layer["config"]["synchronized"] = True
    model = keras.models.model_from_json(json.dumps(config))
    with open(os.path.join(directory, "model_synchronized.json"), "w") as f:
        f.write(model.to_json())


def concat_model():
    inputs = keras.Input(shape=(28, 28, 1))
    a = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    b = keras.layers.Conv2D(4, 5, padding="same", activation="tanh")(inputs)
    c = keras.layers.Concatenate()([a, b])
    c = keras.layers.MaxPooling2D()(c)
    c = keras.layers.Flatten()(c)
    outputs = keras.layers.Dense(10, activation="softmax")(c)
    return compiled(keras.Model(inputs, outputs, name="two_branch"))


def two_inputs_model():
    image = keras.Input(shape=(28, 28, 1), name="image")
    meta = keras.Input(shape=(4,), name="meta")
    a = keras.layers.Conv2D(4, 3, activation="relu")(image)
    a = keras.layers.MaxPooling2D()(a)
    a = keras.layers.Flatten()(a)
    a = keras.layers.Dense(16, activation="relu")(a)
    b = keras.layers.Dense(16, activation="relu")(meta)
    c = keras.layers.Concatenate()([a, b])
    outputs = keras.layers.Dense(10, activation="softmax")(c)
    return compiled(keras.Model([image, meta], outputs, name="two_inputs"))


def two_inputs_batch(directory, x, y):
    meta = x.reshape(len(x), 4, 196).mean(axis=2)  # the mean of 4 bands of 7 rows
    save(directory, "meta", meta)
    return [x, meta], y


def small_encoder(input_shape, name):
    """A Sequential used as a layer: Conv2D 4 3x3 relu, 2x2 max pooling, Flatten."""
    return keras.Sequential([
        keras.Input(shape=input_shape),
        keras.layers.Conv2D(4, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
    ], name=name)


def nested_model():
    inner = small_encoder((28, 28, 1), "features")
    inputs = keras.Input(shape=(28, 28, 1))
    h = inner(inputs)
    h = keras.layers.Dense(16, activation="relu")(h)
    outputs = keras.layers.Dense(10, activation="softmax")(h)
    return compiled(keras.Model(inputs, outputs, name="nested"))


def shared_model():
    inputs = keras.Input(shape=(28, 28, 1))
    top = keras.layers.Cropping2D(((0, 14), (0, 0)))(inputs)
    bottom = keras.layers.Cropping2D(((14, 0), (0, 0)))(inputs)
    encoder = small_encoder((14, 28, 1), "encoder")
    embed = keras.layers.Dense(16, activation="relu", name="embed")
    a = embed(encoder(top))
    b = embed(encoder(bottom))
    refine = keras.layers.Dense(16, activation="tanh", name="refine")
    both = refine(refine(keras.layers.Subtract()([a, b])))
    outputs = keras.layers.Dense(10, activation="softmax")(keras.layers.Concatenate()([a, b, both]))
    return compiled(keras.Model(inputs, outputs, name="shared"))


def two_outputs_model():
    inputs = keras.Input(shape=(28, 28, 1))
    h = keras.layers.Conv2D(4, 3, activation="relu")(inputs)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Flatten()(h)
    digit = keras.layers.Dense(10, activation="softmax", name="digit")(h)
    bright = keras.layers.Dense(1, name="bright")(h)
    return compiled(keras.Model(inputs, [digit, bright], name="two_outputs"),
                    loss={"digit": keras.losses.SparseCategoricalCrossentropy(), "bright": "mse"},
                    loss_weights={"digit": 1.0, "bright": 0.5}, metrics={"digit": ["accuracy"]})


def separable_model():
    """SeparableConv2D (strided with a depth multiplier; dilated without bias; a pointwise
    regularizer), Permute and Softmax over a middle axis."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Conv2D(4, 3, strides=2)(inputs)
    x = keras.layers.SeparableConv2D(8, 3, strides=2, padding="same", depth_multiplier=2, activation="relu",
                                     pointwise_regularizer=keras.regularizers.L2(0.01))(x)
    x = keras.layers.SeparableConv2D(6, 3, dilation_rate=2, padding="same", use_bias=False)(x)
    x = keras.layers.Permute((3, 1, 2))(x)
    x = keras.layers.Softmax(axis=1)(x)
    x = keras.layers.Flatten()(x)
    outputs = keras.layers.Dense(10, activation="softmax")(x)
    return compiled(keras.Model(inputs, outputs, name="separable"))


def sequence_model():
    """The images as sequences of 28 rows: Conv1D (causal and dilated; strided 'same' with
    groups), MaxPooling1D, AveragePooling1D, GlobalMaxPooling1D and GlobalAveragePooling1D."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Reshape((28, 28))(inputs)
    x = keras.layers.Conv1D(8, 3, padding="causal", dilation_rate=2, activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(8, 3, strides=2, padding="same", groups=2)(x)
    x = keras.layers.AveragePooling1D(2, strides=1)(x)
    outputs = keras.layers.Dense(10, activation="softmax")(keras.layers.Concatenate()(
        [keras.layers.GlobalMaxPooling1D()(x), keras.layers.GlobalAveragePooling1D()(x)]))
    return compiled(keras.Model(inputs, outputs, name="sequence"))


def groupnorm_model():
    """GroupNormalization: 4 groups of 2 channels over 26x26 positions, one group per channel
    (groups=-1, instance normalization) without beta, and 2 groups on a 2-D input."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Conv2D(8, 3)(inputs)
    x = keras.layers.GroupNormalization(groups=4)(x)
    x = keras.layers.ReLU()(x)
    # No bias before instance normalization: it cancels, and its gradient is rounding noise
    # that Adam scales up to full steps.
    x = keras.layers.Conv2D(6, 3, strides=2, use_bias=False)(x)
    x = keras.layers.GroupNormalization(groups=-1, center=False)(x)
    # ReLU before the average: an instance-normalised channel averages to exactly zero.
    x = keras.layers.ReLU()(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dense(8)(x)
    x = keras.layers.GroupNormalization(groups=2, epsilon=1e-5)(x)
    outputs = keras.layers.Dense(10, activation="softmax")(x)
    return compiled(keras.Model(inputs, outputs, name="groupnorm"))


def transpose_model():
    """Conv2DTranspose: strided 'same' (kernel 3 and 4) with a fused and an unfused activation,
    and 'valid' without bias, between strided convolutions."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same")(inputs)
    x = keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.Conv2DTranspose(3, 2, padding="valid", use_bias=False)(x)
    x = keras.layers.Conv2D(4, 3, strides=2)(x)
    x = keras.layers.Conv2DTranspose(2, 4, strides=2, padding="same", activation="gelu")(x)
    outputs = keras.layers.Dense(10, activation="softmax")(keras.layers.GlobalAveragePooling2D()(x))
    return compiled(keras.Model(inputs, outputs, name="transpose"))


def per_position_model():
    """An output per step of a sequence, [batch, 28, 5]: Keras averages the loss over samples
    and steps alike."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Reshape((28, 28))(inputs)
    outputs = keras.layers.Conv1D(5, 3, padding="same", activation="softmax")(x)
    return compiled(keras.Model(inputs, outputs, name="per_position"))


def per_position_batch(directory, x, y):
    """Each row's class: (label + row) mod 5."""
    steps = ((y.reshape(-1, 1) + np.arange(28).reshape(1, 28)) % 5).astype(np.int32)
    save(directory, "steps", steps, np.int32)
    return x, steps


def embedding_model():
    """Token sequences: Embedding, Conv1D, GlobalMaxPooling1D (the tokens: row 14 of each image
    scaled to integers 0..9)."""
    inputs = keras.Input(shape=(28,))
    x = keras.layers.Embedding(10, 8)(inputs)
    x = keras.layers.Conv1D(8, 3, activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    outputs = keras.layers.Dense(10, activation="softmax")(x)
    return compiled(keras.Model(inputs, outputs, name="embedding"))


def tokens_batch(directory, x, y):
    tokens = np.round(x[:, 14, :, 0] * 9).astype(np.float32)
    save(directory, "tokens", tokens)
    return tokens, y


def binary_model():
    """A binary classifier compiled with metrics as names and as objects, as Keras users write
    them (its .keras file keeps the objects in its compile config)."""
    model = keras.Sequential([keras.Input(shape=(28, 28, 1)), keras.layers.Flatten(),
                              keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1, activation="sigmoid")],
                             name="binary")
    return compiled(model, loss="binary_crossentropy",
                    metrics=[keras.metrics.AUC(curve="PR", name="pr_auc"), "precision",
                             keras.metrics.Recall(thresholds=0.3), "mae", "binary_accuracy"])


def binary_batch(directory, x, y):
    """Is it a T-shirt (class 0)?"""
    is_top = (y == 0).astype(np.float32).reshape(len(y), 1)
    save(directory, "is_top", is_top)
    return x, is_top


def two_outputs_batch(directory, x, y):
    bright = x.mean(axis=(1, 2, 3)).reshape(len(x), 1)
    save(directory, "bright", bright)
    return x, {"digit": y, "bright": bright}


def dense_step(model, inputs, targets):
    """One step of model's optimizer on dense gradients: for an Embedding, TensorFlow's
    gradient is row slices, which Keras' TensorFlow backend applies row by row (the moments of
    rows absent from the batch do not decay); Keras on JAX or PyTorch, and Tenfold, apply the
    dense gradient."""
    with tf.GradientTape() as tape:
        loss = model.compute_loss(y=targets, y_pred=model(inputs, training=True))
    gradients = [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_weights)]
    model.optimizer.apply_gradients(zip(gradients, model.trainable_weights))
    return {"loss": float(loss)}


def parity(train, make_model=recipe_model, name="parity", batch=None, logs=False,
           save_model=False, dense_gradients=False, **weighting):
    """Writes fixture `name`: make_model()'s initial weights, then its weights and losses after
    3 train_on_batch steps on the parity batch. batch(directory, x, y) gives what the model
    trains on, (inputs, targets), from the batch, saving in directory what it derives; logs
    writes logs.json, every value train_on_batch returns per step; save_model saves the
    trained model as model.keras and model.h5, and predictions.npy, its predict(x[:8]);
    dense_gradients steps as dense_step does; `weighting` (sample_weight= or class_weight=)
    goes to train_on_batch, and a sample_weight is saved as sample_weight.npy."""
    if ONLY and name != ONLY:
        return
    directory = os.path.join(OUT, name)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    # Layer names start afresh (conv2d, dense, ...) whatever was built before.
    keras.backend.clear_session()
    keras.utils.set_random_seed(7)
    model = make_model()
    x, y = train[0][:64], train[1][:64]
    if name == "parity":  # the batch every parity model trains on
        save(directory, "x", x)
        save(directory, "y", y, np.int32)
    inputs, targets = batch(directory, x, y) if batch else (x, y)
    with open(os.path.join(directory, "model.json"), "w") as f:
        f.write(model.to_json())
    save_weights(model, os.path.join(directory, "initial"))
    if "sample_weight" in weighting:
        save(directory, "sample_weight", weighting["sample_weight"])
    if dense_gradients:
        steps = [dense_step(model, inputs, targets) for _ in range(3)]
    else:
        steps = [{key: float(value) for key, value in
                  model.train_on_batch(inputs, targets, return_dict=True, **weighting).items()}
                 for _ in range(3)]
    save_weights(model, os.path.join(directory, "final"))
    # Keras' train_on_batch reports the loss before each update.
    losses = [step["loss"] for step in steps]
    save(directory, "losses", np.array(losses))
    if logs:
        with open(os.path.join(directory, "logs.json"), "w") as f:
            json.dump({"keys": list(steps[0]), "steps": steps}, f, indent=1)
    if save_model:
        model.save(os.path.join(directory, "model.keras"))
        model.save(os.path.join(directory, "model.h5"))
        save(directory, "predictions", model.predict(x[:8], verbose=0))
    print(name, "losses", losses)


def curve(train, test, seeds=(1, 2, 3, 4, 5, 6)):
    runs = []
    for seed in seeds:
        keras.utils.set_random_seed(seed)
        model = recipe_model()
        pipeline = (tf.data.Dataset.from_tensor_slices(train).shuffle(10000, seed=seed)
                    .batch(512).prefetch(tf.data.AUTOTUNE))
        validation = tf.data.Dataset.from_tensor_slices(test).batch(512).prefetch(tf.data.AUTOTUNE)
        history = model.fit(pipeline, epochs=10, validation_data=validation, verbose=2)
        runs.append(history.history)
    mean = {key: np.mean([run[key] for run in runs], axis=0).tolist() for key in runs[0]}
    with open(os.path.join(OUT, "curve.json"), "w") as f:
        json.dump({"keras_version": keras.__version__, "tensorflow_version": tf.__version__,
                   "seeds": list(seeds), "epoch": list(range(10)), "history": mean,
                   "runs": runs}, f, indent=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-curve", action="store_true")
    parser.add_argument("--only", help="write this parity fixture alone (e.g. parity_shared)")
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    train, test = fashion_mnist()
    global ONLY
    ONLY = args.only
    parity(train)
    parity(train, conv_stack_model, "parity_conv_stack")
    parity(train, residual_model, "parity_residual", save_model=True)
    parity(train, concat_model, "parity_concat")
    parity(train, two_inputs_model, "parity_two_inputs", batch=two_inputs_batch)
    parity(train, nested_model, "parity_nested", save_model=True)
    parity(train, shared_model, "parity_shared", save_model=True)
    parity(train, two_outputs_model, "parity_two_outputs", batch=two_outputs_batch, logs=True)
    parity(train, frozen_model, "parity_frozen")
    parity(train, batchnorm_model, "parity_batchnorm", save_model=True)
    if not ONLY or ONLY == "parity_batchnorm":
        write_synchronized_batchnorm_config()
    if not ONLY or ONLY == "nested_functional":
        write_nested_functional_config()
    parity(train, mobile_model, "parity_mobile", save_model=True)
    parity(train, lambda: convnext_model(train[0][:1024]), "parity_convnext", save_model=True)
    parity(train, regularized_model, "parity_regularized")
    parity(train, separable_model, "parity_separable")
    parity(train, sequence_model, "parity_sequence")
    parity(train, groupnorm_model, "parity_groupnorm")
    parity(train, transpose_model, "parity_transpose")
    parity(train, per_position_model, "parity_per_position", batch=per_position_batch)
    parity(train, embedding_model, "parity_embedding", batch=tokens_batch, dense_gradients=True)
    parity(train, binary_model, "parity_binary", batch=binary_batch, logs=True, save_model=True)
    parity(train, name="parity_sample_weight", sample_weight=np.linspace(0, 2, 64, dtype=np.float32))
    parity(train, name="parity_class_weight", class_weight={0: 0.5, 3: 2.0, 7: 4.0})
    parity(train, under_policy("mixed_bfloat16", recipe_model), "parity_mixed_bfloat16")
    # conv_stack_model's pooling, tanh and sigmoid in bfloat16.
    parity(train, under_policy("mixed_bfloat16", conv_stack_model), "parity_mixed_bfloat16_conv_stack", save_model=True)
    # The same under the bfloat16 policy, with an Adam whose beta_2 bfloat16 holds below 1
    # (Keras' default 0.999 rounds to 1.0 there, and its Adam then makes no update).
    parity(train, under_policy("bfloat16", lambda: conv_stack_model(optimizer=keras.optimizers.Adam(0.01, beta_2=0.99))),
           "parity_bfloat16_conv_stack", save_model=True)
    if ONLY and not os.path.exists(os.path.join(OUT, ONLY)) and not os.path.exists(os.path.join(OUT, ONLY + ".json")):
        raise SystemExit(f"--only {ONLY}: no parity fixture has that name")
    if not args.skip_curve and not args.only:
        curve(train, test)


if __name__ == "__main__":
    main()
