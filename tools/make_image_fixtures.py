"""Writes tests/fixtures/images/: a small directory of PNG images, one subdirectory per class,
and what Keras' image_dataset_from_directory (TensorFlow backend, from PyPI) makes of it, for
each color mode, unshuffled and unbatched, resized to 5x7.

  shapes/<class>/...png   images of several sizes: 8-bit gray, gray+alpha, RGB, RGBA, 16-bit
  expected/<mode>_images.npy, <mode>_labels.npy, categorical_labels.npy, files.json
  photos/<class>/...jpg   JPEG images (colour, grayscale, 4:2:0 and 4:4:4 chroma, progressive)
                          and one PNG among them
  expected/photos_<mode>_images.npy, photos_<mode>_labels.npy  (grayscale and rgb)

Run: make fixtures   (or: python3 tools/make_image_fixtures.py)"""
import json
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from fixture_common import FIXTURES, save  # noqa: E402

OUT = os.path.join(FIXTURES, "images")
SIZE = (5, 7)


def write_png(path, pixels):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tf.io.write_file(path, tf.io.encode_png(pixels))


def write_jpeg(path, pixels, **options):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tf.io.write_file(path, tf.io.encode_jpeg(pixels, **options))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    rng = np.random.default_rng(7)

    def pixels(height, width, channels, dtype=np.uint8):
        top = 65536 if dtype == np.uint16 else 256
        return rng.integers(0, top, size=(height, width, channels)).astype(dtype)

    shapes = os.path.join(OUT, "shapes")
    write_png(f"{shapes}/circles/b.png", pixels(5, 7, 1))           # same size: no resizing
    write_png(f"{shapes}/circles/a.png", pixels(9, 4, 3))
    write_png(f"{shapes}/circles/more/c.png", pixels(3, 3, 4))      # nested: walked as Keras
    write_png(f"{shapes}/squares/x.PNG", pixels(12, 16, 2))         # gray + alpha, upper case
    write_png(f"{shapes}/squares/y.png", pixels(6, 6, 3, np.uint16))
    write_png(f"{shapes}/triangles/t.png", pixels(2, 11, 1))
    with open(f"{shapes}/triangles/notes.txt", "w") as f:  # not an image: ignored
        f.write("not an image\n")

    expected = os.path.join(OUT, "expected")
    for mode in ["grayscale", "rgb", "rgba"]:
        dataset = keras.utils.image_dataset_from_directory(
            shapes, color_mode=mode, image_size=SIZE, batch_size=None, shuffle=False)
        images, labels = zip(*[(x.numpy(), y.numpy()) for x, y in dataset])
        save(expected, f"{mode}_images", np.stack(images))
        save(expected, f"{mode}_labels", np.array(labels), np.int32)
        files = [os.path.relpath(p, shapes) for p in dataset.file_paths]
        class_names = dataset.class_names
    photos = os.path.join(OUT, "photos")
    smooth = np.linspace(0, 255, 40 * 30 * 3).reshape(30, 40, 3).astype(np.uint8)
    write_jpeg(f"{photos}/cats/a.jpg", pixels(17, 23, 3))
    write_jpeg(f"{photos}/cats/b.JPEG", smooth, quality=90, chroma_downsampling=False)
    write_jpeg(f"{photos}/cats/c.jpeg", pixels(8, 8, 1))
    write_jpeg(f"{photos}/dogs/d.jpg", smooth[:, ::-1], progressive=True)
    write_png(f"{photos}/dogs/e.png", pixels(6, 9, 3))
    for mode in ["grayscale", "rgb"]:
        dataset = keras.utils.image_dataset_from_directory(
            photos, color_mode=mode, image_size=SIZE, batch_size=None, shuffle=False)
        images, labels = zip(*[(x.numpy(), y.numpy()) for x, y in dataset])
        save(expected, f"photos_{mode}_images", np.stack(images))
        save(expected, f"photos_{mode}_labels", np.array(labels), np.int32)

    dataset = keras.utils.image_dataset_from_directory(
        shapes, label_mode="categorical", image_size=SIZE, batch_size=None, shuffle=False)
    save(expected, "categorical_labels", np.stack([y.numpy() for _, y in dataset]))
    with open(os.path.join(expected, "files.json"), "w") as f:
        json.dump({"files": files, "class_names": class_names, "keras": keras.__version__,
                   "tensorflow": tf.__version__}, f, indent=1)


if __name__ == "__main__":
    main()
