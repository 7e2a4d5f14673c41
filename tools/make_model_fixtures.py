"""Writes tests/fixtures/models/ with Keras (TensorFlow backend, from PyPI): a small model of
the recipe's shape saved by model.save() as .h5, after 2 Adam steps, and what Keras computes
with it, to check Tenfold reads Keras' files:
  small.h5                 Conv2D(4, 3, relu), MaxPooling2D, Flatten, Dense(8, relu),
                           Dense(10, softmax), compiled with Adam, SCCE, accuracy
  small.keras              the same model as a Keras 3 archive
  small.weights.h5         its weights alone (model.save_weights)
  small_cnn.json           a Keras model JSON (model.to_json()) for `tenfold train --model`
  x.npy, y.npy             8 Fashion-MNIST test images and labels
  predictions.npy          small.h5's predictions for x
  string_optimizer.keras   a Flatten + Dense model compiled with optimizer="adam", trained a
                           step, saved as .h5 and then as .keras: Keras 3.15 writes no
                           optimizer in the archive's compile_config
  untrained.keras, untrained.h5
                           the same model compiled with Adam() and never trained: its optimizer
                           holds only iterations and learning rate
  string_optimizer_predictions.npy, untrained_predictions.npy
                           their predictions for x
  next_kernel.npy, next_loss.npy
                           the first Dense kernel and the loss after one more
                           train_on_batch(x, y) of the saved model: a model loaded from the
                           file gets them only if the optimizer state (iteration, m, v) was
                           restored. (Keras 3.15's own load of a legacy .h5 refuses to train:
                           its restored optimizer does not know the model's variables.)
  scheduled.keras, scheduled.h5
                           a Flatten + Dense model compiled with Nadam on a CosineDecay schedule
                           with warmup and gradient_accumulation_steps=2, trained 3 steps: no
                           learning_rate variable, gradient accumulators first, Nadam's
                           u_product last among the optimizer variables
  augmented.keras, augmented_predictions.npy
                           a Functional model with Keras' augmentation layers (which Keras records
                           as called with training=True) and Resizing, untrained, and its
                           predictions for x (the augmentation is off at inference)
  scheduled_next_kernel.npy
                           its kernel after one more train_on_batch(x, y)
  evaluations.json         Keras' model.evaluate(x, y) of each file above, loaded back
  bfloat16_adam.keras, bfloat16_adam_predictions.npy
                           a Flatten + Dense model made under the "bfloat16" policy and compiled
                           with optimizer="adam", untrained, as a TPU user writes it; and its
                           predictions for x (Keras' Adam would not train it: its beta_2 0.999
                           is 1.0 in bfloat16)
  tabular.keras, photos_cnn.h5, regression.json
                           users' own models for the command line: a table classifier compiled
                           with optimizer="adam", untrained; an RGB image CNN (.h5, SGD); an
                           uncompiled regression (to_json)

Run: make fixtures   (or: python3 tools/make_model_fixtures.py [--only bfloat16_adam])"""
import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from fixture_common import FIXTURES, fashion_mnist, save  # noqa: E402

OUT = os.path.join(FIXTURES, "models")


def main():
    os.makedirs(OUT, exist_ok=True)
    (x_train, y_train), (x_test, y_test) = fashion_mnist()
    keras.utils.set_random_seed(5)
    model = keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        keras.layers.Conv2D(4, 3, activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(8, activation="relu"),
        keras.layers.Dense(10, activation="softmax"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(), loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=["accuracy"], jit_compile=False)
    for step in range(2):
        model.train_on_batch(x_train[step * 32:(step + 1) * 32], y_train[step * 32:(step + 1) * 32])
    path = os.path.join(OUT, "small.h5")
    # The .keras archive first: after a legacy .h5 save, Keras 3.15 leaves the optimizer out of
    # a later .keras file's compile_config.
    model.save(os.path.join(OUT, "small.keras"))
    model.save_weights(os.path.join(OUT, "small.weights.h5"))
    model.save(path)
    x, y = x_test[:8], y_test[:8]
    save(OUT, "x", x)
    save(OUT, "y", y, np.int32)
    save(OUT, "predictions", keras.models.load_model(path).predict(x, verbose=0))
    small_cnn = keras.Sequential([
        keras.Input(shape=(28, 28, 1)), keras.layers.Conv2D(8, 3, activation="relu"),
        keras.layers.MaxPooling2D(), keras.layers.Flatten(), keras.layers.Dense(10, activation="softmax")])
    with open(os.path.join(OUT, "small_cnn.json"), "w") as f:
        f.write(small_cnn.to_json())
    loss = model.train_on_batch(x, y, return_dict=True)["loss"]
    save(OUT, "next_loss", np.array([loss]))
    save(OUT, "next_kernel", model.layers[3].kernel.numpy())
    common_ways(x_train, y_train, x)
    scheduled(x_train, y_train, x, y)
    augmented(x)
    bfloat16_adam(x)
    user_models()
    evaluations(x, y)


def common_ways(x_train, y_train, x):
    """Keras files saved the ways users save them: a string optimizer; compiled, never trained."""
    def tiny():
        return keras.Sequential([keras.Input(shape=(28, 28, 1)), keras.layers.Flatten(),
                                 keras.layers.Dense(10, activation="softmax")])
    keras.utils.set_random_seed(6)
    model = tiny()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.train_on_batch(x_train[:32], y_train[:32])
    # Saved as .h5 first, as users often do: Keras 3.15 then writes the .keras archive's
    # compile_config without the optimizer.
    model.save(os.path.join(OUT, "string_optimizer.h5"))
    os.remove(os.path.join(OUT, "string_optimizer.h5"))
    model.save(os.path.join(OUT, "string_optimizer.keras"))
    save(OUT, "string_optimizer_predictions", model.predict(x, verbose=0))
    model = tiny()
    model.compile(optimizer=keras.optimizers.Adam(), loss="sparse_categorical_crossentropy")
    model.save(os.path.join(OUT, "untrained.keras"))
    model.save(os.path.join(OUT, "untrained.h5"))
    save(OUT, "untrained_predictions", model.predict(x, verbose=0))


def user_models():
    """Models of users' own data for the command-line tests (tests/cli/test_user_data.cpp):
    a classifier of 5 table features (compiled with optimizer="adam", never trained), a small
    CNN of 16x16 RGB images into 2 classes (.h5, compiled with SGD) and a regression of 2
    features, not compiled (model.to_json)."""
    keras.utils.set_random_seed(8)
    tabular = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(16, activation="relu"),
                                keras.layers.Dense(3, activation="softmax")], name="tabular")
    tabular.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    tabular.save(os.path.join(OUT, "tabular.keras"))
    photos = keras.Sequential([
        keras.Input(shape=(16, 16, 3)), keras.layers.Rescaling(1 / 255),
        keras.layers.Conv2D(4, 3, activation="relu"), keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(2, activation="softmax")], name="photos_cnn")
    photos.compile(optimizer=keras.optimizers.SGD(0.05), loss="sparse_categorical_crossentropy",
                   metrics=["accuracy"])
    photos.save(os.path.join(OUT, "photos_cnn.h5"))
    regression = keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(8, activation="relu"),
                                   keras.layers.Dense(1)], name="regression")
    with open(os.path.join(OUT, "regression.json"), "w") as f:
        f.write(regression.to_json())


def evaluations(x, y):
    """Keras' model.evaluate(x, y) of each Keras file above, loaded back as a user loads it:
    evaluations.json, {file: {metric: value}}."""
    results = {}
    for name in ["small.h5", "small.keras", "string_optimizer.keras", "untrained.keras", "untrained.h5",
                 "scheduled.keras", "scheduled.h5"]:
        model = keras.models.load_model(os.path.join(OUT, name))
        results[name] = model.evaluate(x, y, batch_size=len(x), verbose=0, return_dict=True)
    with open(os.path.join(OUT, "evaluations.json"), "w") as f:
        json.dump(results, f, indent=1)


def scheduled(x_train, y_train, x, y):
    """An optimizer whose variables Keras lays out differently: a schedule, accumulation, Nadam."""
    keras.utils.set_random_seed(7)
    model = keras.Sequential([keras.Input(shape=(28, 28, 1)), keras.layers.Flatten(),
                              keras.layers.Dense(10, activation="softmax")])
    schedule = keras.optimizers.schedules.CosineDecay(0.001, decay_steps=10, warmup_target=0.01, warmup_steps=2)
    model.compile(optimizer=keras.optimizers.Nadam(learning_rate=schedule, gradient_accumulation_steps=2),
                  loss="sparse_categorical_crossentropy")
    for step in range(3):
        model.train_on_batch(x_train[step * 32:(step + 1) * 32], y_train[step * 32:(step + 1) * 32])
    model.save(os.path.join(OUT, "scheduled.keras"))
    model.save(os.path.join(OUT, "scheduled.h5"))
    model.train_on_batch(x, y)
    save(OUT, "scheduled_next_kernel", model.layers[1].kernel.numpy())


def augmented(x):
    keras.utils.set_random_seed(8)
    inputs = keras.Input(shape=(28, 28, 1))
    h = keras.layers.RandomFlip("horizontal")(inputs)
    h = keras.layers.RandomTranslation(0.1, 0.1)(h)
    h = keras.layers.RandomRotation(0.05, fill_mode="constant")(h)
    h = keras.layers.RandomZoom(0.1)(h)
    h = keras.layers.RandomContrast(0.2, value_range=(0, 1))(h)
    h = keras.layers.Resizing(20, 20)(h)
    h = keras.layers.Flatten()(h)
    model = keras.Model(inputs, keras.layers.Dense(10, activation="softmax")(h))
    model.save(os.path.join(OUT, "augmented.keras"))
    save(OUT, "augmented_predictions", model.predict(x, verbose=0))


def bfloat16_adam(x):
    keras.utils.set_random_seed(9)
    keras.mixed_precision.set_dtype_policy("bfloat16")
    try:
        model = keras.Sequential([keras.Input(shape=(28, 28, 1)), keras.layers.Flatten(),
                                  keras.layers.Dense(10, activation="softmax")])
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
    model.save(os.path.join(OUT, "bfloat16_adam.keras"))
    save(OUT, "bfloat16_adam_predictions", model.predict(x, verbose=0))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["bfloat16_adam"], help="write this fixture alone")
    if parser.parse_args().only:
        bfloat16_adam(np.load(os.path.join(OUT, "x.npy")))
    else:
        main()
