"""Writes bench/zoo/*.json: the model zoo of bench/zoo.py, each made by Keras (PyPI) and
written by model.to_json(), as a user would hand it to `tenfold train --model`. All take
Fashion-MNIST images (28, 28, 1) and give 10 softmax classes.

Run: python3 tools/make_zoo_models.py"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
from keras import layers  # noqa: E402

ZOO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench", "zoo")


def zoo():
    """name -> list of layers after the input."""
    return {
        # The recipe's model.
        "recipe_cnn": [
            layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(), layers.Flatten(),
            layers.Dense(128, activation="relu"), layers.Dense(10, activation="softmax")],
        # The Fashion-MNIST benchmark CNN (the data set's table: 0.916).
        "benchmark_cnn": [
            layers.Conv2D(32, 5, padding="same", activation="relu"), layers.MaxPooling2D(),
            layers.Conv2D(64, 5, padding="same", activation="relu"), layers.MaxPooling2D(),
            layers.Flatten(), layers.Dense(1024, activation="relu"), layers.Dropout(0.4),
            layers.Dense(10, activation="softmax")],
        # VGG-style: stacks of 3x3 "same" convolutions.
        "vgg_stack": [
            layers.Conv2D(32, 3, padding="same", activation="relu"),
            layers.Conv2D(32, 3, padding="same", activation="relu"), layers.MaxPooling2D(),
            layers.Conv2D(64, 3, padding="same", activation="relu"),
            layers.Conv2D(64, 3, padding="same", activation="relu"), layers.MaxPooling2D(),
            layers.Flatten(), layers.Dense(256, activation="relu"),
            layers.Dense(10, activation="softmax")],
        # Downsampling by strided convolutions, then average pooling.
        "strided_avgpool": [
            layers.Conv2D(32, 3, strides=2, padding="same", activation="relu"),
            layers.Conv2D(64, 3, strides=2, padding="same", activation="relu"),
            layers.AveragePooling2D(2), layers.Flatten(), layers.Dense(128, activation="relu"),
            layers.Dense(10, activation="softmax")],
        # LeNet-5: tanh, valid 5x5 convolutions, average pooling.
        "lenet5": [
            layers.Conv2D(6, 5, padding="same", activation="tanh"), layers.AveragePooling2D(2),
            layers.Conv2D(16, 5, activation="tanh"), layers.AveragePooling2D(2), layers.Flatten(),
            layers.Dense(120, activation="tanh"), layers.Dense(84, activation="tanh"),
            layers.Dense(10, activation="softmax")],
        # A plain MLP.
        "mlp": [
            layers.Flatten(), layers.Dense(512, activation="relu"),
            layers.Dense(256, activation="relu"), layers.Dense(10, activation="softmax")],
        # Dense layers on both sides of Dropout.
        "dropout_mlp": [
            layers.Flatten(), layers.Dense(512, activation="relu"), layers.Dropout(0.2),
            layers.Dense(512, activation="relu"), layers.Dropout(0.2),
            layers.Dense(10, activation="softmax")],
    }


def main():
    os.makedirs(ZOO, exist_ok=True)
    for name, body in zoo().items():
        model = keras.Sequential([keras.Input(shape=(28, 28, 1))] + body, name=name)
        with open(os.path.join(ZOO, name + ".json"), "w") as f:
            f.write(model.to_json(indent=1) + "\n")
        print(name, model.count_params())


if __name__ == "__main__":
    main()
