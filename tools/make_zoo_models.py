"""Writes bench/zoo/*.json: the model zoo of bench/zoo.py, each made by Keras (PyPI) and
written by model.to_json(), as a user would hand it to `tenfold train --model`: Sequential
models, residual ones (Functional; with BatchNormalization; one with augmentation layers and a
compile config) and a MobileNet-style one. All take Fashion-MNIST images (28, 28, 1) and give 10
softmax classes. Also examples/resnet_fashion_mnist.json, the ResNet trained to 0.937.

Run: python3 tools/make_zoo_models.py"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
from keras import layers  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZOO = os.path.join(ROOT, "bench", "zoo")
EXAMPLES = os.path.join(ROOT, "examples")


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


def residual_block(x, filters):
    """Two 3x3 convolutions added to their input, then relu: ResNet's basic block."""
    y = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    y = layers.Conv2D(filters, 3, padding="same")(y)
    return layers.Activation("relu")(layers.Add()([x, y]))


def resnet_small():
    """A small ResNet (Functional): a stem, a residual block, max pooling, a wider stem and
    block, global average pooling."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(inputs)
    x = residual_block(x, 16)
    x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = residual_block(x, 32)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(10, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="resnet_small")


def normalized_block(x, filters, strides):
    """ResNet's basic block with BatchNormalization: two 3x3 convolutions (no bias: the
    normalization's beta is one), a 1x1 strided projection where the shape changes."""
    y = layers.Conv2D(filters, 3, strides=strides, padding="same", use_bias=False)(x)
    y = layers.Activation("relu")(layers.BatchNormalization()(y))
    y = layers.BatchNormalization()(layers.Conv2D(filters, 3, padding="same", use_bias=False)(y))
    if strides != 1 or x.shape[-1] != filters:
        x = layers.Conv2D(filters, 1, strides=strides, use_bias=False)(x)
        x = layers.BatchNormalization()(x)
    return layers.Activation("relu")(layers.Add()([x, y]))


def normalized_resnet(x, widths):
    """A stem of widths[0] filters, then a normalized block per width (the first at stride 1,
    the others strided), global average pooling and a softmax Dense: the output tensor."""
    x = layers.Conv2D(widths[0], 3, padding="same", use_bias=False)(x)
    x = layers.Activation("relu")(layers.BatchNormalization()(x))
    for index, filters in enumerate(widths):
        x = normalized_block(x, filters, 1 if index == 0 else 2)
    x = layers.GlobalAveragePooling2D()(x)
    return layers.Dense(10, activation="softmax")(x)


def resnet_bn():
    """A ResNet with BatchNormalization for 28x28 images: a stem, blocks of 16, 32 (strided) and
    64 (strided) filters, global average pooling."""
    inputs = keras.Input(shape=(28, 28, 1))
    return keras.Model(inputs, normalized_resnet(inputs, (16, 32, 64)), name="resnet_bn")


def resnet_augmented(epochs=15, steps_per_epoch=118, shift=0.1, name="resnet_augmented"):
    """A ResNet for 28x28 images trained with augmentation: horizontal flips and shifts of up
    to `shift` (zero fill) while training, a stem and blocks of 32, 64 (strided) and 128
    (strided) filters with BatchNormalization, global average pooling. Compiled with Adam on a
    cosine decay over `epochs` epochs of `steps_per_epoch` batches (the recipe's 118):
    `tenfold train --model` follows the file's compile config (the zoo's frameworks all train
    with Adam(1e-3) instead)."""
    inputs = keras.Input(shape=(28, 28, 1))
    x = layers.RandomFlip("horizontal")(inputs)
    x = layers.RandomTranslation(shift, shift, fill_mode="constant")(x)
    model = keras.Model(inputs, normalized_resnet(x, (32, 64, 128)), name=name)
    schedule = keras.optimizers.schedules.CosineDecay(1e-3, epochs * steps_per_epoch)
    model.compile(optimizer=keras.optimizers.Adam(schedule), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def resnet_fashion_mnist():
    """examples/resnet_fashion_mnist.json: resnet_augmented with 5% shifts, its schedule over
    25 epochs of batch 128 (469 steps each); `tenfold train --model
    examples/resnet_fashion_mnist.json --epochs 25 --batch-size 128` reaches 0.937 test
    accuracy (README)."""
    return resnet_augmented(epochs=25, steps_per_epoch=469, shift=0.05, name="resnet_fashion_mnist")


def mobilenet_small():
    """MobileNet-style (Sequential): a strided stem, then depthwise-separable blocks (a 3x3
    DepthwiseConv2D and a 1x1 Conv2D, each with BatchNormalization and ReLU6 as Keras'
    MobileNet writes them: no bias, ReLU(6.0) layers), global average pooling, Dropout."""
    def normalized(layer):
        return [layer, layers.BatchNormalization(), layers.ReLU(6.0)]

    body = normalized(layers.Conv2D(32, 3, strides=2, padding="same", use_bias=False))
    for filters, strides in ((64, 1), (128, 2), (128, 1)):
        body += normalized(layers.DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False))
        body += normalized(layers.Conv2D(filters, 1, use_bias=False))
    body += [layers.GlobalAveragePooling2D(), layers.Dropout(0.2),
             layers.Dense(10, activation="softmax")]
    return keras.Sequential([keras.Input(shape=(28, 28, 1))] + body, name="mobilenet_small")


def main():
    os.makedirs(ZOO, exist_ok=True)
    models = [keras.Sequential([keras.Input(shape=(28, 28, 1))] + body, name=name)
              for name, body in zoo().items()]
    models.append(resnet_small())
    models.append(resnet_bn())
    models.append(resnet_augmented())
    models.append(mobilenet_small())
    for model in models:
        with open(os.path.join(ZOO, model.name + ".json"), "w") as f:
            f.write(model.to_json(indent=1) + "\n")
        print(model.name, model.count_params())
    example = resnet_fashion_mnist()
    with open(os.path.join(EXAMPLES, example.name + ".json"), "w") as f:
        f.write(example.to_json(indent=1) + "\n")


if __name__ == "__main__":
    main()
