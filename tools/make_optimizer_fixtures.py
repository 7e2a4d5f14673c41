"""Writes tests/fixtures/keras/optimizers/ with Keras (TensorFlow backend, from PyPI): each
optimizer of CASES applied 3 times to one variable w (4, 3) with fixed gradients, as
optimizer.apply_gradients([(g, w)]) does in Keras 3:
  w0.npy, g0.npy, g1.npy, g2.npy   the start and the gradients (the same for every case)
  <case>.npy                       w after the 3 updates
  <case>_accumulator.npy           for ACCUMULATOR_CASES, the gradient accumulator after 2
  cases.json                       [{"case", "config": keras.optimizers.serialize(optimizer),
                                     "variable_dtype"}]
  BFLOAT16_CASES run on a bfloat16 variable (Keras' bfloat16 policy): Keras then rounds after
  every operation of the update, its constants (learning rate, betas, epsilon) included.
  adam_default_bfloat16.npy and nadam_default_bfloat16.npy show why Tenfold refuses their
  default beta_2 there: 0.999 rounds to 1.0 in bfloat16, so Keras' Adam update is zero (w stays
  w0 rounded) and its Nadam's NaN.
  schedules.json                   [{"config": keras.optimizers.schedules.serialize(schedule),
                                     "steps": [...], "values": [schedule(step), ...]}]

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
    "adam_amsgrad": lambda: keras.optimizers.Adam(learning_rate=0.01, beta_2=0.5, amsgrad=True),
    "nadam": lambda: keras.optimizers.Nadam(learning_rate=0.01),
    "adadelta": lambda: keras.optimizers.Adadelta(learning_rate=1.0),
    "rmsprop_centered": lambda: keras.optimizers.RMSprop(learning_rate=0.01, centered=True),
    "rmsprop_centered_momentum": lambda: keras.optimizers.RMSprop(learning_rate=0.01, momentum=0.5, centered=True),
    "adam_accumulation": lambda: keras.optimizers.Adam(learning_rate=0.01, gradient_accumulation_steps=2),
    "sgd_accumulation_clipnorm": lambda: keras.optimizers.SGD(learning_rate=0.1, momentum=0.9, clipnorm=0.5,
                                                              gradient_accumulation_steps=2),
    "sgd_exponential_decay": lambda: keras.optimizers.SGD(
        learning_rate=keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5)),
    "adamw_cosine_warmup": lambda: keras.optimizers.AdamW(
        learning_rate=keras.optimizers.schedules.CosineDecay(0.0, decay_steps=4, warmup_target=0.02, warmup_steps=2)),
    "nadam_piecewise": lambda: keras.optimizers.Nadam(
        learning_rate=keras.optimizers.schedules.PiecewiseConstantDecay([0, 1], [0.01, 0.005, 0.001])),
}

BFLOAT16_CASES = {
    "sgd_bfloat16": lambda: keras.optimizers.SGD(learning_rate=0.1),
    "sgd_momentum_bfloat16": lambda: keras.optimizers.SGD(learning_rate=0.1, momentum=0.9),
    "sgd_nesterov_bfloat16": lambda: keras.optimizers.SGD(learning_rate=0.1, momentum=0.9, nesterov=True),
    "adam_bfloat16": lambda: keras.optimizers.Adam(learning_rate=0.01, beta_2=0.99),
    "adam_amsgrad_bfloat16": lambda: keras.optimizers.Adam(learning_rate=0.01, beta_2=0.5, amsgrad=True),
    "adamw_bfloat16": lambda: keras.optimizers.AdamW(learning_rate=0.01, beta_2=0.99, weight_decay=0.1),
    "rmsprop_bfloat16": lambda: keras.optimizers.RMSprop(learning_rate=0.01),
    "rmsprop_centered_momentum_bfloat16": lambda: keras.optimizers.RMSprop(learning_rate=0.01, momentum=0.5,
                                                                           centered=True),
    "adagrad_bfloat16": lambda: keras.optimizers.Adagrad(learning_rate=0.05),
    "adadelta_bfloat16": lambda: keras.optimizers.Adadelta(learning_rate=1.0),
    "adamax_bfloat16": lambda: keras.optimizers.Adamax(learning_rate=0.01),
    "lion_bfloat16": lambda: keras.optimizers.Lion(learning_rate=0.01),
    "nadam_bfloat16": lambda: keras.optimizers.Nadam(learning_rate=0.01, beta_2=0.99),
    "sgd_accumulation_bfloat16": lambda: keras.optimizers.SGD(learning_rate=0.1, momentum=0.9,
                                                              gradient_accumulation_steps=3),
}

# Cases whose gradient accumulator (after the first two gradients, of three steps) is saved as
# <case>_accumulator.npy: the update after it rounds away most of its last bits.
ACCUMULATOR_CASES = ["sgd_accumulation_bfloat16"]

SCHEDULES = [
    keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.96),
    keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True),
    keras.optimizers.schedules.PiecewiseConstantDecay([10, 100], [1.0, 0.5, 0.1]),
    keras.optimizers.schedules.PolynomialDecay(0.1, decay_steps=50, end_learning_rate=0.01, power=0.5),
    keras.optimizers.schedules.PolynomialDecay(0.1, decay_steps=30, power=2.0, cycle=True),
    keras.optimizers.schedules.InverseTimeDecay(0.1, decay_steps=10, decay_rate=0.5),
    keras.optimizers.schedules.InverseTimeDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True),
    keras.optimizers.schedules.CosineDecay(0.1, decay_steps=100, alpha=0.1),
    keras.optimizers.schedules.CosineDecay(0.0, decay_steps=100, warmup_target=0.1, warmup_steps=20),
    keras.optimizers.schedules.CosineDecayRestarts(0.1, first_decay_steps=10),
    keras.optimizers.schedules.CosineDecayRestarts(0.1, first_decay_steps=10, t_mul=1.0, m_mul=0.5, alpha=0.1),
]
STEPS = [0, 1, 2, 5, 9, 10, 11, 19, 20, 29, 30, 31, 45, 50, 60, 99, 100, 101, 150, 1000]


def main():
    rng = np.random.RandomState(4)
    w0 = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    gradients = [rng.uniform(-1, 1, (4, 3)).astype(np.float32) for _ in range(3)]
    save(OUT, "w0", w0)
    for k, g in enumerate(gradients):
        save(OUT, f"g{k}", g)
    cases = []
    for dtype, case_list in (("float32", CASES), ("bfloat16", BFLOAT16_CASES)):
        for name, make in case_list.items():
            optimizer = make()
            w = keras.Variable(w0, dtype=dtype)
            # A bfloat16 variable's gradients are bfloat16, as a model under the policy computes
            # them (Keras adds a float32 one to a bfloat16 accumulator only with an error).
            for k, g in enumerate(gradients):
                optimizer.apply_gradients([(keras.ops.convert_to_tensor(g, dtype=dtype), w)])
                if k == 1 and name in ACCUMULATOR_CASES:
                    save(OUT, name + "_accumulator", optimizer._accumulated_gradients[0].numpy())
            save(OUT, name, w.numpy())
            cases.append({"case": name, "config": keras.optimizers.serialize(optimizer), "variable_dtype": dtype})
            print(name, w.numpy()[0])
    for name, make in (("adam_default_bfloat16", keras.optimizers.Adam),
                       ("nadam_default_bfloat16", keras.optimizers.Nadam)):
        w = keras.Variable(w0, dtype="bfloat16")
        optimizer = make()
        for g in gradients:
            optimizer.apply_gradients([(keras.ops.convert_to_tensor(g), w)])
        save(OUT, name, w.numpy())
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    schedules = [{"config": keras.optimizers.schedules.serialize(schedule), "steps": STEPS,
                  "values": [float(schedule(step)) for step in STEPS]} for schedule in SCHEDULES]
    with open(os.path.join(OUT, "schedules.json"), "w") as f:
        json.dump(schedules, f, indent=1)


if __name__ == "__main__":
    main()
