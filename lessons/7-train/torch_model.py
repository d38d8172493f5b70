#!/usr/bin/env python3
"""torch_model.py - lesson 7's transformer in PyTorch, op for op, for two uses:

- tests/golden/generate.py builds it from the C model's initial weights and writes what
  PyTorch computes (logits, loss, every gradient, AdamW steps) for lesson 7's tests;
- `make lesson7 bench` runs it as a program to time one training step on one thread:
      torch_model.py BATCH CONTEXT WIDTH HEADS LAYERS MLP STEPS
  prints "torch_step_ms BEST MEDIAN" (of STEPS timed steps, after 5 untimed ones), then
  "torch_version V" and "torch_blas NAME PATH", the BLAS it ran on (OpenBLAS, MKL,
  reference, ...).

The model is the one in train.c: pre-norm blocks of causal self-attention (no bias on q, k, v)
and a GELU (tanh) MLP, a final layer norm and a linear head; AdamW with weight decay on the
matrices only.
"""
import math
import sys
import time

import torch
import torch.nn.functional as F

PARAM_ORDER = ["ln1_gain", "ln1_bias", "wq", "wk", "wv", "wo", "bo", "ln2_gain", "ln2_bias",
               "w_up", "b_up", "w_down", "b_down"]


def param_shapes(vocab, context, width, heads, layers, mlp):
    """(name, shape) of every parameter, in the order of train.c's model_init."""
    shapes = [("token_table", (vocab, width)), ("position_table", (context, width))]
    block = {"ln1_gain": (width,), "ln1_bias": (width,), "wq": (width, width), "wk": (width, width),
             "wv": (width, width), "wo": (width, width), "bo": (width,), "ln2_gain": (width,),
             "ln2_bias": (width,), "w_up": (width, mlp), "b_up": (mlp,), "w_down": (mlp, width),
             "b_down": (width,)}
    for layer in range(layers):
        shapes += [("block%d.%s" % (layer, name), block[name]) for name in PARAM_ORDER]
    shapes += [("lnf_gain", (width,)), ("lnf_bias", (width,)), ("head_w", (width, vocab)),
               ("head_b", (vocab,))]
    return shapes


def init_params(config, seed):
    """PyTorch's own initial values with train.c's scheme (normal 0.02; residual projections
    0.02/sqrt(2 layers); biases 0, gains 1). The golden tests give these to the C model."""
    vocab, context, width, heads, layers, mlp = config
    g = torch.Generator().manual_seed(seed)
    params = {}
    for name, shape in param_shapes(*config):
        base = name.split(".")[-1]
        if base.endswith("gain"):
            value = torch.ones(shape)
        elif len(shape) == 1:
            value = torch.zeros(shape)
        else:
            std = 0.02 / math.sqrt(2 * layers) if base in ("wo", "w_down") else 0.02
            value = torch.randn(shape, generator=g) * std
        params[name] = value.requires_grad_(True)
    return params


def logits_of(params, config, tokens):
    vocab, context, width, heads, layers, mlp = config
    b, t = tokens.shape
    x = params["token_table"][tokens] + params["position_table"][:t]
    mask = torch.full((t, t), float("-inf")).triu(1)
    for layer in range(layers):
        p = {name: params["block%d.%s" % (layer, name)] for name in PARAM_ORDER}
        h = F.layer_norm(x, (width,), p["ln1_gain"], p["ln1_bias"], 1e-5)

        def heads_of(w):
            return (h @ w).reshape(b, t, heads, width // heads).permute(0, 2, 1, 3)

        q, k, v = heads_of(p["wq"]), heads_of(p["wk"]), heads_of(p["wv"])
        scores = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(width // heads)) + mask
        y = torch.softmax(scores, dim=-1) @ v
        y = y.permute(0, 2, 1, 3).reshape(b, t, width)
        x = x + (y @ p["wo"] + p["bo"])
        h = F.layer_norm(x, (width,), p["ln2_gain"], p["ln2_bias"], 1e-5)
        h = F.gelu(h @ p["w_up"] + p["b_up"], approximate="tanh") @ p["w_down"] + p["b_down"]
        x = x + h
    x = F.layer_norm(x, (width,), params["lnf_gain"], params["lnf_bias"], 1e-5)
    return x @ params["head_w"] + params["head_b"]


def loss_of(params, config, tokens, targets):
    logits = logits_of(params, config, tokens)
    return F.cross_entropy(logits.reshape(-1, config[0]), targets.reshape(-1)), logits


def optimizer(params, lr, beta1, beta2, eps, weight_decay):
    """AdamW with decay on the matrices only, as model_adamw_step does."""
    decay = [p for p in params.values() if p.dim() == 2]
    rest = [p for p in params.values() if p.dim() != 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                              {"params": rest, "weight_decay": 0.0}],
                             lr=lr, betas=(beta1, beta2), eps=eps)


def blas_in_use():
    """The BLAS this PyTorch computes with, and where it was found: the library mapped into
    this process (Debian's python3-torch links libblas.so.3, which is OpenBLAS or the
    reference BLAS, whichever the system's alternatives point to)."""
    config = torch.__config__.show()
    if "BLAS_INFO=mkl" in config:
        return "MKL", "torch.__config__"
    if "BLAS_INFO=accelerate" in config:
        return "Accelerate", "torch.__config__"
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if "/" in line})
    except OSError:
        return "unknown", "-"
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        if "openblas" in path:
            return "OpenBLAS", path
        if name.startswith("libmkl"):
            return "MKL", path
        if name.startswith("libblis") or "/blis" in path:
            return "BLIS", path
        if "/atlas/" in path:
            return "ATLAS", path
        if name.startswith("libblas.so") and "/blas/" in path:  # Debian's netlib build
            return "reference", path
    return "unknown", "-"


def main(argv):
    if len(argv) != 8:
        sys.exit("usage: torch_model.py BATCH CONTEXT WIDTH HEADS LAYERS MLP STEPS")
    batch, context, width, heads, layers, mlp, steps = (int(a) for a in argv[1:])
    torch.set_num_threads(1)
    config = (27, context, width, heads, layers, mlp)
    params = init_params(config, 1)
    opt = optimizer(params, 1e-3, 0.9, 0.99, 1e-8, 0.1)
    g = torch.Generator().manual_seed(2)
    times = []
    for step in range(steps + 5):
        tokens = torch.randint(0, 27, (batch, context), generator=g)
        targets = torch.randint(0, 27, (batch, context), generator=g)
        start = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        loss, _ = loss_of(params, config, tokens, targets)
        loss.backward()
        opt.step()
        if step >= 5:
            times.append(time.perf_counter() - start)
    times.sort()
    print("torch_step_ms %.4f %.4f" % (1e3 * times[0], 1e3 * times[len(times) // 2]))
    print("torch_version %s" % torch.__version__)
    print("torch_blas %s %s" % blas_in_use())


if __name__ == "__main__":
    main(sys.argv)
