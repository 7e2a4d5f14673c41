"""Writes tests/fixtures/data/: NumPy files of the dtypes and orders users save, and CSV tables,
with what NumPy and pandas read from them (the oracles of tests/datasets/test_data_files.cpp).

  arrays/*.npy, *.npz   float64 in Fortran order, float32, uint8 images, int64 labels, bool,
                        np.savez and np.savez_compressed archives; big-endian (refused)
  arrays/expected.json  each array's shape and values in C order, as np.load gives them
  tables/*.csv          numeric, quoted text, categorical and label columns, as users write them
  tables/<name>_features.npy, _labels.npy, expected.json   what pandas makes of them:
                        pd.get_dummies(df, columns=categorical) and the label column

Run: python3 tools/make_data_fixtures.py  (numpy and pandas from PyPI)"""
import json
import os
import shutil

import numpy as np
import pandas as pd

from fixture_common import FIXTURES, save

OUT = os.path.join(FIXTURES, "data")


def arrays(out):
    rng = np.random.default_rng(3)
    values = {
        "fortran_f8": np.asfortranarray(rng.normal(size=(3, 4, 2))),
        "f4": rng.normal(size=(5, 3)).astype(np.float32),
        "images_u1": rng.integers(0, 256, size=(2, 4, 3, 1)).astype(np.uint8),
        "labels_i8": rng.integers(0, 7, size=6).astype(np.int64),
        "labels_u2": rng.integers(0, 60000, size=4).astype(np.uint16),
        "mask_b1": rng.random(5) > 0.5,
        "scalar_f4": np.float32(2.5),
    }
    expected = {}
    for name, array in values.items():
        np.save(os.path.join(out, name + ".npy"), array)
        loaded = np.load(os.path.join(out, name + ".npy"))
        expected[name] = {"shape": list(loaded.shape),
                          "values": np.ascontiguousarray(loaded).astype(np.float64).ravel().tolist()}
    x, y = values["f4"], rng.integers(0, 3, size=5).astype(np.int32)
    np.savez(os.path.join(out, "xy.npz"), x=x, y=y)
    np.savez_compressed(os.path.join(out, "splits.npz"), x_train=values["images_u1"],
                        y_train=np.array([1, 0], np.uint8), x_test=values["images_u1"][:1],
                        y_test=np.array([1], np.uint8))
    expected["xy.npz:y"] = {"shape": [5], "values": y.astype(np.float64).tolist()}
    np.save(os.path.join(out, "big_endian.npy"), np.arange(3, dtype=">f4"))
    np.save(os.path.join(out, "strings.npy"), np.array(["a", "b"]))
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"numpy": np.__version__, "arrays": expected}, f, indent=1)


TABLES = {
    # Features, a quoted text field holding a comma, a categorical column, text labels.
    "plants": ("species", ["soil"],
               'height,"leaf, width",soil,species\n'
               '1.5,0.25,clay,"iris"\n'
               '2,1e-1,sand,rose\n'
               '0.75,-3,loam,iris\n'
               '4,2.5,clay,tulip\n'
               '\n'),
    # Regression: a float label column, Windows line ends, no trailing newline.
    "prices": ("price", [],
               "rooms,area,price\r\n3,70.5,120000.5\r\n2,48,98000.25\r\n5,130,310000"),
    # Integer labels (classes 0..2).
    "digits": ("label", [], "label,a,b\n2,0.5,1\n0,1.5,2\n1,2.5,3\n"),
}


def tables(out):
    expected = {}
    for name, (label, categorical, text) in TABLES.items():
        path = os.path.join(out, name + ".csv")
        with open(path, "w", newline="") as f:
            f.write(text)
        frame = pd.read_csv(path, skip_blank_lines=True)
        labels = frame.pop(label)
        features = pd.get_dummies(frame, columns=categorical, dtype="float32")
        save(out, name + "_features", features.to_numpy("float32"))
        if not pd.api.types.is_numeric_dtype(labels):
            class_names = sorted(set(labels))
            save(out, name + "_labels", [class_names.index(value) for value in labels], np.int32)
        else:
            class_names = []
            integral = pd.api.types.is_integer_dtype(labels)
            save(out, name + "_labels", labels.to_numpy(), np.int32 if integral else np.float32)
        expected[name] = {"label": label, "categorical": categorical,
                          "feature_names": list(features.columns), "class_names": class_names}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"pandas": pd.__version__, "tables": expected}, f, indent=1)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    for name, make in (("arrays", arrays), ("tables", tables)):
        os.makedirs(os.path.join(OUT, name))
        make(os.path.join(OUT, name))


if __name__ == "__main__":
    main()
