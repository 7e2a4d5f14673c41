"""Makes keras.applications models for tests/io/test_keras_applications.cpp, locally: weights
None (nothing downloaded), inputs 32x32x3, 10 classes, compiled with SGD(0.01) (a first Adam
step moves near-zero gradients by a full learning rate either way, which no tolerance can
compare) and sparse categorical crossentropy. Dropout rates are set to 0: a training step's
masks cannot match Keras' draws.
    python3 keras_applications.py OUT_DIR NAME[:predict] [NAME[:predict] ...]
For each NAME (ResNet50, MobileNetV2, ...) writes OUT_DIR/NAME/: model.keras (compiled, not
trained), x.npy (8 random images, preprocessed as
the model's module does), y.npy, predictions.npy (predict(x)), params.json
({"trainable", "non_trainable"}: count_params of those weights), and unless NAME:predict,
after_step/LAYER.I.npy: weight I of layer LAYER (nested models' layers included) after one
train_on_batch(x, y). (:predict skips the step, whose XLA compilation takes most of the time:
39 s of DenseNet121's 40 s; a process given only :predict models runs Keras' NumPy backend.)
Exits 77 when keras (with a backend) is not installed."""
import json
import time
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# Models that only predict are made with Keras' NumPy backend: no compilation. Under JAX each
# weight's initializer compiles for its shape (DenseNet121: 12 s to build, 2 s here).
if all(argument.endswith(":predict") for argument in sys.argv[2:]):
    os.environ["KERAS_BACKEND"] = "numpy"
# XLA's cheapest CPU compilation: compiling the training step is most of the time this takes
# (DenseNet121: 39 s of 40 with the default optimization, 26 s with these).
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true")
try:
    import keras
    import numpy as np
except ImportError as error:
    print(f"keras is not installed: {error}")
    sys.exit(77)


PREPROCESSING = {"ResNet50": "resnet50", "MobileNetV2": "mobilenet_v2", "VGG16": "vgg16",
                 "DenseNet121": "densenet", "EfficientNetB0": "efficientnet", "ConvNeXtTiny": "convnext"}


def leaf_layers(model):
    for layer in model.layers:
        if isinstance(layer, keras.Model):
            yield from leaf_layers(layer)
        else:
            yield layer


def count(weights):
    return int(sum(np.prod(weight.shape) for weight in weights))


def main():
    out = sys.argv[1]
    rng = np.random.RandomState(0)
    images = rng.uniform(0, 255, (8, 32, 32, 3)).astype(np.float32)
    y = rng.randint(0, 10, 8).astype(np.int32)
    for argument in sys.argv[2:]:
        name, _, mode = argument.partition(":")
        # The scale each model expects (its module's preprocess_input): raw pixels make
        # activations, and a first step's gradients, thousands of times larger.
        x = np.asarray(getattr(keras.applications, PREPROCESSING[name]).preprocess_input(images.copy()),
                       dtype=np.float32)
        start = time.perf_counter()
        keras.utils.set_random_seed(1)
        model = getattr(keras.applications, name)(weights=None, input_shape=(32, 32, 3), classes=10)
        for layer in leaf_layers(model):
            if isinstance(layer, keras.layers.Dropout):
                layer.rate = 0.0
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.01),
                      loss="sparse_categorical_crossentropy")
        directory = os.path.join(out, name)
        os.makedirs(os.path.join(directory, "after_step"), exist_ok=True)
        model.save(os.path.join(directory, "model.keras"))
        np.save(os.path.join(directory, "x.npy"), x)
        np.save(os.path.join(directory, "y.npy"), y)
        np.save(os.path.join(directory, "predictions.npy"), model.predict(x, verbose=0).astype(np.float32))
        with open(os.path.join(directory, "params.json"), "w") as f:
            json.dump({"trainable": count(model.trainable_weights),
                       "non_trainable": count(model.non_trainable_weights)}, f)
        if mode != "predict":
            model.train_on_batch(x, y)
            for layer in leaf_layers(model):
                for i, weight in enumerate(layer.weights):
                    np.save(os.path.join(directory, "after_step", f"{layer.name}.{i}.npy"),
                            np.asarray(weight.numpy(), dtype=np.float32))
        print(f"keras {keras.__version__} ({keras.backend.backend()}) made {name} in "
              f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
