"""Loads a model file with Keras and writes its predictions for X.npy to OUT.npy:
    python3 keras_predict.py MODEL X.npy OUT.npy
Exits 77 when keras (with a backend) is not installed."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import keras
    import numpy as np
except ImportError as error:
    print(f"keras is not installed: {error}")
    sys.exit(77)

model = keras.models.load_model(sys.argv[1])
np.save(sys.argv[3], model.predict(np.load(sys.argv[2]), verbose=0).astype(np.float32))
print(f"keras {keras.__version__} ({keras.backend.backend()}) loaded {sys.argv[1]}")
