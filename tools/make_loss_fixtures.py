"""Writes tests/fixtures/keras/losses/ with Keras (TensorFlow backend, from PyPI), for the loss
parity tests. For each case of cases() (a Keras loss object and its data):
  <case>_pred.npy   y_pred, float32 (8, 5), from np.random.RandomState(1).
  <case>_true.npy   y_true, float32 (8, 5), from np.random.RandomState(2).
  <case>_loss.npy   float64 (1,): loss(y_true, y_pred) with the object's default reduction
                    ("sum_over_batch_size": the mean over the batch of the per-sample values).
  <case>_grad.npy   float32 (8, 5): d loss / d y_pred (tf.GradientTape).
  cases.json        a JSON list of {"case": name, "config": keras.losses.serialize(loss),
                    "args": the constructor arguments given here}. "args" is there because
                    some configs drop arguments: in Keras 3.15.1 Huber.get_config has no
                    "delta" (and CosineSimilarity none of "axis"), so the config of
                    Huber(delta=0.5) deserializes to delta 1.0.

Data (all deterministic):
  uniform(a, b)     RandomState(seed).uniform(a, b, size=(8, 5)).
  softmax(a, b)     the rows of uniform(a, b) put through a softmax (probability rows).
  binary            RandomState(2).randint(0, 2, size=(8, 5)) as floats.
  signs             2 * binary - 1, that is values in {-1, 1}.
  one_hot           one-hot rows of RandomState(2).randint(0, 5, size=8).
  counts            RandomState(2).randint(0, 5, size=(8, 5)) as floats (Poisson targets).

Run: cd tools && python3 make_loss_fixtures.py"""
import json
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from fixture_common import FIXTURES, save  # noqa: E402

OUT = os.path.join(FIXTURES, "keras", "losses")

SHAPE = (8, 5)
PRED_SEED = 1
TRUE_SEED = 2


def uniform(seed, low, high):
    return np.random.RandomState(seed).uniform(low, high, size=SHAPE)


def softmax(seed, low, high):
    z = uniform(seed, low, high)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def binary(seed):
    return np.random.RandomState(seed).randint(0, 2, size=SHAPE).astype(np.float64)


def signs(seed):
    return 2.0 * binary(seed) - 1.0


def one_hot(seed):
    classes = np.random.RandomState(seed).randint(0, SHAPE[1], size=SHAPE[0])
    return np.eye(SHAPE[1])[classes]


def counts(seed):
    return np.random.RandomState(seed).randint(0, 5, size=SHAPE).astype(np.float64)


def cases():
    """(name, loss class, constructor arguments, y_pred, y_true) for each case."""
    p, t = PRED_SEED, TRUE_SEED
    return [
        ("mean_absolute_error", keras.losses.MeanAbsoluteError, {},
         uniform(p, 0, 3), uniform(t, 0, 3)),
        ("mean_absolute_percentage_error", keras.losses.MeanAbsolutePercentageError, {},
         uniform(p, 0, 3), uniform(t, 0, 3)),
        ("mean_squared_logarithmic_error", keras.losses.MeanSquaredLogarithmicError, {},
         uniform(p, 0, 3), uniform(t, 0, 3)),
        ("huber", keras.losses.Huber, {}, uniform(p, -2, 2), uniform(t, -2, 2)),
        ("huber_delta_0_5", keras.losses.Huber, {"delta": 0.5},
         uniform(p, -2, 2), uniform(t, -2, 2)),
        ("log_cosh", keras.losses.LogCosh, {}, uniform(p, -2, 2), uniform(t, -2, 2)),
        ("binary_crossentropy", keras.losses.BinaryCrossentropy, {},
         uniform(p, 0.02, 0.98), binary(t)),
        ("binary_crossentropy_smoothing",
         keras.losses.BinaryCrossentropy, {"label_smoothing": 0.1},
         uniform(p, 0.02, 0.98), binary(t)),
        ("binary_crossentropy_logits",
         keras.losses.BinaryCrossentropy, {"from_logits": True},
         uniform(p, -4, 4), binary(t)),
        ("binary_focal_crossentropy", keras.losses.BinaryFocalCrossentropy, {},
         uniform(p, 0.02, 0.98), binary(t)),
        ("categorical_crossentropy_smoothing",
         keras.losses.CategoricalCrossentropy, {"label_smoothing": 0.1},
         softmax(p, -2, 2), one_hot(t)),
        ("kl_divergence", keras.losses.KLDivergence, {}, softmax(p, -2, 2), softmax(t, -2, 2)),
        ("poisson", keras.losses.Poisson, {}, uniform(p, 0.1, 3), counts(t)),
        ("hinge", keras.losses.Hinge, {}, uniform(p, -2, 2), signs(t)),
        ("squared_hinge", keras.losses.SquaredHinge, {}, uniform(p, -2, 2), signs(t)),
        ("hinge_01", keras.losses.Hinge, {}, uniform(p, -2, 2), binary(t)),
        ("categorical_hinge", keras.losses.CategoricalHinge, {},
         uniform(p, -2, 2), one_hot(t)),
        ("cosine_similarity", keras.losses.CosineSimilarity, {},
         uniform(p, -1, 1), uniform(t, -1, 1)),
    ]


def loss_and_gradient(loss, y_pred, y_true):
    pred = tf.Variable(y_pred, dtype=tf.float32)
    true = tf.constant(y_true, dtype=tf.float32)
    with tf.GradientTape() as tape:
        value = loss(true, pred)
    grad = tape.gradient(value, pred)
    return np.float64(np.asarray(value)), np.asarray(grad, np.float32)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    configs = []
    for name, cls, args, y_pred, y_true in cases():
        loss = cls(**args)
        y_pred = y_pred.astype(np.float32)
        y_true = y_true.astype(np.float32)
        value, grad = loss_and_gradient(loss, y_pred, y_true)
        assert np.isfinite(value) and np.all(np.isfinite(grad)), name
        save(OUT, f"{name}_pred", y_pred)
        save(OUT, f"{name}_true", y_true)
        save(OUT, f"{name}_loss", np.array([value]), dtype=np.float64)
        save(OUT, f"{name}_grad", grad)
        config = keras.losses.serialize(loss)
        configs.append({"case": name, "config": config, "args": args})
        again, _ = loss_and_gradient(keras.losses.deserialize(config), y_pred, y_true)
        note = "" if again == value else f"  (NOTE: the config loses {args}: {again!r})"
        print(f"{name}: {value!r}{note}")
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(configs, f, indent=1)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
