"""Loads model files with Keras and writes each one's predictions for its X.npy to its OUT.npy:
    python3 keras_predict.py MODEL X.npy OUT.npy [MODEL X.npy OUT.npy ...]
(one process for many files: importing Keras takes seconds). Exits 77 when keras (with a
backend) is not installed."""
import os
import sys

# Keras' NumPy backend, whatever KERAS_BACKEND says: it predicts (all this needs) with no
# compilation. Under JAX, loading compiles each weight's initializer for its shape before the
# file's values replace it: 20 s of EfficientNetB0's load, 1.4 s here, predictions within 1.4e-6.
os.environ["KERAS_BACKEND"] = "numpy"
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
