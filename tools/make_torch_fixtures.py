"""Writes tests/fixtures/torch/: forward outputs and backward gradients of each layer and loss,
computed by PyTorch (from PyPI) in float64 on small random inputs, in Keras layouts (NHWC
activations, HWIO convolution kernels, (in, units) dense kernels).

Run: make fixtures   (or: python3 tools/make_torch_fixtures.py)"""
import json
import os
import shutil

import numpy as np
import torch
import torch.nn.functional as F

from fixture_common import FIXTURES, save

OUT = os.path.join(FIXTURES, "torch")
rng = np.random.default_rng(20261202)
torch.set_default_dtype(torch.float64)


def tensor(array):
    return torch.tensor(array, dtype=torch.float64, requires_grad=True)


def activation(name, x):
    return {"linear": lambda t: t, "relu": F.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
            "softmax": lambda t: F.softmax(t, dim=-1)}[name](x)


def same_padding(size, window, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def pad_nchw(x, padding, window, stride, value=0.0):
    top, bottom = same_padding(x.shape[2], window[0], stride[0]) if padding == "same" else (0, 0)
    left, right = same_padding(x.shape[3], window[1], stride[1]) if padding == "same" else (0, 0)
    return F.pad(x, (left, right, top, bottom), value=value)


cases = []


def record(name, kind, params, arrays):
    directory = os.path.join(OUT, name)
    for key, value in arrays.items():
        save(directory, key, value.detach().numpy() if torch.is_tensor(value) else value)
    cases.append({"name": name, "kind": kind, **params})


def conv2d_case(name, batch, size, channels, filters, kernel, strides, padding, act):
    x = tensor(rng.standard_normal((batch, size[0], size[1], channels)))
    w = tensor(rng.standard_normal((kernel[0], kernel[1], channels, filters)) * 0.3)
    b = tensor(rng.standard_normal(filters) * 0.1)
    x_nchw = pad_nchw(x.permute(0, 3, 1, 2), padding, kernel, strides)
    y = F.conv2d(x_nchw, w.permute(3, 2, 0, 1), b, stride=strides)
    y = activation(act, y.permute(0, 2, 3, 1) if act != "softmax" else y.permute(0, 2, 3, 1))
    dy = torch.tensor(rng.standard_normal(tuple(y.shape)))
    y.backward(dy)
    record(name, "conv2d", {"filters": filters, "kernel_size": kernel, "strides": strides,
                            "padding": padding, "activation": act},
           {"x": x, "kernel": w, "bias": b, "y": y, "dy": dy, "dx": x.grad, "dkernel": w.grad,
            "dbias": b.grad})


def pool_case(name, kind, batch, size, channels, pool, strides, padding):
    x = tensor(rng.standard_normal((batch, size[0], size[1], channels)))
    x_nchw = x.permute(0, 3, 1, 2)
    if kind == "max":
        y = F.max_pool2d(pad_nchw(x_nchw, padding, pool, strides, -float("inf")), pool, strides)
    else:  # TensorFlow's average excludes padding: sum of values / number of real pixels
        total = F.avg_pool2d(pad_nchw(x_nchw, padding, pool, strides), pool, strides)
        ones = pad_nchw(torch.ones_like(x_nchw), padding, pool, strides)
        y = total / F.avg_pool2d(ones, pool, strides)
    y = y.permute(0, 2, 3, 1)
    dy = torch.tensor(rng.standard_normal(tuple(y.shape)))
    y.backward(dy)
    record(name, kind + "_pooling2d", {"pool_size": pool, "strides": strides, "padding": padding},
           {"x": x, "y": y, "dy": dy, "dx": x.grad})


def dense_case(name, batch, inputs, units, act):
    x = tensor(rng.standard_normal((batch, inputs)))
    w = tensor(rng.standard_normal((inputs, units)) * 0.3)
    b = tensor(rng.standard_normal(units) * 0.1)
    y = activation(act, x @ w + b)
    dy = torch.tensor(rng.standard_normal(tuple(y.shape)))
    y.backward(dy)
    record(name, "dense", {"units": units, "activation": act},
           {"x": x, "kernel": w, "bias": b, "y": y, "dy": dy, "dx": x.grad, "dkernel": w.grad,
            "dbias": b.grad})


def activation_case(name, act, shape):
    x = tensor(rng.standard_normal(shape) * 2)
    y = activation(act, x)
    dy = torch.tensor(rng.standard_normal(shape))
    y.backward(dy)
    record(name, "activation", {"activation": act}, {"x": x, "y": y, "dy": dy, "dx": x.grad})


def loss_case(name, loss, from_logits, batch, classes):
    logits = rng.standard_normal((batch, classes)) * 2
    labels = rng.integers(0, classes, batch)
    if loss == "mean_squared_error":
        pred = tensor(rng.standard_normal((batch, classes)))
        target = rng.standard_normal((batch, classes))
        value = ((pred - torch.tensor(target)) ** 2).mean(dim=-1).mean()
        y_true = target
    else:
        pred = tensor(logits if from_logits else F.softmax(torch.tensor(logits), -1).numpy())
        log_probs = F.log_softmax(pred, -1) if from_logits else torch.log(
            pred.clamp(1e-7, 1 - 1e-7) / pred.clamp(1e-7, 1 - 1e-7).sum(-1, keepdim=True))
        if loss == "sparse_categorical_crossentropy":
            value = -log_probs[torch.arange(batch), torch.tensor(labels)].mean()
            y_true = labels
        else:
            one_hot = np.eye(classes)[labels]
            value = -(torch.tensor(one_hot) * log_probs).sum(-1).mean()
            y_true = one_hot
    value.backward()
    record(name, "loss", {"loss": loss, "from_logits": from_logits},
           {"y_pred": pred, "y_true": y_true.astype(np.float64), "loss": np.array([value.item()]),
            "dy_pred": pred.grad})


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    conv2d_case("conv2d_valid_relu", 2, (7, 6), 3, 4, (3, 3), (1, 1), "valid", "relu")
    conv2d_case("conv2d_same_stride2_linear", 2, (7, 8), 2, 5, (3, 3), (2, 2), "same", "linear")
    conv2d_case("conv2d_same_5x3_tanh", 1, (6, 5), 2, 3, (5, 3), (1, 1), "same", "tanh")
    conv2d_case("conv2d_valid_sigmoid_1ch", 3, (8, 8), 1, 8, (3, 3), (1, 2), "valid", "sigmoid")
    pool_case("max_pooling2d_valid", "max", 2, (6, 7), 3, (2, 2), (2, 2), "valid")
    pool_case("max_pooling2d_same_3x3_s2", "max", 2, (7, 7), 2, (3, 3), (2, 2), "same")
    pool_case("average_pooling2d_valid", "average", 2, (6, 6), 3, (2, 2), (2, 2), "valid")
    pool_case("average_pooling2d_same", "average", 2, (5, 7), 2, (2, 2), (2, 2), "same")
    dense_case("dense_relu", 4, 7, 5, "relu")
    dense_case("dense_softmax", 3, 6, 4, "softmax")
    dense_case("dense_linear", 5, 3, 2, "linear")
    for act in ("relu", "sigmoid", "tanh", "softmax"):
        activation_case("activation_" + act, act, (3, 5))
    for loss in ("sparse_categorical_crossentropy", "categorical_crossentropy"):
        for from_logits in (False, True):
            loss_case(f"{loss}_{'logits' if from_logits else 'probs'}", loss, from_logits, 6, 5)
    loss_case("mean_squared_error", "mean_squared_error", False, 4, 3)
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump({"torch_version": torch.__version__, "cases": cases}, f, indent=1)
    print(f"wrote {len(cases)} cases to {OUT} with torch {torch.__version__}")


if __name__ == "__main__":
    main()
