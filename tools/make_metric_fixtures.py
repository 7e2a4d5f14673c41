"""Writes tests/fixtures/keras/metrics/ with Keras (TensorFlow backend, from PyPI): each metric
of CASES updated with two batches of one kind of data, and its result, as compile's metrics
compute them over an epoch:
  <kind>_true_<b>.npy, <kind>_pred_<b>.npy   the two batches b = 0, 1 of each kind of data
  cases.json   [{"metric": a name or keras.metrics.serialize(metric), "data": kind,
                 "result": the result after both batches}]
Kinds: binary (one sigmoid unit, 0/1 labels, ties at thresholds), logits (the same labels,
raw scores), onehot (5 softmax classes, one-hot labels), sparse (the same, integer labels),
regression (3 positive targets and predictions).

Run: python3 tools/make_metric_fixtures.py"""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from fixture_common import FIXTURES, save  # noqa: E402

OUT = os.path.join(FIXTURES, "keras", "metrics")
M = keras.metrics

CASES = [
    ("binary", "auc"), ("binary", M.AUC(curve="PR")), ("binary", M.AUC(num_thresholds=50, summation_method="minoring")),
    ("binary", M.AUC(curve="PR", summation_method="majoring")), ("logits", M.AUC(from_logits=True)),
    ("binary", "precision"), ("binary", "recall"), ("binary", M.Precision(thresholds=0.3)),
    ("binary", M.Recall(thresholds=0.7)), ("binary", "binary_accuracy"), ("binary", M.BinaryAccuracy(threshold=0.7)),
    ("binary", "binary_crossentropy"),
    ("onehot", "categorical_accuracy"), ("onehot", M.TopKCategoricalAccuracy(k=2)),
    ("onehot", M.F1Score(average="macro")), ("onehot", M.F1Score(average="micro", threshold=0.3)),
    ("onehot", M.F1Score(average="weighted")), ("onehot", M.FBetaScore(average="macro", beta=2.0)),
    ("onehot", "categorical_crossentropy"), ("onehot", "precision"), ("onehot", "auc"),
    ("onehot", "categorical_hinge"), ("onehot", "kl_divergence"),
    ("sparse", "sparse_categorical_accuracy"), ("sparse", M.SparseTopKCategoricalAccuracy(k=2)),
    ("sparse", "sparse_categorical_crossentropy"),
    ("regression", "mae"), ("regression", "mse"), ("regression", "root_mean_squared_error"), ("regression", "mape"),
    ("regression", "msle"), ("regression", "log_cosh_error"), ("regression", "poisson"), ("regression", "squared_hinge"),
]


def batches(rng):
    data = {}
    for b in range(2):
        labels = rng.randint(0, 2, (16, 1)).astype(np.float32)
        # Scores on a grid of 1/8: ties between samples and with thresholds 0.5 and AUC's.
        scores = np.round(rng.uniform(0, 1, (16, 1)) * 8) / 8
        data[("binary", b)] = (labels, scores.astype(np.float32))
        data[("logits", b)] = (labels, rng.normal(0, 2, (16, 1)).astype(np.float32))
        classes = rng.randint(0, 5, 16)
        logits = rng.normal(0, 1.5, (16, 5))
        softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        data[("onehot", b)] = (np.eye(5, dtype=np.float32)[classes], softmax.astype(np.float32))
        data[("sparse", b)] = (classes.astype(np.int32), softmax.astype(np.float32))
        data[("regression", b)] = (rng.uniform(0.5, 3, (16, 3)).astype(np.float32),
                                   rng.uniform(0.5, 3, (16, 3)).astype(np.float32))
    return data


def main():
    data = batches(np.random.RandomState(11))
    for (kind, b), (y_true, y_pred) in data.items():
        save(OUT, f"{kind}_true_{b}", y_true, y_true.dtype)
        save(OUT, f"{kind}_pred_{b}", y_pred)
    cases = []
    for kind, metric in CASES:
        name = metric
        if isinstance(metric, str):
            metric = M.get(metric)
        for b in range(2):
            metric.update_state(*data[(kind, b)])
        entry = name if isinstance(name, str) else keras.metrics.serialize(metric)
        cases.append({"metric": entry, "data": kind, "result": float(metric.result())})
        print(kind, entry if isinstance(entry, str) else entry["class_name"], float(metric.result()))
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
