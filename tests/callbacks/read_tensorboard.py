"""Reads the scalars of a TensorBoard log directory with TensorBoard's own event reader (which
checks every record's CRC) and prints them as JSON on a line that starts with "SCALARS ": {"train": {"epoch_loss": [[step, value],
...], ...}, "validation": {...}}. Exits 77 when the tensorboard package is not installed.

    python read_tensorboard.py LOG_DIR
"""
import json
import sys

try:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
except ImportError as error:
    print(f"tensorboard is not installed ({error}); pip install tensorboard")
    sys.exit(77)

result = {}
for run in ("train", "validation"):
    accumulator = EventAccumulator(f"{sys.argv[1]}/{run}", size_guidance={"scalars": 0})
    accumulator.Reload()
    result[run] = {
        tag: [[event.step, event.value] for event in accumulator.Scalars(tag)]
        for tag in accumulator.Tags()["scalars"]
    }
print("SCALARS " + json.dumps(result))
