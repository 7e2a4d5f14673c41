"""Writes tests/fixtures/keras/ with Keras (TensorFlow backend, from PyPI):
  parity/   the recipe's model: initial weights, a fixed Fashion-MNIST batch of 64, and the
            weights and losses after 3 Adam steps on it (train_on_batch).
  parity_conv_stack/
            the same for a model whose kernels the recipe's does not reach: convolutions
            after convolutions (backward-data), a strided 'same' convolution, tanh, max and
            average pooling (7x7 -> 3x3 leaves a row uncovered), sigmoid; model.json is its
            to_json(). Same batch as parity/.
  curve.json  Keras' per-epoch history for the recipe (Adam, SparseCategoricalCrossentropy,
            accuracy, the recipe's pipeline from_tensor_slices.shuffle(10000).batch(512)
            .prefetch(AUTOTUNE), 10 epochs, validation on the test split), for several seeds
            and their mean: one run's curve moves by about 0.01 with the seed.

Run: make fixtures   (or: python3 tools/make_keras_fixtures.py [--skip-curve])"""
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


def recipe_model():
    model = keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ])
    # jit_compile off: XLA may fuse and reorder float operations; parity wants plain Keras.
    model.compile(optimizer=keras.optimizers.Adam(),
                  loss=keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"],
                  jit_compile=False)
    return model


def save_weights(model, directory):
    for layer in model.layers:
        for weight in layer.weights:
            save(directory, f"{layer.name}.{weight.name}", weight.numpy())


def conv_stack_model():
    model = keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(16, 5, padding="same", activation="tanh"),
        keras.layers.AveragePooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(32, activation="sigmoid"),
        keras.layers.Dense(10, activation="softmax"),
    ], name="conv_stack")
    model.compile(optimizer=keras.optimizers.Adam(),
                  loss=keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"],
                  jit_compile=False)
    return model


def parity(train, make_model=recipe_model, name="parity"):
    directory = os.path.join(OUT, name)
    shutil.rmtree(directory, ignore_errors=True)
    keras.utils.set_random_seed(7)
    model = make_model()
    x, y = train[0][:64], train[1][:64]
    if name == "parity":  # the batch every parity model trains on
        save(directory, "x", x)
        save(directory, "y", y, np.int32)
    with open(os.path.join(directory, "model.json"), "w") as f:
        f.write(model.to_json())
    save_weights(model, os.path.join(directory, "initial"))
    losses = [float(model.train_on_batch(x, y, return_dict=True)["loss"]) for _ in range(3)]
    save_weights(model, os.path.join(directory, "final"))
    # Keras' train_on_batch reports the loss before each update.
    save(directory, "losses", np.array(losses))
    print("parity losses", losses)


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
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    train, test = fashion_mnist()
    parity(train)
    parity(train, conv_stack_model, "parity_conv_stack")
    if not args.skip_curve:
        curve(train, test)


if __name__ == "__main__":
    main()
