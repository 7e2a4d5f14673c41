"""Training throughput of the recipe's model, side by side: Tenfold vs PyTorch vs Keras
(TensorFlow backend), same model, Fashion-MNIST data, global batch, optimizer and thread count.

    python3 bench/train_throughput.py --tenfold build/tenfold-bench-train [--threads 2]
        [--dtype-policy mixed_bfloat16] [--tenfold-devices 2]

With --dtype-policy mixed_bfloat16 each framework trains under its mixed bfloat16 precision:
Keras' policy (set before the model is made), PyTorch's torch.autocast("cpu", bfloat16),
Tenfold's policy. --tenfold-devices N trains Tenfold on N local replicas (the cores split into
logical devices, as `tenfold train` does) instead of one replica on all threads.

Each framework runs in its own process, in alternating rounds so a noisy machine slows all of
them alike; each reports the best and the median of timed windows. PyTorch and TensorFlow
come from PyPI (scripts/install-python-references.sh). PyTorch runs with glibc malloc tuned
(MALLOC_* below): with the defaults it page-faults on every step's large tensors and runs
2-3x slower, which would flatter Tenfold."""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))


def windows(step, steps, repeats, warmup):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        times.append(time.perf_counter() - start)
    return sorted(times)


def report(framework, version, times, steps, batch):
    best, median = times[0], times[len(times) // 2]
    print(json.dumps({"framework": framework, "version": version,
                      "best_samples_per_second": steps * batch / best,
                      "median_samples_per_second": steps * batch / median}))


def run_torch(args):
    import numpy as np
    import torch
    from fixture_common import fashion_mnist
    torch.set_num_threads(args.threads)
    (x, y), _ = fashion_mnist()
    x = torch.tensor(x.transpose(0, 3, 1, 2).copy())
    y = torch.tensor(y.astype(np.int64))
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(5408, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = torch.nn.CrossEntropyLoss()
    batches = len(x) // args.batch_size
    position = [0]

    mixed = args.dtype_policy == "mixed_bfloat16"

    def step():
        b = position[0] % batches
        position[0] += 1
        xb = x[b * args.batch_size:(b + 1) * args.batch_size]
        yb = y[b * args.batch_size:(b + 1) * args.batch_size]
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=mixed):
            loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()

    report("pytorch", torch.__version__, windows(step, args.steps, args.repeats, 5),
           args.steps, args.batch_size)


def run_keras(args):
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import keras
    from fixture_common import fashion_mnist
    (x, y), _ = fashion_mnist()
    keras.mixed_precision.set_dtype_policy(args.dtype_policy)
    model = keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        keras.layers.Conv2D(32, 3, activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    count = args.steps * args.batch_size

    def window():  # fit is the path users take; one call runs `steps` steps
        model.fit(x[:count], y[:count], batch_size=args.batch_size, epochs=1, verbose=0,
                  shuffle=False)

    report("keras", f"keras {keras.__version__}, tensorflow {tf.__version__}",
           windows(window, 1, args.repeats, 1), args.steps, args.batch_size)


def run_tenfold(args):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    out = subprocess.run([args.tenfold, "--batch-size", str(args.batch_size), "--steps",
                          str(args.steps), "--repeats", str(args.repeats), "--dtype-policy", args.dtype_policy]
                         + (["--devices", str(args.tenfold_devices)] if args.tenfold_devices else []),
                         env=env, check=True, capture_output=True, text=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    result["version"] = "this tree"
    print(json.dumps(result))


# Keep freed memory mapped, so PyTorch's per-step tensors do not page-fault anew each step.
TUNED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "4294967296",
                "MALLOC_TOP_PAD_": "1073741824"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tenfold", default="build/tenfold-bench-train")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=["tenfold", "pytorch", "keras"])
    parser.add_argument("--dtype-policy", default="float32", choices=["float32", "mixed_bfloat16"])
    parser.add_argument("--tenfold-devices", type=int, default=0)
    args = parser.parse_args()
    runners = {"tenfold": run_tenfold, "pytorch": run_torch, "keras": run_keras}
    if args.only:
        runners[args.only](args)
        return
    results = {}
    for _ in range(args.rounds):
        for name in runners:
            command = [sys.executable, __file__, "--only", name] + [
                f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items()
                if k not in ("only", "rounds")]
            env = dict(os.environ, **(TUNED_MALLOC if name == "pytorch" else {}))
            out = subprocess.run(command, check=True, capture_output=True, text=True,
                                 env=env).stdout
            result = json.loads(out.strip().splitlines()[-1])
            best = results.setdefault(name, result)
            for key in ("best_samples_per_second", "median_samples_per_second"):
                best[key] = max(best[key], result[key])
    tenfold = results["tenfold"]["best_samples_per_second"]
    replicas = f"{args.tenfold_devices} replicas" if args.tenfold_devices else "one replica"
    print(f"\nrecipe CNN, Fashion-MNIST, batch {args.batch_size}, {args.threads} threads (Tenfold: {replicas}), "
          f"Adam, {args.dtype_policy}; best (median) of {args.rounds} rounds x {args.repeats} windows x "
          f"{args.steps} steps")
    print(f"{'framework':10} {'samples/s best':>15} {'median':>10} {'tenfold / it':>13}  version")
    for name, r in results.items():
        print(f"{name:10} {r['best_samples_per_second']:15.0f} {r['median_samples_per_second']:10.0f}"
              f" {tenfold / r['best_samples_per_second']:13.2f}  {r['version']}")


if __name__ == "__main__":
    main()
