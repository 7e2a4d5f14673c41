"""A user's folder of JPEG images, end to end (issue 15): Fashion-MNIST written as 32x32 RGB
JPEG files in ten class folders, then
  1. the loader: images/s of Tenfold's image_dataset_from_directory (tenfold-bench-images) vs
     Keras' (tf.data: decode_jpeg + resize), same files, batches of 512, one pass each, 2 cores;
  2. training: a small CNN made and compiled by Keras (.keras) trained by `tenfold train` on
     the training folder with --validation-split 0.2 for 5 epochs, evaluated on the test
     folder, and `tenfold predict` writing per-file predictions with class names.

    python3 bench/image_folder.py --build build [--work /tmp/tenfold-image-folder]

Keras and TensorFlow from PyPI (scripts/install-python-references.sh)."""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

CLASSES = ["t-shirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag",
           "boot"]
SIZE = 32


def write_folders(work):
    """train/<class>/<i>.jpg and test/<class>/<i>.jpg, once."""
    import numpy as np
    import tensorflow as tf
    from fixture_common import fashion_mnist
    if os.path.exists(os.path.join(work, "done")):
        return
    for split, (x, y) in zip(["train", "test"], fashion_mnist()):
        for name in CLASSES:
            os.makedirs(os.path.join(work, split, name), exist_ok=True)
        rgb = tf.image.resize(tf.image.grayscale_to_rgb(tf.constant(x * 255.0)), (SIZE, SIZE))
        pixels = np.clip(np.round(rgb.numpy()), 0, 255).astype(np.uint8)
        for i, (image, label) in enumerate(zip(pixels, y)):
            tf.io.write_file(os.path.join(work, split, CLASSES[label], f"{i}.jpg"),
                             tf.io.encode_jpeg(image, quality=95))
    open(os.path.join(work, "done"), "w").close()


def keras_images_per_second(folder):
    import keras
    dataset = keras.utils.image_dataset_from_directory(folder, image_size=(SIZE, SIZE),
                                                       batch_size=512, seed=1, verbose=False)
    best = float("inf")
    for _ in range(3):  # the first warms the page cache
        start = time.perf_counter()
        images = sum(int(x.shape[0]) for x, _ in dataset)
        best = min(best, time.perf_counter() - start)
    return images / best


def make_model(path):
    import keras
    from keras import layers
    keras.utils.set_random_seed(1)
    model = keras.Sequential([
        keras.Input(shape=(SIZE, SIZE, 3)), layers.Rescaling(1 / 255),
        layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(),
        layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(), layers.Flatten(),
        layers.Dense(128, activation="relu"), layers.Dense(len(CLASSES), activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.save(path)


def run(command):
    print("$", " ".join(command), flush=True)
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--work", default="/tmp/tenfold-image-folder")
    args = parser.parse_args()
    env_threads = dict(os.environ, OMP_NUM_THREADS="2")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(2)
    write_folders(args.work)
    train, test = os.path.join(args.work, "train"), os.path.join(args.work, "test")

    tenfold_loader = json.loads(subprocess.run(
        [os.path.join(args.build, "tenfold-bench-images"), train, str(SIZE), str(SIZE)],
        check=True, capture_output=True, text=True, env=env_threads).stdout.strip().splitlines()[-1])
    keras_rate = keras_images_per_second(train)
    print(json.dumps({"loader_images_per_second": {"tenfold": tenfold_loader["images_per_second"],
                                                   "keras": round(keras_rate, 1)},
                      "ratio": round(tenfold_loader["images_per_second"] / keras_rate, 2)}))

    model = os.path.join(args.work, "cnn.keras")
    make_model(model)
    trained = os.path.join(args.work, "trained.keras")
    history = os.path.join(args.work, "history.json")
    start = time.perf_counter()
    run([os.path.join(args.build, "tenfold"), "train", "--model", model, "--data", train,
         "--validation-split", "0.2", "--epochs", "5", "--verbose", "2", "--seed", "1",
         "--history", history, "--save", trained])
    seconds = time.perf_counter() - start
    evaluated = run([os.path.join(args.build, "tenfold"), "evaluate", trained, "--data", test])
    predictions = os.path.join(args.work, "predictions.csv")
    run([os.path.join(args.build, "tenfold"), "predict", trained, "--data", test, "--count", "0",
         "--output", predictions])
    with open(predictions) as f:
        rows = list(csv.DictReader(f))
    with open(history) as f:
        val_accuracy = json.load(f)["history"]["val_accuracy"]
    print(json.dumps({"train_seconds_5_epochs": round(seconds, 1), "val_accuracy": val_accuracy,
                      "test": evaluated.strip(), "predictions": len(rows),
                      "first_prediction": {k: rows[0][k] for k in ("file", "label", "predicted_class")}}))


if __name__ == "__main__":
    main()
