"""Writes tests/fixtures/keras/activations/ with Keras (TensorFlow backend, from PyPI), for the
activation parity tests:
  x.npy       the input, float32 (6, 17): np.linspace(-7, 7, 102) reshaped, with any value
              within 0.01 of a kink (0, 6, -3, 3) moved up by 0.013, so that finite
              differences and one-sided derivatives agree.
  w.npy       fixed weights, float32 (6, 17), np.random.RandomState(5).uniform(-1, 1).
  y_<name>.npy, g_<name>.npy
              for each name in NAMES, f = keras.activations.get(name): y = f(x) and
              g = d/dx sum(f(x) * w) (tf.GradientTape). softmax and log_softmax act over the
              last axis.
  layers.json a JSON list of the configs of LAYERS as keras.layers.serialize writes them.
  layer_<i>_y.npy, layer_<i>_g.npy
              for the i-th of them: layer(x) and d/dx sum(layer(x) * w).

Run: cd tools && python3 make_activation_fixtures.py"""
import json
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from fixture_common import FIXTURES, save  # noqa: E402

OUT = os.path.join(FIXTURES, "keras", "activations")

NAMES = ["relu", "relu6", "leaky_relu", "elu", "selu", "gelu", "silu", "swish", "mish",
         "softplus", "softsign", "sigmoid", "hard_sigmoid", "hard_silu", "hard_swish", "tanh",
         "exponential", "softmax", "log_softmax", "linear"]

KINKS = (0.0, 6.0, -3.0, 3.0)


def layers():
    return [
        keras.layers.ReLU(),
        keras.layers.ReLU(max_value=6.0),
        keras.layers.ReLU(negative_slope=0.1),
        keras.layers.LeakyReLU(),
        keras.layers.LeakyReLU(negative_slope=0.1),
        keras.layers.ELU(),
        keras.layers.ELU(alpha=0.5),
        keras.layers.Softmax(),
        keras.layers.Activation("gelu"),
        keras.layers.Activation("hard_swish"),
    ]


def inputs():
    x = np.linspace(-7, 7, 102).astype(np.float32)
    for kink in KINKS:
        x = np.where(np.abs(x - kink) < 0.01, x + np.float32(0.013), x).astype(np.float32)
    for kink in KINKS:
        assert np.all(np.abs(x - kink) >= 0.01)
    w = np.random.RandomState(5).uniform(-1, 1, size=(6, 17)).astype(np.float32)
    return x.reshape(6, 17), w


def value_and_gradient(f, x, w):
    xt = tf.constant(x)
    wt = tf.constant(w)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = f(xt)
        total = tf.reduce_sum(y * wt)
    g = tape.gradient(total, xt)
    return np.asarray(y, np.float32), np.asarray(g, np.float32)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    x, w = inputs()
    save(OUT, "x", x)
    save(OUT, "w", w)
    for name in NAMES:
        y, g = value_and_gradient(keras.activations.get(name), x, w)
        save(OUT, f"y_{name}", y)
        save(OUT, f"g_{name}", g)
    configs = []
    for i, layer in enumerate(layers()):
        configs.append(keras.layers.serialize(layer))
        y, g = value_and_gradient(layer, x, w)
        save(OUT, f"layer_{i}_y", y)
        save(OUT, f"layer_{i}_g", g)
    with open(os.path.join(OUT, "layers.json"), "w") as f:
        json.dump(configs, f, indent=1)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
