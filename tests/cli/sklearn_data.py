"""Real data sets for tests/cli/test_real_data.cpp, as a Keras user prepares them: scikit-learn's
bundled breast cancer (classification) and diabetes (regression) tables written to CSV by
pandas, split 80/20, and for each a Keras model (Normalization adapted to the training split,
Dense layers) saved compiled and untrained. For diabetes, Keras also trains the model and
writes its test MAE: the figure Tenfold must reach.

    python sklearn_data.py OUT_DIR"""
import json
import os
import sys

import keras
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.model_selection import train_test_split


def write_split(frame, name, out, stratify=None):
    train, test = train_test_split(frame, test_size=0.2, random_state=0, stratify=stratify)
    train.to_csv(os.path.join(out, name + "_train.csv"), index=False)
    test.to_csv(os.path.join(out, name + "_test.csv"), index=False)
    return train, test


def model_for(train, hidden, output, loss, metrics, learning_rate):
    features = train.drop(columns="target").to_numpy("float32")
    normalization = keras.layers.Normalization()
    normalization.adapt(features)
    model = keras.Sequential([keras.Input(shape=(features.shape[1],)), normalization,
                              keras.layers.Dense(hidden, activation="relu"), output])
    model.compile(optimizer=keras.optimizers.Adam(learning_rate), loss=loss, metrics=metrics)
    return model


def main(out):
    os.makedirs(out, exist_ok=True)
    keras.utils.set_random_seed(0)
    cancer = load_breast_cancer(as_frame=True).frame
    train, _ = write_split(cancer, "breast_cancer", out, stratify=cancer["target"])
    model_for(train, 16, keras.layers.Dense(1, activation="sigmoid"), "binary_crossentropy",
              ["accuracy"], 1e-2).save(os.path.join(out, "breast_cancer.keras"))

    diabetes = load_diabetes(as_frame=True, scaled=False).frame
    train, test = write_split(diabetes, "diabetes", out)
    model = model_for(train, 32, keras.layers.Dense(1), "mse", ["mae"], 1e-2)
    model.save(os.path.join(out, "diabetes.keras"))
    model.fit(train.drop(columns="target").to_numpy("float32"), train["target"].to_numpy("float32"),
              epochs=200, batch_size=32, verbose=0)
    mae = model.evaluate(test.drop(columns="target").to_numpy("float32"),
                         test["target"].to_numpy("float32"), verbose=0, return_dict=True)["mae"]
    with open(os.path.join(out, "keras.json"), "w") as f:
        json.dump({"diabetes_test_mae": mae, "keras": keras.__version__}, f)


if __name__ == "__main__":
    main(sys.argv[1])
