"""Loads model files with Keras and writes each one's predictions for its X.npy to its OUT.npy:
    python3 keras_predict.py MODEL X.npy OUT.npy [MODEL X.npy OUT.npy ...]
(one process for many files: importing Keras takes seconds). Exits 77 when keras (with a
backend) is not installed."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# XLA's cheapest CPU compilation: compiling predict is most of the time this takes.
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true")
try:
    import keras
    import numpy as np
except ImportError as error:
    print(f"keras is not installed: {error}")
    sys.exit(77)

for path, x, out in zip(sys.argv[1::3], sys.argv[2::3], sys.argv[3::3]):
    model = keras.models.load_model(path)
    np.save(out, model.predict(np.load(x), verbose=0).astype(np.float32))
    print(f"keras {keras.__version__} ({keras.backend.backend()}) loaded {path}")
