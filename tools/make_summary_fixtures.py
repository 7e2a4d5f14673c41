"""Writes tests/fixtures/keras/summaries/<model>.txt: Keras 3's model.summary() of fixture
models as it prints to a log (80 columns), the oracle of Tenfold's summary
(tests/models/test_functional.cpp).

Run: python3 tools/make_summary_fixtures.py"""
import os

os.environ["COLUMNS"] = "80"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402

from fixture_common import FIXTURES  # noqa: E402

OUT = os.path.join(FIXTURES, "keras", "summaries")
MODELS = {
    "small": "models/small.keras",                 # Sequential, trained: optimizer params
    "tabular": "models/tabular.keras",             # compiled, never trained
    "residual": "keras/parity_residual/model.json",  # Functional with "Connected to"
    "nested": "keras/parity_nested/model.json",    # a Sequential inside a Functional
    "shared": "keras/parity_shared/model.json",    # shared layers, called twice
    "batchnorm": "keras/parity_batchnorm/model.json",  # non-trainable weights, long names
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, path in MODELS.items():
        path = os.path.join(FIXTURES, path)
        if path.endswith(".json"):
            with open(path) as f:
                model = keras.models.model_from_json(f.read())
        else:
            model = keras.models.load_model(path)
        lines = []
        model.summary(print_fn=lambda text, line_break=True: lines.append(text))
        with open(os.path.join(OUT, name + ".txt"), "w") as f:
            f.write("".join(lines))


if __name__ == "__main__":
    main()
