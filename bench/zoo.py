"""Training throughput of the model zoo (bench/zoo/*.json, Keras model JSON written by
tools/make_zoo_models.py), side by side: Tenfold vs Keras (TensorFlow backend) vs PyTorch, each
model trained on Fashion-MNIST (60000 train, validation on the 10000 test images each epoch) with
Adam(1e-3, epsilon 1e-7), sparse categorical crossentropy, global batch 512, 2 threads.

    python3 bench/zoo.py [--rounds 2]
    python3 bench/zoo.py --accuracy-seeds 3   # one-epoch validation accuracy, Tenfold vs Keras

An epoch's time includes its validation. Every framework runs two epochs in one process and
times the second (steady state: no tracing, warm allocator); Tenfold's from `tenfold train
--history`'s epoch_seconds. Each framework and model runs in its own process, frameworks
alternating within each round so a noisy machine slows all of them alike. Also reported: the
achieved GFLOP/s of Tenfold (Conv2D and Dense FLOPs counted from the JSON) against a 2-thread
f32 matmul peak, the validation accuracy after one epoch, Tenfold's arena (from `tenfold
summary`) and the peak RSS of each training process (ru_maxrss from os.wait4).

PyTorch runs the same JSON translated into torch.nn, with glibc malloc tuned (TUNED_MALLOC, as in
bench/train_throughput.py).

--accuracy-seeds N trains each model one epoch with seeds 1..N in Tenfold and in Keras (each
seed its own initial weights and shuffle) and compares the mean validation accuracies: issue
12's "within 0.01 of Keras", judged against each framework's own spread over the seeds."""
import argparse
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ZOO = os.path.join(HERE, "zoo")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))

THREADS = 2
BATCH = 512
FRAMEWORKS = ("tenfold", "keras", "pytorch")
QUICK_TRAIN, QUICK_VALIDATION = 5120, 1024  # --quick: Keras and PyTorch on these first samples

# Keep freed memory mapped, so PyTorch's per-step tensors do not page-fault anew each step.
TUNED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "4294967296",
                "MALLOC_TOP_PAD_": "1073741824"}


def run(command, env=None):
    """Runs command to its end: (stdout, wall seconds, peak RSS in MiB from os.wait4)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as stderr:
        with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=stderr,
                              text=True) as process:
            out = process.stdout.read()
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - start
            process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode:
            stderr.seek(0)
            sys.stderr.write(out + stderr.read().decode())
            raise subprocess.CalledProcessError(process.returncode, command)
    return out, wall, usage.ru_maxrss / 1024


def load(path):
    with open(path) as f:
        return json.load(f)


def out_size(size, kernel, stride, padding):
    return -(-size // stride) if padding == "same" else (size - kernel) // stride + 1


def tf_same_pad(size, kernel, stride):
    """TensorFlow's 'same' padding of one dimension: (before, after), the extra one after."""
    total = max((out_size(size, kernel, stride, "same") - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def inbound_names(layer):
    """The names of the layers a Functional config's layer reads (Keras 3's inbound_nodes)."""
    if not layer["inbound_nodes"]:
        return []
    argument = layer["inbound_nodes"][0]["args"][0]
    tensors = argument if isinstance(argument, list) else [argument]
    return [tensor["config"]["keras_history"][0] for tensor in tensors]


WINDOWED = ("Conv2D", "DepthwiseConv2D", "MaxPooling2D", "AveragePooling2D")


def nodes(config):
    """The model's layer calls in order, as (name, class name, layer config, input names, input
    shapes, output shape), shapes without the batch: (H, W, C) for images, (features,) after
    Flatten. The input is named "input". A Sequential model is a chain of calls."""
    layers = config["config"]["layers"]
    sequential = config["class_name"] == "Sequential"
    shapes = {}
    previous = None
    for layer in layers:
        kind, c = layer["class_name"], layer["config"]
        name = layer.get("name", c.get("name"))
        if kind == "InputLayer":
            shapes[name] = tuple(c["batch_shape"][1:])
            previous = name
            continue
        reads = [previous] if sequential else inbound_names(layer)
        inputs = [shapes[read] for read in reads]
        shape = inputs[0]
        if kind in WINDOWED:
            kernel = c["pool_size"] if kind.endswith("Pooling2D") else c["kernel_size"]
            strides = c["strides"] or kernel
            height, width = (out_size(n, k, s, c["padding"])
                             for n, k, s in zip(shape, kernel, strides))
            channels = {"Conv2D": c.get("filters"),
                        "DepthwiseConv2D": shape[2] * c.get("depth_multiplier", 1)}.get(kind, shape[2])
            out = (height, width, channels)
        elif kind == "Flatten":
            out = (math.prod(shape),)
        elif kind == "Dense":
            out = (c["units"],)
        elif kind in ("Dropout", "Activation", "ReLU", "Add", "BatchNormalization", "RandomFlip",
                      "RandomTranslation"):
            out = shape
        elif kind == "Concatenate":
            out = shape[:-1] + (sum(each[-1] for each in inputs),)
        elif kind == "GlobalAveragePooling2D":
            out = (shape[2],)
        else:
            raise ValueError(f"layer {kind} is not one of the zoo's")
        yield name, kind, c, reads, inputs, out
        shapes[name] = out
        previous = name


def flops(config):
    """(training, forward) FLOPs per sample: 2 x MACs of every convolution and Dense; training is 3x
    forward (forward, input and weight gradients) but 2x for the first of them, which needs no
    input gradient. Pooling, merging and activations are not counted."""
    training = forward = 0
    for _, kind, c, _, (shape, *_), out in nodes(config):
        if kind == "Conv2D":
            layer = 2 * out[0] * out[1] * math.prod(c["kernel_size"]) * shape[2] * out[2]
        elif kind == "DepthwiseConv2D":
            layer = 2 * out[0] * out[1] * math.prod(c["kernel_size"]) * out[2]
        elif kind == "Dense":
            layer = 2 * shape[0] * out[0]
        else:
            continue
        training += (3 if forward else 2) * layer
        forward += layer
    return training, forward


def torch_model(config):
    """The Keras JSON as a torch.nn.Module that runs its layer calls in order. Images are kept
    NCHW (the input is permuted once) and permuted back to NHWC before Flatten, so Dense sizes
    and order match Keras. The last Dense gives logits (its softmax is in CrossEntropyLoss)."""
    import torch
    from torch import nn

    activations = {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid,
                   "softmax": lambda: nn.Softmax(-1)}

    class RandomFlip(nn.Module):
        """Keras' RandomFlip("horizontal") on NCHW images, in training only."""
        def forward(self, x):
            if not self.training:
                return x
            flip = torch.rand(x.shape[0], device=x.device) < 0.5
            return torch.where(flip[:, None, None, None], x.flip(3), x)

    class RandomTranslation(nn.Module):
        """Keras' RandomTranslation with zero fill and bilinear interpolation, in training
        only: each image shifted by up to the factors of its height and width."""
        def __init__(self, height_factor, width_factor):
            super().__init__()
            def bounds(factor):
                return (-factor, factor) if isinstance(factor, (int, float)) else tuple(factor)
            self.height, self.width = bounds(height_factor), bounds(width_factor)

        def forward(self, x):
            if not self.training:
                return x
            n = x.shape[0]
            def shift(low, high):  # a fraction of the size; affine_grid's units are 2 per size
                return (torch.rand(n) * (high - low) + low) * 2
            theta = torch.zeros(n, 2, 3)
            theta[:, 0, 0] = theta[:, 1, 1] = 1
            theta[:, 0, 2] = -shift(*self.width)
            theta[:, 1, 2] = -shift(*self.height)
            grid = nn.functional.affine_grid(theta, list(x.shape), align_corners=False)
            return nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="zeros",
                                             align_corners=False)
    calls = list(nodes(config))
    output = calls[-1][0]
    input_name = next(layer.get("name", layer["config"].get("name"))
                      for layer in config["config"]["layers"] if layer["class_name"] == "InputLayer")

    def layer_module(kind, c, shape):
        """The torch modules of one Keras layer on NCHW images or (N, features)."""
        modules = []
        if kind in WINDOWED:
            kernel = tuple(c["pool_size"] if kind.endswith("Pooling2D") else c["kernel_size"])
            strides = tuple(c["strides"] or kernel)
            (top, bottom), (left, right) = (
                tf_same_pad(n, k, s) if c["padding"] == "same" else (0, 0)
                for n, k, s in zip(shape, kernel, strides))
            symmetric = top == bottom and left == right
            if kind in ("Conv2D", "DepthwiseConv2D"):
                if not symmetric:
                    modules.append(nn.ZeroPad2d((left, right, top, bottom)))
                depthwise = kind == "DepthwiseConv2D"
                filters = shape[2] * c["depth_multiplier"] if depthwise else c["filters"]
                modules.append(nn.Conv2d(shape[2], filters, kernel, strides,
                                         (top, left) if symmetric else 0, bias=c["use_bias"],
                                         groups=shape[2] if depthwise else 1))
            elif kind == "MaxPooling2D":
                if top or bottom or left or right:  # TF's max pooling ignores the padding
                    modules.append(nn.ConstantPad2d((left, right, top, bottom), -math.inf))
                modules.append(nn.MaxPool2d(kernel, strides))
            elif symmetric:  # TF's average pooling leaves the padding out of the count
                modules.append(nn.AvgPool2d(kernel, strides, (top, left),
                                            count_include_pad=False))
            else:
                raise ValueError("AveragePooling2D with asymmetric 'same' padding")
        elif kind == "Flatten":
            modules.append(nn.Flatten())
        elif kind == "Dense":
            modules.append(nn.Linear(shape[0], c["units"], bias=c["use_bias"]))
        elif kind == "Dropout":
            modules.append(nn.Dropout(c["rate"]))
        elif kind == "ReLU":
            if c["negative_slope"] or c["threshold"] or c["max_value"] not in (None, 6.0):
                raise ValueError("ReLU other than relu and relu6 is not one of the zoo's")
            modules.append(nn.ReLU() if c["max_value"] is None else nn.ReLU6())
        elif kind == "RandomFlip":
            if c["mode"] != "horizontal":
                raise ValueError(f"RandomFlip mode {c['mode']} is not one of the zoo's")
            modules.append(RandomFlip())
        elif kind == "RandomTranslation":
            if c["fill_mode"] != "constant" or c["fill_value"] != 0:
                raise ValueError("RandomTranslation other than zero fill is not one of the zoo's")
            modules.append(RandomTranslation(c["height_factor"], c["width_factor"]))
        elif kind == "BatchNormalization":
            # torch's momentum weighs the new batch (Keras' 1 - momentum); eval uses the
            # running (biased-variance in Keras, unbiased in torch) statistics.
            norm = nn.BatchNorm2d if len(shape) == 3 else nn.BatchNorm1d
            modules.append(norm(shape[-1], eps=c["epsilon"], momentum=1 - c["momentum"],
                                affine=c["scale"] or c["center"]))
        return modules

    class Graph(nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = nn.ModuleDict()
            for name, kind, c, _, (shape, *_), _ in calls:
                modules = layer_module(kind, c, shape)
                activation = c.get("activation", "linear")
                if activation != "linear" and not (name == output and activation == "softmax"):
                    modules.append(activations[activation]())
                self.calls[name] = nn.Sequential(*modules)

        def forward(self, x):
            images = x.dim() == 4
            values = {input_name: x.permute(0, 3, 1, 2) if images else x}
            for name, kind, _, reads, _, _ in calls:
                inputs = [values[read] for read in reads]
                if kind == "Flatten" and inputs[0].dim() == 4:
                    inputs[0] = inputs[0].permute(0, 2, 3, 1)
                if kind == "Add":
                    value = sum(inputs[1:], inputs[0])
                elif kind == "Concatenate":
                    value = torch.cat(inputs, 1)  # channels: dim 1 of NCHW, or of (N, features)
                elif kind == "GlobalAveragePooling2D":
                    value = inputs[0].mean((2, 3))
                else:
                    value = inputs[0]
                values[name] = self.calls[name](value)
            return values[output]

    return Graph()


def data(quick):
    from fixture_common import fashion_mnist
    (x, y), (x_test, y_test) = fashion_mnist()
    if quick:
        return (x[:QUICK_TRAIN], y[:QUICK_TRAIN]), (x_test[:QUICK_VALIDATION],
                                                    y_test[:QUICK_VALIDATION])
    return (x, y), (x_test, y_test)


def run_tenfold(args):
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
    with tempfile.TemporaryDirectory() as directory:
        history = os.path.join(directory, "history.json")
        # Adam(1e-3) as the other frameworks, whatever a model file's compile config says. The
        # second epoch's wall time, validation included, as the Keras run's EpochTimer takes it
        # (the difference of a 2-epoch and a 1-epoch run's wall times was off by up to 3x here:
        # two processes' start-up on a noisy machine).
        _, _, rss = run([args.tenfold, "train", "--model", args.model, "--optimizer", "adam",
                         "--epochs", str(args.epochs), "--batch-size", str(BATCH), "--verbose",
                         "2", "--history", history, "--seed", str(args.seed)], env)
        logged = load(history)
    return {"framework": "tenfold", "version": "tenfold (this tree)",
            "epoch_seconds": logged["epoch_seconds"][-1],
            "train_samples": 60000, "validation_samples": 10000,
            "val_accuracy": logged["history"]["val_accuracy"][0], "peak_rss_mib": rss}


def run_keras(args):
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    os.environ["KERAS_BACKEND"] = "tensorflow"
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(THREADS)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import keras
    keras.utils.set_random_seed(args.seed)
    (x, y), (x_test, y_test) = data(args.quick)
    with open(args.model) as f:
        model = keras.models.model_from_json(f.read())
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    train = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(10000).batch(BATCH)
             .prefetch(tf.data.AUTOTUNE))
    validation = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(BATCH)
    times = []

    class EpochTimer(keras.callbacks.Callback):  # Keras 3 ends an epoch after its validation
        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            times.append(time.perf_counter() - self.start)

    history = model.fit(train, epochs=args.epochs, validation_data=validation, verbose=0,
                        callbacks=[EpochTimer()])
    return {"framework": "keras", "version": f"keras {keras.__version__}, tensorflow "
            f"{tf.__version__}", "epoch_seconds": times[-1], "train_samples": len(x),
            "validation_samples": len(x_test),
            "val_accuracy": history.history["val_accuracy"][0]}


def run_torch(args):
    import numpy as np
    import torch
    torch.set_num_threads(THREADS)
    torch.manual_seed(args.seed)
    (x, y), (x_test, y_test) = data(args.quick)
    x, x_test = torch.from_numpy(x), torch.from_numpy(x_test)
    y, y_test = torch.from_numpy(y.astype(np.int64)), torch.from_numpy(y_test.astype(np.int64))
    model = torch_model(load(args.model))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = torch.nn.CrossEntropyLoss()

    def epoch():
        """Trains one epoch, validates, returns the validation accuracy."""
        model.train()
        order = torch.randperm(len(x))
        for start in range(0, len(x), BATCH):
            batch = order[start:start + BATCH]
            optimizer.zero_grad()
            loss_fn(model(x[batch]), y[batch]).backward()
            optimizer.step()
        model.eval()
        correct = 0
        with torch.no_grad():
            for start in range(0, len(x_test), BATCH):
                predictions = model(x_test[start:start + BATCH]).argmax(1)
                correct += (predictions == y_test[start:start + BATCH]).sum().item()
        return correct / len(x_test)

    accuracies, times = [], []
    for _ in range(args.epochs):
        start = time.perf_counter()
        accuracies.append(epoch())
        times.append(time.perf_counter() - start)
    return {"framework": "pytorch", "version": f"torch {torch.__version__}",
            "epoch_seconds": times[-1], "train_samples": len(x),
            "validation_samples": len(x_test), "val_accuracy": accuracies[0]}


def peak(tenfold):
    """(GFLOP/s, what measured it): tenfold-bench-peak next to the tenfold binary (a 2048^3
    oneDNN f32 matmul), or else the best of 5 torch.matmul of the same size."""
    binary = os.path.join(os.path.dirname(tenfold), "tenfold-bench-peak")
    if os.path.exists(binary):
        out, _, _ = run([binary], dict(os.environ, OMP_NUM_THREADS=str(THREADS)))
        line = out.strip().splitlines()[-1]
        return json.loads(line)["gflops"], f"tenfold-bench-peak {line}"
    import torch
    torch.set_num_threads(THREADS)
    a, b = torch.rand(2048, 2048), torch.rand(2048, 2048)
    best = math.inf
    for _ in range(5):
        start = time.perf_counter()
        torch.matmul(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * 2048 ** 3 / best / 1e9, f"torch matmul (torch {torch.__version__})"


def arena(tenfold, path):
    """The compiled training step's arena at the per-replica batch `tenfold train` uses: one
    replica per core."""
    out = subprocess.run([tenfold, "summary", path, "--batch-size", str(BATCH // THREADS)],
                         check=True, capture_output=True, text=True).stdout
    match = re.search(r"arena ([0-9.]+ \w+)", out)
    return match.group(1) if match else "n/a"


def summarize(runs, training_flops, forward_flops):
    """Best and median samples/s over the rounds, median val_accuracy, highest peak RSS, and for
    the best round the GFLOP/s."""
    speeds = [r["train_samples"] / r["epoch_seconds"] for r in runs]
    fastest = min(runs, key=lambda r: r["epoch_seconds"])
    epoch_flops = (fastest["train_samples"] * training_flops
                   + fastest["validation_samples"] * forward_flops)
    return {"best": max(speeds), "median": statistics.median(speeds),
            "val_accuracy": statistics.median(r["val_accuracy"] for r in runs),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
            "gflops": epoch_flops / fastest["epoch_seconds"] / 1e9}


def cell(value, spec, width):
    return f"{'-' if value is None else format(value, spec):>{width}}"


def print_tables(models, peak_gflops):
    def get(model, framework, key):
        summary = model["summary"].get(framework)
        return summary[key] if summary else None

    def ratio(a, b):
        return a / b if a and b else None

    print(f"\n{'':16} {'MFLOP/':>7} {'tenfold':>15} {'keras':>15} {'pytorch':>15}"
          f" {'tenfold / ...':>20} {'tenfold':>13}")
    print(f"{'model':16} {'sample':>7}" + f" {'best':>7} {'median':>7}" * 3
          + f" {'keras':>6} {'torch':>6} {'max':>6} {'GFLOP/s':>7} {'%peak':>5}")
    for name, model in models.items():
        tenfold, keras, torch = (get(model, f, "best") for f in FRAMEWORKS)
        gflops = get(model, "tenfold", "gflops")
        row = f"{name:16} {model['training_flops'] / 1e6:7.1f}"
        for framework in FRAMEWORKS:
            row += "".join(cell(get(model, framework, key), ".0f", 8) for key in ("best", "median"))
        others = max(keras or 0, torch or 0)
        row += "".join(cell(ratio(tenfold, other), ".2f", 7) for other in (keras, torch, others))
        row += cell(gflops, ".1f", 8) + cell(gflops and 100 * gflops / peak_gflops, ".0f", 6)
        print(row)

    print(f"\n{'val_accuracy after epoch 1':26}")
    print(f"{'model':16} {'tenfold':>8} {'keras':>8} {'pytorch':>8} {'|t - k|':>8}")
    for name, model in models.items():
        tenfold, keras, torch = (get(model, f, "val_accuracy") for f in FRAMEWORKS)
        gap = abs(tenfold - keras) if tenfold is not None and keras is not None else None
        print(f"{name:16}" + "".join(cell(v, ".4f", 9) for v in (tenfold, keras, torch, gap)))

    print(f"\n{'memory (MiB)':16} {'tenfold':>12} {'peak RSS':>28}")
    print(f"{'model':16} {'arena':>12} {'tenfold':>9} {'keras':>9} {'pytorch':>9}")
    for name, model in models.items():
        print(f"{name:16} {model['arena']:>12}"
              + "".join(cell(get(model, f, "peak_rss_mib"), ".0f", 10) for f in FRAMEWORKS))


def compare_accuracies(args, names):
    """Per model, one epoch with seeds 1..N in Tenfold and Keras: the mean and standard deviation
    of each one's validation accuracy, and the gap of the means against 0.01 and against the
    seeds' spread (the standard error of that difference)."""
    frameworks = ("tenfold", "keras")
    rows = {}
    for name in names:
        path = os.path.join(ZOO, name + ".json")
        accuracies = {framework: [] for framework in frameworks}
        for seed in range(1, args.accuracy_seeds + 1):
            for framework in frameworks:
                command = [sys.executable, __file__, "--only", framework, "--model", path,
                           "--tenfold", args.tenfold, "--epochs", "1", "--seed", str(seed)]
                out, _, _ = run(command)
                accuracy = json.loads(out.strip().splitlines()[-1])["val_accuracy"]
                accuracies[framework].append(accuracy)
                print(f"{name:16} {framework:8} seed {seed}: {accuracy:.4f}", flush=True)
        rows[name] = accuracies

    print(f"\nval_accuracy after one epoch, seeds 1..{args.accuracy_seeds}: mean (standard "
          f"deviation); gap = tenfold - keras, its standard error from the seeds' spread")
    print(f"command: {shlex.join([sys.executable] + sys.argv)}")
    print(f"{'model':16} {'tenfold':>16} {'keras':>16} {'gap':>8} {'stderr':>7}")
    for name, accuracies in rows.items():
        means = {f: statistics.mean(values) for f, values in accuracies.items()}
        spreads = {f: statistics.stdev(values) if len(values) > 1 else 0.0
                   for f, values in accuracies.items()}
        stderr = math.sqrt(sum(spreads[f] ** 2 / len(accuracies[f]) for f in frameworks))
        print(f"{name:16}" + "".join(f" {means[f]:8.4f} ({spreads[f]:.4f})" for f in frameworks)
              + f" {means['tenfold'] - means['keras']:+8.4f} {stderr:7.4f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": shlex.join([sys.executable] + sys.argv), "val_accuracy": rows},
                      f, indent=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tenfold", default="build/tenfold")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--models", help="comma-separated names in bench/zoo (default: all)")
    parser.add_argument("--only", choices=FRAMEWORKS)
    parser.add_argument("--model", help="with --only: the model's JSON file")
    parser.add_argument("--quick", action="store_true",
                        help=f"Keras and PyTorch on the first {QUICK_TRAIN} training and "
                        f"{QUICK_VALIDATION} test samples; Tenfold (full data) for mlp only")
    parser.add_argument("--json", help="write all results there")
    parser.add_argument("--accuracy-seeds", type=int,
                        help="compare one-epoch validation accuracies over seeds 1..N instead")
    parser.add_argument("--epochs", type=int, default=2, help="with --only")
    parser.add_argument("--seed", type=int, default=1, help="with --only")
    args = parser.parse_args()
    runners = {"tenfold": run_tenfold, "keras": run_keras, "pytorch": run_torch}
    if args.only:
        print(json.dumps(runners[args.only](args)))
        return
    names = (args.models.split(",") if args.models else
             sorted(f[:-5] for f in os.listdir(ZOO) if f.endswith(".json")))
    command_line = shlex.join([sys.executable] + sys.argv)
    print(command_line)
    if args.accuracy_seeds:
        compare_accuracies(args, names)
        return
    peak_gflops, peak_source = peak(args.tenfold)
    models = {}
    for name in names:
        path = os.path.join(ZOO, name + ".json")
        training_flops, forward_flops = flops(load(path))
        models[name] = {"path": path, "training_flops": training_flops,
                        "forward_flops": forward_flops, "arena": arena(args.tenfold, path),
                        "runs": {}}
    for round_ in range(args.rounds):
        for name, model in models.items():
            for framework in FRAMEWORKS:
                if args.quick and framework == "tenfold" and name != "mlp":
                    continue
                command = [sys.executable, __file__, "--only", framework, "--model",
                           model["path"], "--tenfold", args.tenfold] + ["--quick"] * args.quick
                env = dict(os.environ, **(TUNED_MALLOC if framework == "pytorch" else {}))
                out, _, rss = run(command, env)
                result = json.loads(out.strip().splitlines()[-1])
                result.setdefault("peak_rss_mib", rss)  # Tenfold's child gives its binary's
                model["runs"].setdefault(framework, []).append(result)
                print(f"round {round_ + 1}/{args.rounds} {name:16} {framework:8} "
                      f"{result['train_samples'] / result['epoch_seconds']:8.0f} samples/s",
                      flush=True)
    versions = {}
    for model in models.values():
        model["summary"] = {framework: summarize(runs, model["training_flops"],
                                                 model["forward_flops"])
                            for framework, runs in model["runs"].items()}
        versions.update((f, runs[0]["version"]) for f, runs in model["runs"].items())

    print(f"\nModel zoo, Fashion-MNIST, batch {BATCH}, {THREADS} threads, Adam; samples/s of an "
          f"epoch with its validation, best and median of {args.rounds} rounds")
    if args.quick:
        print(f"QUICK: Keras and PyTorch on {QUICK_TRAIN} training / {QUICK_VALIDATION} test "
              "samples, Tenfold on the full data and for mlp only: not comparable")
    print(f"command: {command_line}")
    print("versions: " + "; ".join(versions.values()))
    print(f"peak: {peak_gflops:.1f} GFLOP/s, 2048^3 f32 matmul on {THREADS} threads, "
          f"{peak_source}")
    print_tables(models, peak_gflops)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": command_line, "quick": args.quick, "rounds": args.rounds,
                       "versions": versions,
                       "peak": {"gflops": peak_gflops, "source": peak_source},
                       "models": models}, f, indent=1)


if __name__ == "__main__":
    main()
