"""Shared pieces of the fixture scripts: where fixtures go and how arrays are written."""
import gzip
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def save(directory, name, array, dtype=np.float32):
    os.makedirs(directory, exist_ok=True)
    # asarray, not ascontiguousarray, which makes a scalar (Normalization's count) 1-D.
    np.save(os.path.join(directory, name + ".npy"), np.asarray(array, dtype=dtype, order="C"))


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndims = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndims).reshape(dims)


def fashion_mnist():
    """((x_train, y_train), (x_test, y_test)) as the recipe prepares them: floats in [0, 1],
    images (N, 28, 28, 1), int32 labels."""
    def split(prefix):
        images = read_idx(f"{FASHION_MNIST}/{prefix}-images-idx3-ubyte.gz")
        labels = read_idx(f"{FASHION_MNIST}/{prefix}-labels-idx1-ubyte.gz")
        return (images.astype(np.float32) / 255.0)[..., None], labels.astype(np.int32)
    return split("train"), split("t10k")
