#!/usr/bin/env bash
# Best effort: a virtual environment with Keras (JAX backend, the lightest) for the test that loads
# Tenfold's model files in Keras (tests/io/keras_predict.py), TensorBoard for the test that
# reads Tenfold's event files (tests/callbacks/read_tensorboard.py), and scikit-learn with
# pandas for the test on its real data sets (tests/cli/sklearn_data.py). Without network they
# skip.
#   scripts/install-keras-for-tests.sh VENV_DIR
set -uo pipefail
venv=$1
[ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import keras, jax, h5py, tensorboard, sklearn, pandas" 2>/dev/null && exit 0
python3 -m venv "$venv" >/dev/null 2>&1 || { echo "warning: python3 -m venv failed; the Keras round-trip test will skip"; exit 0; }
"$venv/bin/python" -m pip install -q --disable-pip-version-check keras jax h5py numpy tensorboard scikit-learn pandas >/dev/null 2>&1 \
  || echo "warning: pip could not install keras, tensorboard and scikit-learn; the tests that use them will skip"
exit 0
