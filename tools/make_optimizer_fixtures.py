"""Writes tests/fixtures/keras/optimizers/ with Keras (TensorFlow backend, from PyPI): each
optimizer of CASES applied 3 times to one variable w (4, 3) with fixed gradients, as
optimizer.apply_gradients([(g, w)]) does in Keras 3:
  w0.npy, g0.npy, g1.npy, g2.npy   the start and the gradients (the same for every case)
  <case>.npy                       w after the 3 updates
  cases.json                       [{"case", "config": keras.optimizers.serialize(optimizer)}]

Run: python3 tools/make_optimizer_fixtures.py"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from fixture_common import FIXTURES, save  # noqa: E402

OUT = os.path.join(FIXTURES, "keras", "optimizers")

CASES = {
    "adam": lambda: keras.optimizers.Adam(learning_rate=0.01),
    "adam_weight_decay": lambda: keras.optimizers.Adam(learning_rate=0.01, weight_decay=0.1),
    "adamw": lambda: keras.optimizers.AdamW(learning_rate=0.01),
    "adamax": lambda: keras.optimizers.Adamax(learning_rate=0.01),
    "adagrad": lambda: keras.optimizers.Adagrad(learning_rate=0.05),
    "lion": lambda: keras.optimizers.Lion(learning_rate=0.01),
    "sgd_clipnorm": lambda: keras.optimizers.SGD(learning_rate=0.1, momentum=0.9, clipnorm=0.5),
    "sgd_global_clipnorm": lambda: keras.optimizers.SGD(learning_rate=0.1, global_clipnorm=0.5),
    "rmsprop_clipvalue": lambda: keras.optimizers.RMSprop(learning_rate=0.01, clipvalue=0.3),
}


def main():
    rng = np.random.RandomState(4)
    w0 = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    gradients = [rng.uniform(-1, 1, (4, 3)).astype(np.float32) for _ in range(3)]
    save(OUT, "w0", w0)
    for k, g in enumerate(gradients):
        save(OUT, f"g{k}", g)
    cases = []
    for name, make in CASES.items():
        optimizer = make()
        w = keras.Variable(w0)
        for g in gradients:
            optimizer.apply_gradients([(keras.ops.convert_to_tensor(g), w)])
        save(OUT, name, w.numpy())
        cases.append({"case": name, "config": keras.optimizers.serialize(optimizer)})
        print(name, w.numpy()[0])
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
